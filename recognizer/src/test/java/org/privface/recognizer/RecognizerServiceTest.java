package org.privface.recognizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.UUID;

import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.privface.kafka.testkit.RealKafka;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/** The recognizer against a real broker: enrollments in, queries answered, bad input dead-lettered. */
@MicronautTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RecognizerServiceTest implements TestPropertyProvider {
    private static final String SITE = "rectest";
    private static final int DIM = 24;
    private static final String PASSWORD = "correct horse battery staple";

    @Inject
    @Client("/")
    HttpClient http;

    private java.nio.file.Path modelDir;
    private double[][] centres;

    @Override
    public Map<String, String> getProperties() {
        String bootstrap = RealKafka.bootstrapServers();
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        try {
            modelDir = java.nio.file.Files.createTempDirectory("privface-models-");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        Map<String, String> props = new HashMap<>(Map.of("kafka.bootstrap.servers", bootstrap, "micronaut.server.port", "-1",
                "recognizer.min-enrollments", "30", "recognizer.quiet-period", "500ms",
                "recognizer.model-dir", modelDir.toString(), "recognizer.admin-token", "s3cret",
                "recognizer.open-set-margin", "1.5", "recognizer.model-wait", "1m",
                "recognizer.console.operators.ops", org.privface.recognizer.console.PasswordHash.hash(PASSWORD.toCharArray()),
                "recognizer.console.signing-key", org.privface.wire.control.SignedControl.base64(OPERATOR_KEY.getPrivate())));
        props.put("recognizer.fleet-metrics.interval", "200ms");
        return props;
    }

    private static final java.security.KeyPair OPERATOR_KEY = org.privface.wire.control.SignedControl.generate();

    @Test
    void theConsoleSignsWhatAnOperatorProposesForTheSiteWithAnIncreasingIssuedAt() throws Exception {
        var login = http.toBlocking().exchange(io.micronaut.http.HttpRequest.POST("/login",
                Map.of("username", "ops", "password", PASSWORD)));
        String token = login.getCookie("JWT").orElseThrow().getValue();
        long before = System.currentTimeMillis();
        List<Long> offsets = new ArrayList<>();
        for (double eps : new double[] {8, 2}) {
            String body = http.toBlocking().retrieve(io.micronaut.http.HttpRequest.POST("/console/api/sites/" + SITE + "/epsilon",
                    Map.of("epsilon", eps)).header("Authorization", "Bearer " + token));
            assertTrue(body.contains("\"keyId\":\"console\""), body);
            offsets.add(Long.parseLong(body.replaceAll(".*\"offset\":(\\d+).*", "$1")));
        }
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        Map<Long, ConsumerRecord<String, byte[]>> byOffset = new HashMap<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(cp, new StringDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition(Topics.control(SITE), 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (!byOffset.keySet().containsAll(offsets) && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(r -> byOffset.put(r.offset(), r));
            }
        }
        long previous = 0;
        for (long offset : offsets) {
            ConsumerRecord<String, byte[]> r = byOffset.get(offset);
            var e = org.privface.wire.control.SignedControl.Envelope.of(r.headers());
            assertEquals(SITE, r.key());
            assertEquals("console", e.keyId());
            assertEquals("ops", e.operator(), "the logged-in operator, inside the signature");
            assertTrue(e.issuedAt() >= before && e.issuedAt() > previous, "issued-at increases: " + e.issuedAt());
            previous = e.issuedAt();
            assertTrue(org.privface.wire.control.SignedControl.verify(OPERATOR_KEY.getPublic(), SITE, e, r.value()),
                    "signed for this site over the exact value: " + new String(r.value(), StandardCharsets.UTF_8));
            assertTrue(!org.privface.wire.control.SignedControl.verify(OPERATOR_KEY.getPublic(), "othersite", e, r.value()));
        }
    }

    private static PerturbedFace face(RecordKind kind, String label, double[] centre, SplittableRandom r) {
        List<Float> v = new ArrayList<>();
        for (double c : centre) {
            v.add((float) (c + r.nextGaussian() * 0.1));
        }
        return PerturbedFace.newBuilder().setEventId(UUID.randomUUID().toString()).setSiteId(SITE)
                .setCameraId("cam-1").setTrackId("t-" + UUID.randomUUID()).setCaptureTimestamp(Instant.now())
                .setKind(kind)
                .setMechanism(MechanismParams.newBuilder().setName("PEEP").setSensitivityMode("vector")
                        .setEpsilonPerCoordinate(1).setEpsilonPerFace(DIM).setNoiseScale(1).setBasisId("pca-test").build())
                .setDimension(DIM).setVector(v).setEnrollmentLabel(label).build();
    }

    /** Source topic and reason of each dead letter the bad records below must produce. */
    private static final List<String> DEAD_LETTERS = List.of(
            "query: not an Avro single-object record",
            "query: record of " + (org.privface.wire.WireLimits.MAX_RECORD_BYTES_WITH_IMAGE + 1) + " bytes exceeds",
            "query: unknown schema fingerprint",
            "query: vector[1] is not a finite number",
            "query: ENROLLMENT record on QUERY topic",
            "query: record of site other on site " + SITE,
            "query: length 1073741824 exceeds",
            "query: dimension " + (DIM - 1) + " does not match model input " + DIM,
            "query: no model for " + SITE + "/pca-never/PEEP within recognizer.model-wait",
            "enrollment: not an Avro single-object record",
            "enrollment: QUERY record on ENROLLMENT topic");

    /** Malformed, oversized and wrong-schema records, each breaking one rule, in DEAD_LETTERS' order. */
    private List<byte[]> badQueries(SplittableRandom r) {
        byte[] oversized = new byte[org.privface.wire.WireLimits.MAX_RECORD_BYTES_WITH_IMAGE + 1];
        java.util.Arrays.fill(oversized, (byte) 'x');
        byte[] result = FaceRecords.encode(RecognitionResult.newBuilder().setEventId("e1").setSiteId(SITE).setCameraId("c")
                .setTrackId("t").setPredictedLabel("ann").setConfidence(0.9f).setModelVersion("m-1")
                .setEpsilonPerFace(8).setRecognizedAt(Instant.now()).build());
        PerturbedFace nan = face(RecordKind.QUERY, null, centres[0], r);
        nan.getVector().set(1, Float.NaN);
        java.nio.ByteBuffer unchecked;
        try {
            unchecked = PerturbedFace.getEncoder().encode(nan); // bypasses validation, as a hostile producer would
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        byte[] nanBytes = new byte[unchecked.remaining()];
        unchecked.get(nanBytes);
        byte[] wrongKind = FaceRecords.encode(face(RecordKind.ENROLLMENT, "ann", centres[0], r));
        PerturbedFace other = face(RecordKind.QUERY, null, centres[0], r);
        other.setSiteId("other");
        // A string whose length prefix claims 1 GiB: offset 11 holds eventId's length (the fuzzer's first finding).
        byte[] good = FaceRecords.encode(face(RecordKind.QUERY, null, centres[0], r));
        byte[] hugeClaim = new byte[good.length + 4];
        System.arraycopy(good, 0, hugeClaim, 0, 11);
        System.arraycopy(new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x08}, 0, hugeClaim, 11, 5);
        System.arraycopy(good, 12, hugeClaim, 16, good.length - 12);
        PerturbedFace shortVector = face(RecordKind.QUERY, null, java.util.Arrays.copyOf(centres[0], DIM - 1), r);
        shortVector.setDimension(DIM - 1);
        shortVector.getMechanism().setEpsilonPerFace(DIM - 1);
        return List.of(oversized, result, nanBytes, wrongKind, FaceRecords.encode(other), hugeClaim,
                FaceRecords.encode(shortVector));
    }

    @Test
    void answersQueriesOnceAndDeadLettersBadInput() throws Exception {
        SplittableRandom r = new SplittableRandom(7);
        String[] people = {"ann", "bob", "cyd"};
        centres = new double[3][DIM];
        for (double[] c : centres) {
            for (int j = 0; j < DIM; j++) {
                c[j] = r.nextDouble();
            }
        }
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        Map<String, String> truth = new HashMap<>();
        PerturbedFace duplicate;
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(pp, new StringSerializer(), new ByteArraySerializer())) {
            // Queries first: they must wait for the model, not be dropped.
            List<PerturbedFace> queries = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                PerturbedFace q = face(RecordKind.QUERY, null, centres[i % 3], r);
                truth.put(q.getEventId(), people[i % 3]);
                queries.add(q);
                producer.send(new ProducerRecord<>(Topics.query(SITE), "cam-1", FaceRecords.encode(q)));
            }
            duplicate = queries.get(0);
            producer.send(new ProducerRecord<>(Topics.query(SITE), "cam-1", FaceRecords.encode(duplicate)));
            producer.send(new ProducerRecord<>(Topics.query(SITE), "cam-1", "not a record".getBytes(StandardCharsets.UTF_8)));
            for (byte[] bad : badQueries(r)) {
                producer.send(new ProducerRecord<>(Topics.query(SITE), "cam-1", bad));
            }
            // A query for a model that never comes, older than the model wait: refused, not waited on.
            PerturbedFace orphan = face(RecordKind.QUERY, null, centres[0], r);
            orphan.getMechanism().setBasisId("pca-never");
            producer.send(new ProducerRecord<>(Topics.query(SITE), null, System.currentTimeMillis() - 120_000, "cam-1",
                    FaceRecords.encode(orphan)));
            // A good query behind the bad ones: the worker must still answer it.
            PerturbedFace after = face(RecordKind.QUERY, null, centres[1], r);
            truth.put(after.getEventId(), people[1]);
            producer.send(new ProducerRecord<>(Topics.query(SITE), "cam-1", FaceRecords.encode(after)));
            producer.send(new ProducerRecord<>(Topics.enrollment(SITE), "enrollment",
                    "not a record either".getBytes(StandardCharsets.UTF_8)));
            producer.send(new ProducerRecord<>(Topics.enrollment(SITE), "enrollment",
                    FaceRecords.encode(face(RecordKind.QUERY, null, centres[0], r))));
            for (int i = 0; i < 90; i++) {
                PerturbedFace e = face(RecordKind.ENROLLMENT, people[i % 3], centres[i % 3], r);
                producer.send(new ProducerRecord<>(Topics.enrollment(SITE), "enrollment", FaceRecords.encode(e)));
            }
            // Two gateways' status reports with their enrollment ledgers' figures, for the console.
            for (String[] gw : new String[][] {{"gw-a", "30", "90", "0", "48.0", "1440.0", "100.0"},
                    {"gw-b", "12", "12", "5", "64.0", "768.0", "64.0"}}) {
                String report = "{\"gateway\":\"" + gw[0] + "\",\"site\":\"" + SITE + "\",\"enrollment\":{\"images\":" + gw[1]
                        + ",\"releases\":" + gw[2] + ",\"refusedReleases\":" + gw[3] + ",\"maxComposedEpsilon\":" + gw[4]
                        + ",\"totalComposedEpsilon\":" + gw[5] + ",\"epsilonCap\":" + gw[6] + "}}";
                producer.send(new ProducerRecord<>(Topics.status(SITE), gw[0], report.getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }

        List<RecognitionResult> results = new ArrayList<>();
        List<ConsumerRecord<String, byte[]>> dead = new ArrayList<>();
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(cp, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (String t : List.of(Topics.RESULTS, Topics.DEAD_LETTER)) {
                c.partitionsFor(t).forEach(pi -> tps.add(new TopicPartition(t, pi.partition())));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            while (System.nanoTime() < deadline && (results.size() < 31 || dead.size() < DEAD_LETTERS.size())) {
                for (ConsumerRecord<String, byte[]> rec : c.poll(Duration.ofMillis(200))) {
                    if (rec.topic().equals(Topics.RESULTS)) {
                        RecognitionResult res = FaceRecords.decodeResult(rec.value());
                        if (res.getSiteId().equals(SITE)) {
                            results.add(res);
                        }
                    } else if (new String(rec.headers().lastHeader("privface.source").value(), StandardCharsets.UTF_8)
                            .startsWith("privface." + SITE + ".")) {
                        dead.add(rec);
                    }
                }
            }
            // Give a duplicate answer time to show up, if there were one.
            long settle = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            while (System.nanoTime() < settle) {
                for (ConsumerRecord<String, byte[]> rec : c.poll(Duration.ofMillis(200))) {
                    if (rec.topic().equals(Topics.RESULTS)) {
                        // Other test classes' sites share the broker's results topic.
                        RecognitionResult res = FaceRecords.decodeResult(rec.value());
                        if (res.getSiteId().equals(SITE)) {
                            results.add(res);
                        }
                    }
                }
            }
        }
        assertEquals(31, results.size(), "each of 31 queries answered exactly once, the one behind the bad records too");
        long correct = results.stream().filter(res -> truth.get(res.getEventId()).equals(res.getPredictedLabel())).count();
        assertTrue(correct >= 28, "correct " + correct + " of 31");
        // Every bad record dead-lettered once, with its reason, and the worker kept answering the good ones.
        List<String> reasons = dead.stream()
                .map(d -> new String(d.headers().lastHeader("privface.source").value(), StandardCharsets.UTF_8)
                        .replaceAll("/.*", "") + ": " + new String(d.headers().lastHeader("privface.reason").value(),
                        StandardCharsets.UTF_8))
                .toList();
        assertEquals(DEAD_LETTERS.size(), dead.size(), reasons.toString());
        for (String expected : DEAD_LETTERS) {
            assertEquals(1, reasons.stream().filter(x -> x.contains(expected)).count(), expected + " in " + reasons);
        }
        assertTrue(results.stream().allMatch(res -> res.getEpsilonPerFace() == DIM));

        String health = http.toBlocking().retrieve("/health");
        assertTrue(health.contains("UP"), health);
        String metrics = http.toBlocking().retrieve("/prometheus");
        assertTrue(metrics.contains("privface_recognizer_results_total"), "results counter exported");
        assertTrue(metrics.contains("privface_recognizer_dead_letters_total"));

        // The fleet gauges (k8s/monitoring's rules): a gateway's status report becomes its last-seen and spool
        // gauges, and the trained model its timestamp and pending enrollments.
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(pp, new StringSerializer(), new ByteArraySerializer())) {
            String report = "{\"gateway\":\"gw-fleet\",\"site\":\"" + SITE + "\",\"uplink\":{\"spoolDepth\":7,\"spoolBytes\":4096,\"spoolDropped\":0}}";
            producer.send(new ProducerRecord<>(Topics.status(SITE), "gw-fleet", report.getBytes(StandardCharsets.UTF_8))).get();
        }
        String gw = "gateway=\"gw-fleet\",site=\"" + SITE + "\"";
        long fleetUntil = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        String fleet = "";
        while (System.nanoTime() < fleetUntil && !fleet.contains("privface_gateway_spool_depth{" + gw + "} 7.0")) {
            Thread.sleep(200);
            fleet = http.toBlocking().retrieve("/prometheus");
        }
        assertTrue(fleet.contains("privface_gateway_spool_depth{" + gw + "} 7.0"), fleet);
        assertTrue(fleet.contains("privface_gateway_spool_bytes{" + gw + "} 4096.0"), fleet);
        assertTrue(fleet.contains("privface_gateway_last_report_timestamp_seconds{" + gw + "}"), fleet);
        assertTrue(fleet.lines().anyMatch(l -> l.startsWith("privface_model_trained_timestamp_seconds{") && l.contains("site=\"" + SITE + "\"")), fleet);
        assertTrue(fleet.lines().anyMatch(l -> l.startsWith("privface_model_enrollments_pending{") && l.contains("site=\"" + SITE + "\"")), fleet);

        // The read API needs a logged-in operator; a wrong password gets no token.
        for (String path : new String[] {"/models", "/sites", "/console/api/overview"}) {
            var anon = org.junit.jupiter.api.Assertions.assertThrows(io.micronaut.http.client.exceptions.HttpClientResponseException.class,
                    () -> http.toBlocking().exchange(path));
            assertEquals(401, anon.getStatus().getCode(), path);
        }
        var wrong = org.junit.jupiter.api.Assertions.assertThrows(io.micronaut.http.client.exceptions.HttpClientResponseException.class,
                () -> http.toBlocking().exchange(io.micronaut.http.HttpRequest.POST("/login",
                        Map.of("username", "ops", "password", "guess"))));
        assertEquals(401, wrong.getStatus().getCode());
        var login = http.toBlocking().exchange(io.micronaut.http.HttpRequest.POST("/login",
                Map.of("username", "ops", "password", PASSWORD)));
        String token = login.getCookie("JWT").orElseThrow().getValue();
        java.util.function.UnaryOperator<io.micronaut.http.MutableHttpRequest<?>> as =
                rq -> rq.header("Authorization", "Bearer " + token);

        // The model is listed, answers the predict endpoint, and was persisted where a restart finds it.
        String models = http.toBlocking().retrieve(as.apply(io.micronaut.http.HttpRequest.GET("/models")));
        assertTrue(models.contains("\"site\":\"" + SITE + "\"") && models.contains("\"ann\""), models);
        float[] ann = new float[DIM];
        for (int j = 0; j < DIM; j++) {
            ann[j] = (float) centres[0][j];
        }
        var req = io.micronaut.http.HttpRequest.POST("/predict",
                Map.of("site", SITE, "basisId", "pca-test", "mechanism", "PEEP", "vector", ann));
        String answer = http.toBlocking().retrieve(as.apply(req));
        assertTrue(answer.contains("\"label\":\"ann\""), answer);
        var bad = io.micronaut.http.HttpRequest.POST("/predict",
                Map.of("site", SITE, "basisId", "pca-test", "mechanism", "PEEP", "vector", new float[3]));
        var e = org.junit.jupiter.api.Assertions.assertThrows(io.micronaut.http.client.exceptions.HttpClientResponseException.class,
                () -> http.toBlocking().retrieve(as.apply(bad)));
        assertEquals(400, e.getStatus().getCode());
        // Not-a-number and infinite values, spelt the ways JSON parsers accept them.
        for (String value : List.of("\"NaN\"", "\"Infinity\"", "\"-Infinity\"", "NaN", "1e999")) {
            StringBuilder json = new StringBuilder("{\"site\":\"" + SITE + "\",\"basisId\":\"pca-test\",\"mechanism\":\"PEEP\",\"vector\":[");
            for (int j = 0; j < DIM; j++) {
                json.append(j == 3 ? value : "0.5").append(j + 1 < DIM ? "," : "]}");
            }
            var nan = io.micronaut.http.HttpRequest.POST("/predict", json.toString())
                    .contentType(io.micronaut.http.MediaType.APPLICATION_JSON_TYPE);
            var refused = org.junit.jupiter.api.Assertions.assertThrows(
                    io.micronaut.http.client.exceptions.HttpClientResponseException.class, () -> http.toBlocking().retrieve(as.apply(nan)));
            assertEquals(400, refused.getStatus().getCode(), "vector value " + value);
        }
        // Other tests' sites share the broker, and this replica follows every site; look at ours.
        var all = new org.privface.recognizer.model.ModelStore(modelDir).loadLatest();
        var stored = all.stream().filter(m -> m.key().site().equals(SITE)).toList();
        assertEquals(1, stored.size());
        assertEquals(List.of("ann", "bob", "cyd"), stored.get(0).labels());
        all.forEach(m -> m.mlp().close());
        assertTrue(http.toBlocking().retrieve(as.apply(io.micronaut.http.HttpRequest.GET(
                "/models/" + SITE + "/pca-test/PEEP/history"))).contains("trainingSize"));
        assertTrue(http.toBlocking().retrieve(as.apply(io.micronaut.http.HttpRequest.GET("/models/training")))
                .contains("\"running\""));

        // Open set: faces of someone never enrolled come back unknown, enrolled people do not.
        SplittableRandom q = new SplittableRandom(99);
        double[] stranger = new double[DIM];
        for (int j = 0; j < DIM; j++) {
            stranger[j] = q.nextDouble();
        }
        int unknown = 0;
        int known = 0;
        for (int i = 0; i < 20; i++) {
            float[] s = new float[DIM];
            float[] k = new float[DIM];
            for (int j = 0; j < DIM; j++) {
                s[j] = (float) (stranger[j] + q.nextGaussian() * 0.1);
                k[j] = (float) (centres[i % 3][j] + q.nextGaussian() * 0.1);
            }
            String a = http.toBlocking().retrieve(as.apply(io.micronaut.http.HttpRequest.POST("/predict",
                    Map.of("site", SITE, "basisId", "pca-test", "mechanism", "PEEP", "vector", s))));
            String b = http.toBlocking().retrieve(as.apply(io.micronaut.http.HttpRequest.POST("/predict",
                    Map.of("site", SITE, "basisId", "pca-test", "mechanism", "PEEP", "vector", k))));
            unknown += a.contains("\"label\"") ? 0 : 1;
            known += b.contains("\"label\":\"" + people[i % 3] + "\"") ? 1 : 0;
        }
        System.out.printf("open set: %d/20 strangers unknown, %d/20 enrolled identified%n", unknown, known);
        assertTrue(unknown >= 15, "strangers reported unknown: " + unknown + "/20");
        assertTrue(known >= 18, "enrolled people identified: " + known + "/20");

        String sites = http.toBlocking().retrieve(as.apply(io.micronaut.http.HttpRequest.GET("/sites")));
        String overview = http.toBlocking().retrieve(as.apply(io.micronaut.http.HttpRequest.GET("/console/api/overview")));
        assertTrue(overview.contains("\"site\":\"" + SITE + "\"") && overview.contains("\"validationAccuracy\""), overview);
        // One page of the fleet: only the sites matched, only their models and series.
        String none = http.toBlocking().retrieve(as.apply(io.micronaut.http.HttpRequest.GET(
                "/console/api/overview?filter=no-such-site&limit=5")));
        assertTrue(none.contains("\"total\":0") && none.contains("\"sites\":[]") && none.contains("\"models\":[]"), none);
        String page = http.toBlocking().retrieve(as.apply(io.micronaut.http.HttpRequest.GET(
                "/console/api/overview?filter=" + SITE + "&limit=1")));
        assertTrue(page.contains("\"total\":1") && page.contains("\"limit\":1") && page.contains("\"site\":\"" + SITE + "\""),
                page);
        String noSeries = http.toBlocking().retrieve(as.apply(io.micronaut.http.HttpRequest.GET(
                "/console/api/series?sites=no-such-site")));
        assertEquals("{}", noSeries);
        // The site's enrolled faces, summed over its gateways' ledgers; the lower cap binds first.
        assertTrue(overview.contains("\"enrollment\":{\"images\":42,\"releases\":102,\"refusedReleases\":5,"
                + "\"maxComposedEpsilon\":64.0,\"totalComposedEpsilon\":2208.0,\"epsilonCap\":64.0}"), overview);
        assertTrue(sites.contains("\"site\":\"" + SITE + "\"") && sites.contains("\"identified\":31")
                && sites.contains("\"deadLetters\":" + DEAD_LETTERS.size()) && sites.contains("\"duplicates\":1"), sites);

        // Retraining changes state: refused without the right bearer token, accepted with it.
        String retrain = "/models/" + SITE + "/pca-test/PEEP/retrain";
        for (String auth : new String[] {null, "Bearer wrong", "s3cret"}) {
            var request = io.micronaut.http.HttpRequest.POST(retrain, "");
            if (auth != null) {
                request = request.header("Authorization", auth);
            }
            var refused = request;
            var denied = org.junit.jupiter.api.Assertions.assertThrows(
                    io.micronaut.http.client.exceptions.HttpClientResponseException.class, () -> http.toBlocking().exchange(refused));
            assertEquals(401, denied.getStatus().getCode(), "auth " + auth);
        }
        var ok = http.toBlocking().exchange(io.micronaut.http.HttpRequest.POST(retrain, "").header("Authorization", "Bearer s3cret"));
        assertEquals(202, ok.getStatus().getCode());
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (new org.privface.recognizer.model.ModelStore(modelDir).history(
                new org.privface.recognizer.model.ModelKey(SITE, "pca-test", "PEEP")).size() < 2 && System.nanoTime() < until) {
            Thread.sleep(200);
        }
        assertEquals(2, new org.privface.recognizer.model.ModelStore(modelDir).history(
                new org.privface.recognizer.model.ModelKey(SITE, "pca-test", "PEEP")).size(), "retrained once more");
    }
}
