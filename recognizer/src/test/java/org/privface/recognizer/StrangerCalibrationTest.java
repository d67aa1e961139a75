package org.privface.recognizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.UUID;

import io.micronaut.http.HttpRequest;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.privface.kafka.testkit.RealKafka;
import org.privface.recognizer.model.ModelKey;
import org.privface.recognizer.model.ModelStore;
import org.privface.recognizer.model.StrangerReleases;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * A site's enrollments on a real broker and a file of public strangers' releases: the model
 * version records which model it serves (MLP or nearest class mean, with both held-out scores)
 * and its open-set threshold, calibrated on strangers of one half of the public people and
 * measured, with its 95% interval, on the other half.
 */
@MicronautTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StrangerCalibrationTest implements TestPropertyProvider {
    private static final String SITE = "strangertest";
    private static final int DIM = 16;
    private static final double EPSILON = 20;
    private static final double FPIR = 0.05;
    private static final String PASSWORD = "another correct horse";

    @Inject
    @Client("/")
    HttpClient http;

    private Path modelDir;

    @Override
    public Map<String, String> getProperties() {
        String bootstrap = RealKafka.bootstrapServers();
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        Path strangers;
        try (Admin admin = Admin.create(p)) {
            new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
            modelDir = Files.createTempDirectory("privface-models-");
            strangers = Files.createTempFile("strangers-", ".bin");
            StrangerReleases.write(strangers, strangers());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return Map.of("kafka.bootstrap.servers", bootstrap, "micronaut.server.port", "-1",
                "recognizer.min-enrollments", "120", "recognizer.quiet-period", "500ms",
                "recognizer.model-dir", modelDir.toString(), "recognizer.strangers-file", strangers.toString(),
                "recognizer.open-set-fpir", Double.toString(FPIR),
                "recognizer.console.operators.ops", org.privface.recognizer.console.PasswordHash.hash(PASSWORD.toCharArray()));
    }

    /** 1,000 public people with one face each at the site's ε, and 300 at another ε that must be ignored. */
    private static List<PerturbedFace> strangers() {
        SplittableRandom r = new SplittableRandom(11);
        List<PerturbedFace> out = new ArrayList<>();
        for (int i = 0; i < 1300; i++) {
            out.add(face(RecordKind.ENROLLMENT, "public-" + i, centre(r), r, i < 1000 ? EPSILON : 10, "public-site"));
        }
        return out;
    }

    private static double[] centre(SplittableRandom r) {
        double[] c = new double[DIM];
        for (int j = 0; j < DIM; j++) {
            c[j] = r.nextGaussian();
        }
        return c;
    }

    private static PerturbedFace face(RecordKind kind, String label, double[] centre, SplittableRandom r, double eps,
                                      String site) {
        List<Float> v = new ArrayList<>();
        for (double c : centre) {
            v.add((float) (c + r.nextGaussian() * 0.3));
        }
        return PerturbedFace.newBuilder().setEventId(UUID.randomUUID().toString()).setSiteId(site)
                .setCameraId("cam-1").setTrackId("t-" + UUID.randomUUID()).setCaptureTimestamp(Instant.now())
                .setKind(kind)
                .setMechanism(MechanismParams.newBuilder().setName("EMBEDDING").setSensitivityMode("sign-cap")
                        .setEpsilonPerCoordinate(eps).setEpsilonPerFace(eps).setNoiseScale(1).setBasisId("public-test")
                        .build())
                .setDimension(DIM).setVector(v).setEnrollmentLabel(label).build();
    }

    @Test
    void theModelVersionRecordsItsChoiceAndAnOpenSetCalibratedOnPublicStrangers() throws Exception {
        SplittableRandom r = new SplittableRandom(5);
        double[][] centres = {centre(r), centre(r), centre(r), centre(r)};
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(pp, new StringSerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < 120; i++) {
                PerturbedFace e = face(RecordKind.ENROLLMENT, "person-" + i % 4, centres[i % 4], r, EPSILON, SITE);
                producer.send(new ProducerRecord<>(Topics.enrollment(SITE), "enrollment", FaceRecords.encode(e)));
            }
            producer.flush();
        }
        ModelKey key = new ModelKey(SITE, "public-test", "EMBEDDING");
        ModelStore store = new ModelStore(modelDir);
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (store.history(key).isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        Properties meta = store.history(key).get(0);
        // Every 5th of each person's 30 enrollments held out: 4 × 6.
        assertEquals("24", meta.getProperty("heldOutEnrollments"), meta.toString());
        double mlp = Double.parseDouble(meta.getProperty("heldOutMlpAccuracy"));
        double ncm = Double.parseDouble(meta.getProperty("heldOutNcmAccuracy"));
        assertEquals(mlp > ncm ? "mlp" : "ncm", meta.getProperty("served"), meta.toString());
        // 1,000 strangers at ε 20: people at even positions of the sorted names calibrate (500 ≥ 20/0.05).
        assertEquals("0.05", meta.getProperty("openSet.fpirTarget"));
        String[] calib = meta.getProperty("openSet.calibration").split("/");
        assertEquals("500", calib[1], meta.toString());
        assertEquals(25, Integer.parseInt(calib[0]), 1, "⌊0.05 · 500⌋ calibration strangers let through");
        String[] held = meta.getProperty("openSet.heldOut").split("/");
        assertEquals("500", held[1]);
        double fpir = Double.parseDouble(meta.getProperty("openSet.heldOutFpir"));
        assertTrue(Double.parseDouble(meta.getProperty("openSet.heldOutFpirLow95")) <= fpir
                && fpir <= Double.parseDouble(meta.getProperty("openSet.heldOutFpirHigh95")), meta.toString());
        assertEquals(FPIR, fpir, 0.04, "held-out strangers come from the same public population");

        String token = http.toBlocking().exchange(HttpRequest.POST("/login", Map.of("username", "ops", "password", PASSWORD)))
                .getCookie("JWT").orElseThrow().getValue();
        String models = http.toBlocking().retrieve(HttpRequest.GET("/models").header("Authorization", "Bearer " + token));
        String ours = models.substring(models.indexOf("\"site\":\"" + SITE + "\""));
        assertTrue(ours.contains("\"served\":\"" + meta.getProperty("served") + "\"") && ours.contains("\"heldOutNcmAccuracy\"")
                && ours.contains("\"heldOutEnrollments\":24") && ours.contains("\"calibrationStrangers\":500")
                && ours.contains("\"heldOutFpirHigh95\""), ours);

        // The served model with its calibrated threshold: enrolled faces named, new strangers mostly unknown.
        int named = 0;
        int unknown = 0;
        for (int i = 0; i < 40; i++) {
            PerturbedFace known = face(RecordKind.QUERY, null, centres[i % 4], r, EPSILON, SITE);
            PerturbedFace stranger = face(RecordKind.QUERY, null, centre(r), r, EPSILON, SITE);
            String a = predict(token, known);
            String b = predict(token, stranger);
            named += a.contains("\"label\":\"person-" + i % 4 + "\"") ? 1 : 0;
            unknown += b.contains("\"label\"") ? 0 : 1;
        }
        assertTrue(named >= 38, "enrolled faces named: " + named + "/40");
        assertTrue(unknown >= 32, "new strangers unknown: " + unknown + "/40");
    }

    private String predict(String token, PerturbedFace f) {
        return http.toBlocking().retrieve(HttpRequest.POST("/predict", Map.of("site", SITE, "basisId", "public-test",
                "mechanism", "EMBEDDING", "vector", FaceRecords.vector(f))).header("Authorization", "Bearer " + token));
    }
}
