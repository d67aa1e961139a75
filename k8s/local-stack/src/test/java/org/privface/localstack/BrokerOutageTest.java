package org.privface.localstack;

import static org.privface.localstack.FaultKit.awaitStable;
import static org.privface.localstack.FaultKit.awaitTrue;
import static org.privface.localstack.FaultKit.deleteRecursively;
import static org.privface.localstack.FaultKit.keepLogs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.privface.agent.AgentPipeline;
import org.privface.agent.publish.DiskSpool;
import org.privface.broker.KafkaServerProcess;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * Issue 5's fault "the broker is stopped and restarted in the middle of a stream": a real Kafka
 * broker process, the agent in-process with one live HTTP MJPEG camera at 20 frames/s, and the
 * broker taken down for about 10 s and brought back on the same ports and data directory. While it
 * is down the agent keeps releasing and its disk spool grows; once it is back the spool drains, and
 * every release the agent made is on the query topic at least once, with nothing extra and nothing
 * dropped. Redelivery may duplicate records; the count is reported and the event id tells them apart.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BrokerOutageTest {
    static {
        // slf4j-simple reads these once, at its first logger: keep the clients' reconnect chatter out.
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient", "error");
    }

    private static final String SITE = "outage";
    private static final String CAMERA = "door";
    private static final String TOKEN = "outage-test-token";
    private static final int FPS = 20;
    private static final Duration BEFORE_OUTAGE = Duration.ofSeconds(5);
    private static final Duration OUTAGE = Duration.ofSeconds(10);
    private static final Duration AFTER_RESTART = Duration.ofSeconds(3);
    private static final Pattern NUMBER = Pattern.compile("\"(\\w+)\":(-?\\d+(?:\\.\\d+)?|true|false)");

    @Test
    void everyReleaseMadeWhileTheBrokerWasDownIsDeliveredAfterItsRestart() throws Exception {
        long t0 = System.nanoTime();
        Path root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        Path synthetic = root.resolve("test-data/synthetic");
        assumeTrue(Files.isDirectory(synthetic.resolve("query")) && Files.isDirectory(synthetic.resolve("enroll")),
                "no synthetic faces at " + synthetic);
        assumeBrokerJarsResolvable(root);

        Path work = Files.createTempDirectory("privface-outage-");
        KafkaServerProcess kafka = null;
        MjpegFeed feed = null;
        ApplicationContext ctx = null;
        boolean passed = false;
        try {
            long startAt = System.nanoTime();
            kafka = KafkaServerProcess.start(root, work);
            double firstStartSeconds = (System.nanoTime() - startAt) / 1e9;
            String bootstrap = kafka.bootstrapServers();
            Properties ap = new Properties();
            ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            try (Admin admin = Admin.create(ap)) {
                new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
            }

            feed = new MjpegFeed(synthetic.resolve("query"), FPS);
            Path ledger = work.resolve("ledger.csv");
            Map<String, Object> props = new HashMap<>();
            props.put("kafka.bootstrap.servers", bootstrap);
            props.put("micronaut.server.port", -1);
            props.put("micronaut.server.host", "127.0.0.1");
            props.put("agent.site-id", SITE);
            props.put("agent.gateway-id", "outage-test");
            props.put("agent.enroll-folder", synthetic.resolve("enroll").toString());
            props.put("agent.publish-enrollments", false);
            props.put("agent.cameras." + CAMERA + ".url", feed.url());
            props.put("agent.data-dir", work.resolve("agent-data").toString());
            props.put("agent.ledger", ledger.toString());
            // The looping frames put faces at similar places, so the IoU tracker sees long tracks: a
            // release on every frame at ε 2, under a track cap no 90 s run can reach.
            props.put("agent.budget", "every-n:n=1,epsilon=2");
            props.put("agent.epsilon", 100_000);
            // The pixel stack on the cascade (the shipped default is the deep stack): what this test was built on.
            props.put("agent.detector", "haar");
            props.put("agent.mechanism", "peep");
            props.put("agent.sensitivity-mode", "l1-clip");
            props.put("agent.floor.epsilon-max", 100_000);
            props.put("agent.control.token", TOKEN);
            props.put("endpoints.health.details-visible", "ANONYMOUS");
            ctx = ApplicationContext.builder()
                    .classLoader(new HidingClassLoader(BrokerOutageTest.class.getClassLoader(),
                            org.privface.recognizer.Application.class))
                    .properties(HidingClassLoader.agentAlone(props))
                    .start();
            assertFalse(ctx.containsBean(org.privface.recognizer.ingest.QueryWorker.class),
                    "the recognizer's beans stay out of the agent's context");
            EmbeddedServer http = ctx.getBean(EmbeddedServer.class);
            http.start(); // its ServerStartupEvent starts the pipeline, as in the real service
            AgentPipeline pipeline = ctx.getBean(AgentPipeline.class);
            assertTrue(assertTimeoutPreemptively(Duration.ofSeconds(60), pipeline::awaitCompletion),
                    "agent pipeline started its camera");
            String base = "http://127.0.0.1:" + http.getPort();
            DiskSpool spool = pipeline.uplink().spool();

            // 1. Streaming with the broker up.
            awaitTrue("the first acknowledged record", Duration.ofSeconds(45), () -> pipeline.published() > 0);
            Thread.sleep(BEFORE_OUTAGE.toMillis());
            long releasesBefore = pipeline.releases();
            long ackedBefore = pipeline.published();
            assertTrue(releasesBefore >= FPS, "a steady stream of releases before the outage: " + releasesBefore);
            assertTrue(ackedBefore > 0);

            // 2. The broker goes away; the camera keeps streaming.
            long stopAt = System.nanoTime();
            kafka.stop();
            assertFalse(kafka.running());
            double stopSeconds = (System.nanoTime() - stopAt) / 1e9;
            long depthAtStop = spool.depth();
            long releasesAtStop = pipeline.releases();
            long maxDepth = depthAtStop;
            long outageEnd = System.nanoTime() + OUTAGE.toNanos();
            Map<String, String> statusDuringOutage = null;
            while (System.nanoTime() < outageEnd) {
                maxDepth = Math.max(maxDepth, spool.depth());
                if (statusDuringOutage == null && System.nanoTime() > outageEnd - OUTAGE.toNanos() / 2) {
                    statusDuringOutage = status(base);
                }
                Thread.sleep(100);
            }
            long depthBeforeRestart = spool.depth();
            maxDepth = Math.max(maxDepth, depthBeforeRestart);
            long releasedWhileDown = pipeline.releases() - releasesAtStop;
            assertTrue(releasedWhileDown >= FPS * 2, "the agent kept releasing while the broker was down: "
                    + releasedWhileDown);
            assertTrue(depthBeforeRestart >= depthAtStop + FPS * 2, "the spool grew while the broker was down: "
                    + depthAtStop + " -> " + depthBeforeRestart);
            assertTrue(statusDuringOutage != null && Long.parseLong(statusDuringOutage.get("spoolDepth")) > 0,
                    "the gateway reports the backlog while the broker is down: " + statusDuringOutage);

            // 3. The broker comes back on the same ports and data; the backlog goes out.
            long restartAt = System.nanoTime();
            long ackedAtRestart = pipeline.published();
            kafka.restart();
            double restartSeconds = (System.nanoTime() - restartAt) / 1e9;
            awaitTrue("an acknowledgement after the restart", Duration.ofSeconds(45),
                    () -> pipeline.published() > ackedAtRestart);
            double firstAckAfterRestart = (System.nanoTime() - restartAt) / 1e9;
            awaitTrue("the backlog sent (under a second of records spooled)", Duration.ofSeconds(45),
                    () -> spool.depth() < FPS);
            double caughtUpAfter = (System.nanoTime() - restartAt) / 1e9;
            // Checked while the camera still streams: with it gone a gateway may rightly report itself degraded.
            HttpResponse<String> health = get(base + "/health");
            assertEquals(200, health.statusCode(), "health after recovery: " + health.body());
            Thread.sleep(AFTER_RESTART.toMillis());

            // 4. The camera goes away; every record made must be acknowledged.
            feed.close();
            awaitStable("releases after the camera went away", Duration.ofSeconds(20), pipeline::releases);
            assertTrue(pipeline.uplink().drain(Duration.ofSeconds(45)),
                    "the spool drained after the restart; " + spool.depth() + " records still spooled");
            double drainedAfter = (System.nanoTime() - restartAt) / 1e9;
            Map<String, String> statusAfter = status(base);
            assertEquals("0", statusAfter.get("spoolDepth"), statusAfter.toString());
            assertEquals("0", statusAfter.get("spoolDropped"), statusAfter.toString());
            assertEquals("0", statusAfter.get("droppedBySpool"), statusAfter.toString());
            assertEquals("true", statusAfter.get("brokerHealthy"), statusAfter.toString());

            long releases = pipeline.releases();
            long acknowledged = pipeline.published();
            long deliveryFailures = pipeline.uplink().failures();
            long dropped = spool.dropped();
            ctx.close(); // stops the camera thread, the uplink and the ledger (flushed on close)
            ctx = null;

            // 5. What the broker holds.
            List<String> made = Files.readAllLines(ledger).stream().filter(l -> !l.isBlank())
                    .map(l -> l.substring(0, l.indexOf(','))).toList();
            Map<String, Integer> onTopic = readQueryTopic(bootstrap, new HashSet<>(made), Duration.ofSeconds(30));
            long records = onTopic.values().stream().mapToLong(Integer::longValue).sum();
            long duplicates = records - onTopic.size();
            Set<String> missing = new LinkedHashSet<>(made);
            missing.removeAll(onTopic.keySet());
            Set<String> unknown = new LinkedHashSet<>(onTopic.keySet());
            made.forEach(unknown::remove);

            System.out.printf("broker outage: %d releases (%d before the outage, %d while the broker was down); "
                            + "first start took %.1f s, stop %.1f s, spool depth %d at the stop, %d before the restart, max %d; "
                            + "restart took %.1f s, first ack %.1f s, backlog sent %.1f s and spool drained %.1f s after it; "
                            + "%d acknowledged, %d delivery failures resent, %d dropped; %d records on the topic, "
                            + "%d distinct, %d duplicates; %.1f s in all%n",
                    releases, releasesBefore, releasedWhileDown, firstStartSeconds, stopSeconds, depthAtStop, depthBeforeRestart, maxDepth,
                    restartSeconds, firstAckAfterRestart, caughtUpAfter, drainedAfter, acknowledged, deliveryFailures, dropped,
                    records, onTopic.size(), duplicates, (System.nanoTime() - t0) / 1e9);

            assertEquals(0, dropped, "the spool dropped nothing");
            assertEquals(releases, made.size(), "the ledger lists every release");
            assertEquals(made.size(), new HashSet<>(made).size(), "one event id per release");
            assertTrue(missing.isEmpty(), missing.size() + " of " + made.size() + " releases never reached the broker, e.g. "
                    + missing.stream().limit(5).toList());
            assertTrue(unknown.isEmpty(), "records on the topic that the agent never made: " + unknown.size());
            assertEquals(releases, onTopic.size(), "after de-duplication by event id, one record per release");
            assertEquals(releases, acknowledged, "every spooled record acknowledged exactly once");
            passed = true;
        } finally {
            if (ctx != null) {
                ctx.close();
            }
            if (feed != null) {
                feed.close();
            }
            if (kafka != null) {
                kafka.close();
            }
            if (!passed) {
                keepLogs(work, root.resolve("k8s/local-stack/target/broker-outage-logs"));
            }
            deleteRecursively(work);
        }
    }

    /** Skips, with the reason, when broker-config/server's classpath file or a jar it lists is missing. */
    static void assumeBrokerJarsResolvable(Path root) throws IOException {
        Path cpFile = KafkaServerProcess.classpathFile(root);
        assumeTrue(Files.isRegularFile(cpFile), "no Kafka broker jars: " + cpFile
                + " is missing (build broker-config/server first: mvn install -pl broker-config/server)");
        String cp = Files.readString(cpFile).trim();
        List<String> absent = Stream.of(cp.split(Pattern.quote(File.pathSeparator)))
                .filter(p -> !p.isBlank() && !Files.exists(Path.of(p))).toList();
        assumeTrue(!cp.isEmpty() && absent.isEmpty(), "Kafka broker jars not resolvable: " + absent.size()
                + " listed in " + cpFile + " are missing, e.g. " + absent.stream().limit(3).toList());
    }

    /** Reads the site's query topic from the beginning to its end: event id to the number of copies. */
    private static Map<String, Integer> readQueryTopic(String bootstrap, Set<String> expected, Duration timeout) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        Map<String, Integer> copies = new HashMap<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            c.partitionsFor(Topics.query(SITE), Duration.ofSeconds(10))
                    .forEach(pi -> tps.add(new TopicPartition(pi.topic(), pi.partition())));
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps, Duration.ofSeconds(10));
            long deadline = System.nanoTime() + timeout.toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    PerturbedFace f = FaceRecords.decodeFace(r.value()); // validates the record
                    assertEquals(SITE, f.getSiteId());
                    assertEquals(CAMERA, f.getCameraId());
                    assertEquals(CAMERA, r.key(), "keyed by camera");
                    assertEquals(RecordKind.QUERY, f.getKind());
                    copies.merge(f.getEventId(), 1, Integer::sum);
                }
                if (tps.stream().allMatch(tp -> c.position(tp) >= end.get(tp))
                        && copies.keySet().containsAll(expected)) {
                    return copies;
                }
            }
        }
        return copies;
    }

    /** The gateway's report over its REST control API, flattened to its scalar fields. */
    private static Map<String, String> status(String base) throws IOException, InterruptedException {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base + "/control/status"))
                .header("Authorization", "Bearer " + TOKEN).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        Map<String, String> out = new HashMap<>();
        Matcher m = NUMBER.matcher(r.body());
        while (m.find()) {
            out.put(m.group(1), m.group(2));
        }
        return out;
    }

    private static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }





    /**
     * The local stack's classpath also carries the recognizer (the tests run it in-process), whose beans would
     * start with the agent's HTTP server and whose application.yml would compete with the agent's.
     * This loader hides that module's resources from Micronaut (bean definitions and configuration
     * are found as resources); classes still come from the parent, so the beans are the test's types.
     */
    static final class HidingClassLoader extends ClassLoader {
        private final String hidden;

        /**
         * The agent's properties, plus security off: the recognizer's micronaut-security jars are on
         * this test classpath, and the agent, which never ships them, checks its own bearer token.
         */
        static Map<String, Object> agentAlone(Map<String, Object> props) {
            Map<String, Object> m = new HashMap<>(props);
            m.put("micronaut.security.enabled", false);
            return m;
        }

        HidingClassLoader(ClassLoader parent, Class<?> fromHiddenModule) {
            super(parent);
            URL location = fromHiddenModule.getProtectionDomain().getCodeSource().getLocation();
            this.hidden = location.getPath();
        }

        @Override
        public Enumeration<URL> getResources(String name) throws IOException {
            List<URL> kept = new ArrayList<>();
            for (URL u : Collections.list(getParent().getResources(name))) {
                if (!u.getPath().contains(hidden)) {
                    kept.add(u);
                }
            }
            return Collections.enumeration(kept);
        }

        @Override
        public URL getResource(String name) {
            try {
                Enumeration<URL> e = getResources(name);
                return e.hasMoreElements() ? e.nextElement() : null;
            } catch (IOException e) {
                return null;
            }
        }
    }
}
