package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.privface.agent.AgentPipeline;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * The scene tests' gateway: one agent (YuNet, the EMBEDDING sign-cap release, policy {@code once})
 * reading image folders as MJPEG cameras {@code cam0}, {@code cam1}, … against a real broker, until
 * every camera has read a number of frames; then it drains and stops.
 */
final class SceneAgent {
    static final String TOKEN = "scene-test-token";

    private SceneAgent() {
    }

    /**
     * Runs the agent; {@code urls} gets each camera's feed URL (the origin ledger's frame origins
     * start with it).
     *
     * @param extra more agent properties (linking settings)
     * @return the status report's {@code linking} section at the end
     */
    static Map<String, Object> run(String bootstrap, Path work, String site, List<Path> folders, int fps, long frames,
                                   Path ledger, double epsilon, Map<String, Object> extra, List<String> urls) throws Exception {
        Map<String, Object> props = new HashMap<>(extra);
        props.put("agent.site-id", site);
        props.put("agent.gateway-id", site + "-gw");
        props.put("agent.data-dir", Files.createDirectories(work.resolve(site + "-data")).toString());
        props.put("agent.ledger", ledger.toString());
        props.put("agent.epsilon", epsilon);
        props.put("agent.budget", "once");
        Map<String, Object> status = runGateway(bootstrap, props, folders, fps, frames, urls);
        @SuppressWarnings("unchecked")
        Map<String, Object> linking = new LinkedHashMap<>((Map<String, Object>) status.get("linking"));
        // The exact counts and the person spend are the authenticated REST status's own (issue 33).
        if (FaultKit.at(status, "local.linking") instanceof Map<?, ?> exact) {
            exact.forEach((k, v) -> linking.put(String.valueOf(k), v));
        }
        return linking;
    }

    /**
     * Runs one gateway of the deep stack (YuNet, the embedding mechanism) in this JVM over MJPEG feeds
     * of {@code folders}, one camera each, until every camera read {@code frames} frames, its
     * releases settled and its spool drained; returns its authenticated REST status. {@code props}
     * give the site ({@code agent.site-id}, whose topics it applies), gateway, data directory, origin
     * ledger, ε, budget and linking; {@code urls} gets each camera's feed URL.
     */
    static Map<String, Object> runGateway(String bootstrap, Map<String, Object> props, List<Path> folders, int fps,
                                          long frames, List<String> urls) throws Exception {
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            new TopicApplier(admin).apply(Topics.definitions(List.of(String.valueOf(props.get("agent.site-id")))));
        }
        List<MjpegFeed> feeds = new ArrayList<>();
        ApplicationContext ctx = null;
        try {
            Map<String, Object> all = new HashMap<>(props);
            all.put("kafka.bootstrap.servers", bootstrap);
            all.put("micronaut.server.port", -1);
            all.put("micronaut.server.host", "127.0.0.1");
            all.put("agent.publish-enrollments", false);
            all.put("agent.detector", "yunet");
            all.put("agent.mechanism", "embedding");
            all.put("agent.sensitivity-mode", "sign-cap");
            all.put("agent.control.token", TOKEN);
            for (int c = 0; c < folders.size(); c++) {
                MjpegFeed f = new MjpegFeed(folders.get(c), fps);
                feeds.add(f);
                urls.add(f.url());
                all.put("agent.cameras.cam" + c + ".url", f.url());
            }
            ctx = ApplicationContext.builder()
                    .classLoader(new BrokerOutageTest.HidingClassLoader(SceneAgent.class.getClassLoader(),
                            org.privface.recognizer.Application.class))
                    .properties(BrokerOutageTest.HidingClassLoader.agentAlone(all))
                    .start();
            ctx.getBean(EmbeddedServer.class).start();
            AgentPipeline pipeline = ctx.getBean(AgentPipeline.class);
            String base = "http://127.0.0.1:" + ctx.getBean(EmbeddedServer.class).getPort();
            FaultKit.awaitTrue("every camera read " + frames + " frames", Duration.ofSeconds(150), FaultKit.quietly(() -> {
                Map<String, Object> s = FaultKit.json(base + "/control/status", TOKEN);
                for (int c = 0; c < folders.size(); c++) {
                    if (FaultKit.number(s, "cameras.cam" + c + ".frames") < frames) {
                        return false;
                    }
                }
                return true;
            }));
            feeds.forEach(MjpegFeed::close);
            FaultKit.awaitStable("releases after the feeds ended", Duration.ofSeconds(20), pipeline::releases);
            assertTrue(pipeline.uplink().drain(Duration.ofSeconds(30)), "the spool drained");
            return FaultKit.json(base + "/control/status", TOKEN);
        } finally {
            feeds.forEach(MjpegFeed::close);
            if (ctx != null) {
                ctx.close();
            }
        }
    }

    /**
     * The origin ledger's eventId → origin (camera and frame index). Its lines are
     * {@code eventId,origin,labelled|other} (the agent's {@code OriginLog}; the origin's own commas
     * are written as {@code _}), or {@code eventId,origin} in ledgers from before the third column.
     */
    static Map<String, String> origins(Path ledger) throws Exception {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : Files.readAllLines(ledger)) {
            String[] f = line.split(",");
            if (f.length >= 2 && !f[0].isEmpty()) {
                out.put(f[0], f[1]);
            }
        }
        return out;
    }
}
