package org.privface.agent;

import io.micronaut.context.annotation.Context;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * Puts the gateway's site and name into logback's context at start-up, so that every log line in
 * JSON (AGENT_LOG_FORMAT=json) carries them; a camera's threads add the camera to the MDC
 * (CameraSupervisor). A fleet's log store can then filter by site, gateway and camera.
 */
@Context
public class LogContext {
    public LogContext(AgentSettings settings) {
        label(settings.getSiteId(), settings.getGatewayId());
    }

    static void label(String site, String gateway) {
        ILoggerFactory f = LoggerFactory.getILoggerFactory();
        // By name: where another slf4j binding runs the agent in-process (the local-stack tests use
        // slf4j-simple and exclude logback), logback's classes are absent and must not be loaded.
        if (f.getClass().getName().equals("ch.qos.logback.classic.LoggerContext")) {
            Logback.label(f, site, gateway);
        }
    }

    /** Loaded only when logback is the binding. */
    private static final class Logback {
        static void label(ILoggerFactory f, String site, String gateway) {
            ch.qos.logback.classic.LoggerContext ctx = (ch.qos.logback.classic.LoggerContext) f;
            ctx.putProperty("site", site == null ? "" : site);
            ctx.putProperty("gateway", gateway == null ? "" : gateway);
        }
    }
}
