package org.privface.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/**
 * The agent's own logback.xml with AGENT_LOG_FORMAT=json writes one JSON object a line with the
 * time, level, message, site and gateway (context) and camera (MDC); without it, the text line.
 */
class JsonLogTest {
    private static String logWith(String format) throws Exception {
        PrintStream out = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        String old = System.getProperty("AGENT_LOG_FORMAT");
        LoggerContext ctx = new LoggerContext();
        ctx.setMDCAdapter(MDC.getMDCAdapter());
        try {
            System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
            if (format != null) {
                System.setProperty("AGENT_LOG_FORMAT", format);
            }
            ctx.putProperty("site", "north");
            ctx.putProperty("gateway", "gw-7");
            JoranConfigurator j = new JoranConfigurator();
            j.setContext(ctx);
            j.doConfigure(JsonLogTest.class.getResource("/logback.xml"));
            MDC.put("camera", "lobby");
            ctx.getLogger("org.privface.agent.Test").info("released {} faces", 3);
        } finally {
            MDC.remove("camera");
            ctx.stop();
            System.setOut(out);
            if (old == null) {
                System.clearProperty("AGENT_LOG_FORMAT");
            } else {
                System.setProperty("AGENT_LOG_FORMAT", old);
            }
        }
        return buf.toString(StandardCharsets.UTF_8).trim();
    }

    @Test
    void jsonLinesCarryTimeSiteGatewayAndCamera() throws Exception {
        String line = logWith("json");
        JsonNode n = new ObjectMapper().readTree(line);
        assertTrue(Math.abs(n.path("timestamp").asLong() - System.currentTimeMillis()) < 60_000, line);
        assertEquals("INFO", n.path("level").asText());
        assertEquals("released 3 faces", n.path("formattedMessage").asText());
        assertEquals(Map.of("site", "north", "gateway", "gw-7"),
                new ObjectMapper().convertValue(n.path("context").path("properties"), Map.class));
        assertEquals("lobby", n.path("mdc").path("camera").asText());
    }

    @Test
    void withoutTheSettingTheLineIsText() throws Exception {
        String line = logWith(null);
        assertTrue(line.matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  \\[agent\\] .* - released 3 faces"), line);
    }
}
