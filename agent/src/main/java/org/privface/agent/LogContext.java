package org.privface.agent;

import ch.qos.logback.classic.LoggerContext;
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
        if (f instanceof LoggerContext ctx) {
            ctx.putProperty("site", site == null ? "" : site);
            ctx.putProperty("gateway", gateway == null ? "" : gateway);
        }
    }
}
