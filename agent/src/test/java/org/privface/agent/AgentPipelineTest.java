package org.privface.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.privface.privacy.gdp.MuGdp;
import org.privface.kafka.testkit.RealKafka;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.topics.Topics;
import org.privface.agent.release.Mechanisms;

/** The agent on the synthetic faces in test-data/, publishing to a real broker. */
@MicronautTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@org.junit.jupiter.api.TestMethodOrder(org.junit.jupiter.api.MethodOrderer.OrderAnnotation.class)
class AgentPipelineTest implements TestPropertyProvider {
    private static final String SITE = "agenttest";
    private static final String TOKEN = "test-token-123";

    @Inject
    AgentPipeline pipeline;

    @Inject
    @Client("/")
    HttpClient http;

    static Path synthetic() {
        return Path.of(System.getProperty("privface.root", "..")).resolve("test-data/synthetic").toAbsolutePath();
    }

    private static final Path DATA_DIR = tempDir();

    static Path tempDir() {
        try {
            return Files.createTempDirectory("agent-test");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public Map<String, String> getProperties() {
        SiteRecords.createTopics(SITE);
        return Map.ofEntries(Map.entry("kafka.bootstrap.servers", RealKafka.bootstrapServers()),
                Map.entry("micronaut.server.port", "-1"),
                Map.entry("agent.site-id", SITE),
                Map.entry("agent.enroll-folder", synthetic().resolve("enroll").toString()),
                Map.entry("agent.source", synthetic().resolve("query").toString()),
                Map.entry("agent.epsilon", "16"),
                // The pixel stack on the cascade (the shipped default is the deep stack, AgentDefaultsTest).
                Map.entry("agent.detector", "haar"),
                Map.entry("agent.mechanism", "peep"),
                Map.entry("agent.sensitivity-mode", "l1-clip"),
                Map.entry("agent.components", "12"),
                Map.entry("agent.data-dir", DATA_DIR.toString()),
                Map.entry("agent.floor.epsilon-max", "64"),
                Map.entry("agent.control.token", TOKEN),
                Map.entry("agent.control.operator-keys.console",
                        java.util.Base64.getEncoder().encodeToString(OPERATOR_KEY.getPublic().getEncoded())));
    }

    /** The operator key this gateway trusts, under the key id "console". */
    private static final java.security.KeyPair OPERATOR_KEY = operatorKey();
    private static final java.util.concurrent.atomic.AtomicLong ISSUED_AT =
            new java.util.concurrent.atomic.AtomicLong(System.currentTimeMillis());

    private static java.security.KeyPair operatorKey() {
        try {
            return java.security.KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Signs a control record as docs/agent.md ("Signed control records") specifies, with the JDK
     * alone rather than the project's SignedControl: the gateway must accept what a third party
     * builds from the documentation.
     */
    static void sign(org.apache.kafka.common.header.Headers h, String operator, String body) throws Exception {
        long issuedAt = ISSUED_AT.incrementAndGet();
        var s = java.security.Signature.getInstance("Ed25519");
        s.initSign(OPERATOR_KEY.getPrivate());
        s.update(("privface-control-v1\n" + SITE + "\nconsole\n" + operator + "\n" + issuedAt + "\n" + body)
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        h.add("privface.key", "console".getBytes());
        h.add("privface.operator", operator.getBytes());
        h.add("privface.issued-at", Long.toString(issuedAt).getBytes());
        h.add("privface.signature", java.util.Base64.getEncoder().encode(s.sign()));
    }

    @Test
    @org.junit.jupiter.api.Order(1)
    void publishesOnlyValidPerturbedRecordsAndReportsMetrics() throws Exception {
        assertTrue(Files.isDirectory(synthetic().resolve("query")), "test-data/synthetic is part of the repository");
        assertTrue(pipeline.awaitCompletion(), "pipeline finished without error");
        assertTrue(pipeline.facesDetected() > 0);

        List<PerturbedFace> records = SiteRecords.read(SITE, pipeline.published(),
                (key, f) -> {
                    if (f.getKind() == RecordKind.QUERY) {
                        assertEquals(f.getCameraId(), key, "a query is keyed by camera");
                    } else {
                        // An enrollment is keyed by its person's pseudonym, image tag and index (issue 43).
                        assertTrue(org.privface.wire.erasure.PersonKeys.pseudonymOf(key).isPresent(), key);
                        assertFalse(key.contains(f.getEnrollmentLabel()), "the key names nobody");
                    }
                });
        assertEquals(pipeline.published(), records.size());
        long queries = records.stream().filter(f -> f.getKind() == RecordKind.QUERY).count();
        assertEquals(pipeline.facesDetected(), queries, "one query record per detected face");
        assertTrue(records.stream().allMatch(f -> f.getDimension() == 12));
        assertTrue(records.stream().allMatch(f -> f.getMechanism().getEpsilonPerFace() == 16.0));

        String metrics = http.toBlocking().retrieve("/prometheus");
        for (String metric : List.of("privface_agent_uplink_acknowledged_total", "privface_agent_epsilon_per_face",
                "privface_agent_frames_total", "privface_agent_releases_total", "privface_agent_spool_depth",
                "privface_agent_publish_latency", "privface_agent_epsilon_spent_total")) {
            assertTrue(metrics.contains(metric), metric + " exported");
        }
        // Issue 39: without a token, no count that depends on the faces in view (faces, withheld, frames
        // processed or dropped, releases per track, faces withheld for an unwritable person ledger).
        List<String> exact = List.of("privface_agent_faces_detected", "privface_agent_releases_withheld_total",
                "privface_agent_releases_per_track", "privface_agent_frames_processed", "privface_agent_frames_dropped",
                "ledger=\"person\"");
        for (String metric : exact) {
            assertFalse(metrics.contains(metric), metric + " must not be served without the control token");
        }
        var refused = org.junit.jupiter.api.Assertions.assertThrows(io.micronaut.http.client.exceptions.HttpClientResponseException.class,
                () -> http.toBlocking().retrieve("/control/metrics"));
        assertEquals(401, refused.getStatus().getCode());
        String behindToken = http.toBlocking().retrieve(io.micronaut.http.HttpRequest.GET("/control/metrics").bearerAuth(TOKEN));
        assertTrue(behindToken.contains("privface_agent_faces_detected_total"), behindToken);
        assertTrue(behindToken.contains("privface_agent_releases_per_track"), behindToken);
        double detected = behindToken.lines().filter(l -> l.startsWith("privface_agent_faces_detected_total"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
        assertEquals(pipeline.facesDetected(), (long) detected, "the exact count, for the operator with the token");
        assertTrue(http.toBlocking().retrieve("/health").contains("UP"));

        // Every query states where it stands in its track's budget: each still is its own track.
        for (PerturbedFace f : records) {
            assertTrue(f.getTrack() != null, "track accounting on every record");
            if (f.getKind() == RecordKind.QUERY) {
                assertEquals(1, f.getTrack().getReleaseIndex());
                assertEquals(16.0, f.getTrack().getEpsilonBudget());
                assertEquals("once", f.getTrack().getBudgetPolicy());
            }
        }
        assertEquals(records.size(), records.stream().map(PerturbedFace::getEventId).distinct().count());

        // The status topic's report (issue 39): no exact face, frame-processed or heap figure, the noised
        // counts per track here (an image folder is not linked), and what they cost a person, stated.
        Map<String, Object> report = gateway.report();
        String text = report.toString();
        for (String local : List.of("facesDetected", "framesDropped", "residentMemoryBytes", "withheldNoGallery")) {
            assertFalse(text.contains(local), local + " must stay in the local report: " + text);
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> counts = (Map<String, Object>) report.get("statusCounts");
        assertEquals(4.0, ((Number) counts.get("epsilonPerPersonPerWindow")).doubleValue(), counts.toString());
        assertEquals(4.0, ((Number) counts.get("epsilonPerPersonPerDay")).doubleValue(), counts.toString());
        @SuppressWarnings("unchecked")
        Map<String, Object> camera = (Map<String, Object>) ((Map<String, Object>) report.get("cameras")).values()
                .iterator().next();
        @SuppressWarnings("unchecked")
        Map<String, Object> noise = (Map<String, Object>) ((Map<String, Object>) camera.get("noised")).get("noise");
        assertEquals("track", noise.get("unit"));
        double released = records.stream().filter(f -> f.getKind() == RecordKind.QUERY)
                .mapToDouble(f -> f.getMechanism().getEpsilonPerFace()).sum();
        assertEquals(released, ((Number) camera.get("epsilonSpent")).doubleValue(), 1e-9,
                "epsilonSpent sums the released records' stated ε");
    }

    @Test
    @org.junit.jupiter.api.Order(2)
    void controlApiNeedsTheTokenAndKeepsEpsilonInsideTheFloor() {
        var client = http.toBlocking();
        var unauthorized = org.junit.jupiter.api.Assertions.assertThrows(
                io.micronaut.http.client.exceptions.HttpClientResponseException.class, () -> client.retrieve("/control/status"));
        assertEquals(401, unauthorized.getStatus().getCode());
        var auth = io.micronaut.http.HttpRequest.GET("/control/status").bearerAuth("wrong");
        assertEquals(401, org.junit.jupiter.api.Assertions.assertThrows(
                io.micronaut.http.client.exceptions.HttpClientResponseException.class, () -> client.retrieve(auth))
                .getStatus().getCode());
        String status = client.retrieve(io.micronaut.http.HttpRequest.GET("/control/status").bearerAuth(TOKEN));
        assertTrue(status.contains("\"epsilonPerTrack\":16.0"), status);

        String clamped = client.retrieve(io.micronaut.http.HttpRequest.PUT("/control/policy", Map.of("epsilon", 1000))
                .bearerAuth(TOKEN));
        assertTrue(clamped.contains("CLAMPED") && clamped.contains("\"epsilonPerTrack\":64.0"), clamped);
        var bad = org.junit.jupiter.api.Assertions.assertThrows(io.micronaut.http.client.exceptions.HttpClientResponseException.class,
                () -> client.retrieve(io.micronaut.http.HttpRequest.PUT("/control/policy", Map.of("mode", "paper-pixel"))
                        .bearerAuth(TOKEN)));
        assertEquals(422, bad.getStatus().getCode());
        String shortWindow = client.retrieve(io.micronaut.http.HttpRequest.PUT("/control/policy", Map.of("window", 1_000_000))
                .bearerAuth(TOKEN));
        assertTrue(shortWindow.contains("CLAMPED") && shortWindow.contains("\"window\":\"PT10M\""), shortWindow);
        String audit = client.retrieve(io.micronaut.http.HttpRequest.GET("/control/audit").bearerAuth(TOKEN));
        assertTrue(audit.contains("CLAMPED") && audit.contains("REJECTED"), audit);
    }

    @Test
    @org.junit.jupiter.api.Order(3)
    void nothingButPerturbedRecordsAndTheAuditLogReachTheGatewaysDisk() throws Exception {
        assertTrue(pipeline.awaitCompletion());
        // The ε change above (16 to 64) is a new form for every enrollment image: under the cap of
        // 1 × 64 + the fit each is refused (fit + 16 + 64 > 64 + fit), in the background. Wait for it, then for the spool.
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        Map<?, ?> enrollment = (Map<?, ?>) gateway.report().get("enrollment");
        while (((Number) enrollment.get("refusedThisRun")).longValue() < ((Number) enrollment.get("images")).longValue()
                && System.nanoTime() < deadline) {
            Thread.sleep(100);
            enrollment = (Map<?, ?>) gateway.report().get("enrollment");
        }
        assertEquals(enrollment.get("images"), ((Number) enrollment.get("releasedThisRun")).intValue(), enrollment.toString());
        assertEquals(enrollment.get("images"), ((Number) enrollment.get("refusedThisRun")).intValue(), enrollment.toString());
        double fit = MuGdp.epsilonFor(new AgentSettings().getBasisFitMu(), MuGdp.DEFAULT_DELTA);
        assertEquals(16 + fit, (Double) enrollment.get("maxComposedEpsilon"), 1e-9, "the private fit and one release; the cap held");
        assertTrue(pipeline.uplink().drain(Duration.ofSeconds(60)));
        assertEquals(0, pipeline.uplink().spool().depth(), "every record acknowledged and removed from the spool");
        List<Path> files;
        try (var walk = Files.walk(DATA_DIR)) {
            files = walk.filter(Files::isRegularFile).toList();
        }
        for (Path f : files) {
            String name = DATA_DIR.relativize(f).toString();
            // The private basis is the only statistic of the enrolled faces kept, and it is μ-GDP.
            assertTrue(name.equals("audit.jsonl") || name.equals(AgentPipeline.ENROLLMENT_LEDGER)
                            || name.equals("control-counters.json")
                            // the site's pseudonym secret (issue 43): random bytes, nothing of a face
                            || name.equals(AgentPipeline.PSEUDONYM_SECRET)
                            || name.matches("spool/(checkpoint|spool\\.lock|seg-\\d+\\.log)")
                            || name.matches("private-basis-47x62-nc12-mu2\\.0\\.eigf"),
                    "unexpected file on the gateway's disk: " + name);
            byte[] b = Files.readAllBytes(f);
            for (int i = 0; i + 3 < b.length; i++) {
                boolean jpeg = (b[i] & 0xff) == 0xFF && (b[i + 1] & 0xff) == 0xD8 && (b[i + 2] & 0xff) == 0xFF;
                boolean png = (b[i] & 0xff) == 0x89 && b[i + 1] == 'P' && b[i + 2] == 'N' && b[i + 3] == 'G';
                assertTrue(!jpeg && !png, name + " holds an encoded image at byte " + i);
            }
        }
        for (String line : Files.readAllLines(DATA_DIR.resolve("audit.jsonl"))) {
            assertTrue(line.startsWith("{") && line.endsWith("}") && line.length() < 2048, "audit lines are small JSON: " + line);
        }
    }

    @Inject
    org.privface.agent.control.GatewayState gateway;

    @Test
    @org.junit.jupiter.api.Order(4)
    void controlTopicChangesAreClampedToTheFloorAndReportedOnTheStatusTopic() throws Exception {
        Properties pp = new Properties();
        pp.put("bootstrap.servers", RealKafka.bootstrapServers());
        try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<String, String>(pp,
                new org.apache.kafka.common.serialization.StringSerializer(),
                new org.apache.kafka.common.serialization.StringSerializer())) {
            var rec = new org.apache.kafka.clients.producer.ProducerRecord<>(Topics.control(SITE), SITE,
                    "{\"epsilon\": 0.01, \"window\": 1000000}"); // a Duration in JSON is nanoseconds: 1 ms
            sign(rec.headers(), "carol", rec.value());
            producer.send(rec).get();
            var garbage = new org.apache.kafka.clients.producer.ProducerRecord<>(Topics.control(SITE), SITE, "not json");
            sign(garbage.headers(), "carol", garbage.value());
            producer.send(garbage).get();
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (gateway.policies().current().policy().epsilon() != 0.1 && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertEquals(0.1, gateway.policies().current().policy().epsilon(), "0.01 requested, raised to the floor's minimum");
        assertEquals(Duration.ofMinutes(10), gateway.policies().current().policy().window(), "1 ms requested, raised likewise");
        var audit = gateway.policies().audit().recent();
        assertTrue(audit.stream().anyMatch(e -> e.outcome().equals("CLAMPED") && e.principal().equals("carol")
                && e.source().startsWith("control-topic@")), audit.toString());
        while (audit.stream().noneMatch(e -> e.outcome().equals("REJECTED") && e.principal().contains("unreadable"))
                && System.nanoTime() < deadline) {
            Thread.sleep(100);
            audit = gateway.policies().audit().recent();
        }
        assertTrue(audit.stream().anyMatch(e -> e.outcome().equals("REJECTED") && e.principal().contains("unreadable")),
                "a malformed control record is audited as rejected");

        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        String report = null;
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp, new StringDeserializer(), new StringDeserializer())) {
            TopicPartition tp = new TopicPartition(Topics.status(SITE), 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            while ((report == null || !report.contains("\"epsilonPerTrack\":0.1")) && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    if (r.key().equals(gateway.gatewayId())) {
                        report = r.value();
                    }
                }
            }
        }
        assertTrue(report != null && report.contains("\"epsilonPerTrack\":0.1") && report.contains("\"floor\"")
                && report.contains("\"windowMin\":\"PT10M\""), report);
        // The enrollment ledger's figures travel in the report.
        // Unset, the cap is one enrollment at the floor's highest ε (64) plus the private basis fit.
        double cap = Mechanisms.defaultEnrollmentCap(new AgentSettings(), 64);
        assertTrue(report.contains("\"enrollment\":{") && report.contains("\"epsilonCap\":" + cap), report);
    }

    @Test
    @org.junit.jupiter.api.Order(5)
    void forgedAndMalformedControlIsRefusedAndChangesNothing() throws Exception {
        var client = http.toBlocking();
        var before = gateway.policies().current();
        // REST: every way of not holding the token is a 401, and nothing changes.
        String basic = "Basic " + java.util.Base64.getEncoder().encodeToString(("admin:" + TOKEN).getBytes());
        java.util.List<String> forged = java.util.Arrays.asList(null, "Bearer wrong", "Bearer " + TOKEN + "x",
                "Bearer " + TOKEN.substring(0, TOKEN.length() - 1), "bearer " + TOKEN, "Bearer  " + TOKEN, TOKEN, basic, "Bearer ");
        for (String auth : forged) {
            var put = io.micronaut.http.HttpRequest.PUT("/control/policy", Map.of("epsilon", 50));
            var req = auth == null ? put : put.header("Authorization", auth);
            var refused = org.junit.jupiter.api.Assertions.assertThrows(
                    io.micronaut.http.client.exceptions.HttpClientResponseException.class, () -> client.retrieve(req));
            assertEquals(401, refused.getStatus().getCode(), "Authorization: " + auth);
        }
        // With the token, bodies that are no valid change: 400 (unreadable) or 422 (rejected), never applied.
        for (String body : List.of("not json", "{\"epsilon\": \"NaN\"}", "{\"epsilon\": \"Infinity\"}", "{\"epsilon\": -1}",
                "{\"epsilon\": 0}", "{}", "{\"mechanism\": \"nope\"}", "{\"imageRelease\": true}")) {
            var req = io.micronaut.http.HttpRequest.PUT("/control/policy", body)
                    .contentType(io.micronaut.http.MediaType.APPLICATION_JSON_TYPE).bearerAuth(TOKEN);
            var refused = org.junit.jupiter.api.Assertions.assertThrows(
                    io.micronaut.http.client.exceptions.HttpClientResponseException.class, () -> client.retrieve(req));
            int code = refused.getStatus().getCode();
            assertTrue(code == 400 || code == 422, "body " + body + " answered " + code);
        }
        assertEquals(before, gateway.policies().current(), "no refused request changed the policy");

        // Control topic: oversized, NaN, negative (signed, so that they reach the parser and the floor),
        // another site's key, and an unsigned change under a forged operator name.
        Properties pp = new Properties();
        pp.put("bootstrap.servers", RealKafka.bootstrapServers());
        Map<String, Long> offsets = new java.util.LinkedHashMap<>();
        try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<String, String>(pp,
                new org.apache.kafka.common.serialization.StringSerializer(),
                new org.apache.kafka.common.serialization.StringSerializer())) {
            Map<String, String[]> records = new java.util.LinkedHashMap<>();
            records.put("oversized", new String[] {SITE, "{\"epsilon\": 50, \"pad\": \"" + "x".repeat(5000) + "\"}"});
            records.put("nan", new String[] {SITE, "{\"epsilon\": NaN}"});
            records.put("negative", new String[] {SITE, "{\"epsilon\": -1}"});
            records.put("other-key", new String[] {"othersite", "{\"epsilon\": 50}"});
            records.put("forged-operator", new String[] {SITE, "{\"epsilon\": 50}"});
            records.put("sentinel", new String[] {SITE, "{\"epsilon\": 0.2}"});
            for (var e : records.entrySet()) {
                var rec = new org.apache.kafka.clients.producer.ProducerRecord<>(Topics.control(SITE), e.getValue()[0], e.getValue()[1]);
                if (e.getKey().equals("forged-operator")) {
                    rec.headers().add("privface.operator", "eve\n{\"outcome\":\"ACCEPTED\"}".getBytes());
                } else if (!e.getKey().equals("other-key")) {
                    sign(rec.headers(), "dave", rec.value());
                }
                offsets.put(e.getKey(), producer.send(rec).get().offset());
            }
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (gateway.policies().current().policy().epsilon() != 0.2 && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertEquals(0.2, gateway.policies().current().policy().epsilon(), "the record after the bad ones still applies");
        assertTrue(gateway.policies().audit().recent().stream().noneMatch(e -> e.epsilonApplied() == 50),
                "the unsigned change under a forged operator name never applied");
        Map<String, org.privface.agent.policy.AuditLog.Entry> bySource = new java.util.HashMap<>();
        for (var e : gateway.policies().audit().recent()) {
            bySource.put(e.source(), e);
        }
        for (String bad : List.of("oversized", "nan", "negative", "forged-operator")) {
            var e = bySource.get("control-topic@" + offsets.get(bad));
            assertTrue(e != null && e.outcome().equals("REJECTED"), bad + ": " + e);
        }
        assertTrue(bySource.get("control-topic@" + offsets.get("oversized")).reason().contains("bytes"));
        assertTrue(bySource.get("control-topic@" + offsets.get("nan")).principal().contains("unreadable"));
        assertTrue(!bySource.containsKey("control-topic@" + offsets.get("other-key")), "another site's record is ignored");
        var forgedEntry = bySource.get("control-topic@" + offsets.get("forged-operator"));
        assertTrue(forgedEntry.reason().startsWith("unsigned"), forgedEntry.toString());
        String principal = forgedEntry.principal();
        assertTrue(principal.matches("[A-Za-z0-9._@-]+ \\(unverified\\)"), "operator name sanitised and marked unproven: " + principal);
        for (String line : Files.readAllLines(DATA_DIR.resolve("audit.jsonl"))) {
            assertTrue(line.startsWith("{") && line.endsWith("}"), "one JSON object a line, nothing injected: " + line);
        }
    }
}
