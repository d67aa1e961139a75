package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
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
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            new TopicApplier(admin).apply(Topics.definitions(List.of(site)));
        }
        List<MjpegFeed> feeds = new ArrayList<>();
        ApplicationContext ctx = null;
        try {
            Map<String, Object> props = new HashMap<>(extra);
            props.put("kafka.bootstrap.servers", bootstrap);
            props.put("micronaut.server.port", -1);
            props.put("micronaut.server.host", "127.0.0.1");
            props.put("agent.site-id", site);
            props.put("agent.gateway-id", site + "-gw");
            props.put("agent.publish-enrollments", false);
            props.put("agent.data-dir", Files.createDirectories(work.resolve(site + "-data")).toString());
            props.put("agent.ledger", ledger.toString());
            props.put("agent.detector", "yunet");
            props.put("agent.mechanism", "embedding");
            props.put("agent.sensitivity-mode", "sign-cap");
            props.put("agent.epsilon", epsilon);
            props.put("agent.budget", "once");
            props.put("agent.control.token", TOKEN);
            for (int c = 0; c < folders.size(); c++) {
                MjpegFeed f = new MjpegFeed(folders.get(c), fps);
                feeds.add(f);
                urls.add(f.url());
                props.put("agent.cameras.cam" + c + ".url", f.url());
            }
            ctx = ApplicationContext.builder()
                    .classLoader(new BrokerOutageTest.HidingClassLoader(SceneAgent.class.getClassLoader(),
                            org.privface.recognizer.Application.class))
                    .properties(BrokerOutageTest.HidingClassLoader.agentAlone(props))
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
            @SuppressWarnings("unchecked")
            Map<String, Object> l = (Map<String, Object>) FaultKit.json(base + "/control/status", TOKEN).get("linking");
            return l;
        } finally {
            feeds.forEach(MjpegFeed::close);
            if (ctx != null) {
                ctx.close();
            }
        }
    }
}
