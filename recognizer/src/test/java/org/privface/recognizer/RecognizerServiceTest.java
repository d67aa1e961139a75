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
        return Map.of("kafka.bootstrap.servers", bootstrap, "micronaut.server.port", "-1",
                "recognizer.min-enrollments", "30", "recognizer.quiet-period", "500ms",
                "recognizer.model-dir", modelDir.toString(), "recognizer.admin-token", "s3cret",
                "recognizer.open-set-margin", "1.5",
                "recognizer.console.operators.ops", org.privface.recognizer.console.PasswordHash.hash(PASSWORD.toCharArray()));
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
            for (int i = 0; i < 90; i++) {
                PerturbedFace e = face(RecordKind.ENROLLMENT, people[i % 3], centres[i % 3], r);
                producer.send(new ProducerRecord<>(Topics.enrollment(SITE), "enrollment", FaceRecords.encode(e)));
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
            while (System.nanoTime() < deadline && (results.size() < 30 || dead.isEmpty())) {
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
        assertEquals(30, results.size(), "each of 30 queries answered exactly once");
        long correct = results.stream().filter(res -> truth.get(res.getEventId()).equals(res.getPredictedLabel())).count();
        assertTrue(correct >= 27, "correct " + correct + " of 30");
        assertEquals(1, dead.size());
        String reason = new String(dead.get(0).headers().lastHeader("privface.reason").value(), StandardCharsets.UTF_8);
        assertTrue(reason.contains("not an Avro single-object record"), reason);
        assertTrue(results.stream().allMatch(res -> res.getEpsilonPerFace() == DIM));

        String health = http.toBlocking().retrieve("/health");
        assertTrue(health.contains("UP"), health);
        String metrics = http.toBlocking().retrieve("/prometheus");
        assertTrue(metrics.contains("privface_recognizer_results_total"), "results counter exported");
        assertTrue(metrics.contains("privface_recognizer_dead_letters_total"));

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
        assertTrue(sites.contains("\"site\":\"" + SITE + "\"") && sites.contains("\"identified\":30")
                && sites.contains("\"deadLetters\":1") && sites.contains("\"duplicates\":1"), sites);

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
