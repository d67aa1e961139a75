package org.privface.recognizer.answer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.kafka.testkit.RealKafka;
import org.privface.privacy.answer.RandomizedResponse;
import org.privface.recognizer.console.PasswordHash;
import org.privface.recognizer.ingest.AnswerReader;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.AnswerEpsilonScope;
import org.privface.wire.avro.AnswerMechanism;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.GalleryRef;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * The recognizer service against a real broker: it builds a site's gallery from the enrollment
 * records it reads and publishes it signed on the site's gallery topic, then turns answer records
 * into results and counts them; a bad answer is dead-lettered. The console's overview shows the
 * site's gallery and, per identity, the answers naming it and the unbiased estimate.
 */
class RecognizerAnswerTest {
    private static final String SITE = "ansrec";
    private static final int K = 8;
    private static final String SPACE = "fr_feature-test.k" + K;
    private static final String PASSWORD = "answer console password";

    @Test
    void galleryFromEnrollmentsSignedAndAnswersBecomeResults(@TempDir Path dir) throws Exception {
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        try (Admin admin = Admin.create(ap)) {
            new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
        }
        KeyPair key = SignedControl.generate();
        Path keyFile = Files.writeString(dir.resolve("gallery.key"), SignedControl.base64(key.getPrivate()));
        Map<String, Object> props = new HashMap<>();
        props.put("kafka.bootstrap.servers", RealKafka.bootstrapServers());
        props.put("micronaut.server.port", "-1");
        props.put("recognizer.min-enrollments", "100000");
        props.put("recognizer.answer.signing-key-file", keyFile.toString());
        props.put("recognizer.answer.key-id", "rec-1");
        props.put("recognizer.answer.quiet-period", "500ms");
        props.put("recognizer.console.operators.ops", PasswordHash.hash(PASSWORD.toCharArray()));
        List<String> people = List.of("alice", "bob", "carol");
        try (ApplicationContext ctx = ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext();
             KafkaProducer<String, byte[]> p = new KafkaProducer<>(client(), new StringSerializer(), new ByteArraySerializer())) {
            // Sign-cap-like enrollment releases: person c's signs are + on coordinate c, − elsewhere.
            double s = 1 / Math.sqrt(K);
            int n = 0;
            for (int c = 0; c < people.size(); c++) {
                for (int r = 0; r < 5; r++) {
                    List<Float> v = new ArrayList<>();
                    for (int i = 0; i < K; i++) {
                        v.add((float) (i == c || i == (c + r) % K ? s : -s));
                    }
                    PerturbedFace f = PerturbedFace.newBuilder().setEventId("enr-" + n++).setSiteId(SITE)
                            .setCameraId("enrollment").setTrackId("t-" + n).setCaptureTimestamp(Instant.now())
                            .setKind(RecordKind.ENROLLMENT).setMechanism(MechanismParams.newBuilder().setName("EMBEDDING")
                                    .setSensitivityMode("sign-cap.every-face").setEpsilonPerCoordinate(10).setEpsilonPerFace(10)
                                    .setNoiseScale(0.1).setBasisId(SPACE).build())
                            .setDimension(K).setVector(v).setEnrollmentLabel(people.get(c)).build();
                    p.send(new ProducerRecord<>(Topics.enrollment(SITE), "enrollment", FaceRecords.encode(f))).get();
                }
            }
            // The gallery, signed by the recognizer's key for this site.
            ConsumerRecord<String, byte[]> galleryRecord = read(Topics.gallery(SITE), 1, 1).get(0);
            var envelope = SignedControl.Envelope.of(galleryRecord.headers());
            assertEquals("rec-1", envelope.keyId());
            assertTrue(SignedControl.verify(SignedControl.GALLERY_DOMAIN, key.getPublic(), SITE, envelope, galleryRecord.value()));
            assertEquals(SITE, galleryRecord.key());
            FaceGallery g = FaceRecords.decodeGalleryFromTopic(galleryRecord.topic(), galleryRecord.value());
            assertEquals(people, g.getLabels());
            assertEquals(15, g.getEnrollmentReleases());
            assertEquals(SPACE, g.getBasisId());
            assertNull(g.getCalibration(), "no public strangers configured: closed set");

            // Answers in, results out.
            RandomizedResponse rr = RandomizedResponse.forEpsilon(3, 10);
            List<FaceAnswer> answers = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                int out = i == 3 ? 3 : i;
                answers.add(FaceAnswer.newBuilder().setEventId("ans-" + i).setSiteId(SITE).setCameraId("cam-1")
                        .setTrackId("trk-" + i).setCaptureTimestamp(Instant.now())
                        .setGallery(GalleryRef.newBuilder().setVersion(g.getVersion()).setIdentities(3).setBasisId(SPACE).build())
                        .setOutput(out).setLabel(out == 3 ? null : people.get(out))
                        .setMechanism(AnswerMechanism.newBuilder().setName("RR").setKeepNumerator(rr.keepNumerator())
                                .setEpsilonPerFace(rr.epsilon()).setEpsilonCovers(AnswerEpsilonScope.QUERY_FACE).build())
                        .build());
            }
            for (FaceAnswer a : answers) {
                p.send(new ProducerRecord<>(Topics.answer(SITE), "cam-1", FaceRecords.encode(a))).get();
            }
            p.send(new ProducerRecord<>(Topics.answer(SITE), "cam-1", new byte[] {1, 2, 3})).get();
            Map<String, RecognitionResult> results = new HashMap<>();
            for (ConsumerRecord<String, byte[]> r : read(Topics.RESULTS, 6, -1)) {
                RecognitionResult res = FaceRecords.decodeResult(r.value());
                if (res.getSiteId().equals(SITE)) {
                    results.put(res.getEventId(), res);
                }
            }
            assertEquals(4, results.size(), results.keySet().toString());
            for (FaceAnswer a : answers) {
                RecognitionResult r = results.get(a.getEventId());
                assertEquals(a.getLabel(), r.getPredictedLabel());
                assertEquals(rr.epsilon(), r.getEpsilonPerFace());
                assertEquals("gallery-" + g.getVersion(), r.getModelVersion());
            }
            boolean deadLettered = read(Topics.DEAD_LETTER, 1, -1).stream()
                    .anyMatch(r -> new String(r.headers().lastHeader("privface.source").value()).startsWith(Topics.answer(SITE)));
            assertTrue(deadLettered, "the bad answer is dead-lettered");
            var estimates = ctx.getBean(AnswerReader.class).estimates();
            var e = estimates.get(SITE + "/" + g.getVersion() + "/" + rr.keepNumerator());
            assertEquals(List.of(1.0, 1.0, 1.0, 1.0), java.util.Arrays.stream(e.released()).boxed().toList());
            assertEquals(4, java.util.Arrays.stream(e.estimated()).sum(), 1e-9);

            // The console shows them: the site's gallery and, per identity, the answers and their estimate.
            Map<String, Object> site = consoleSite(ctx, SITE);
            @SuppressWarnings("unchecked")
            Map<String, Object> shown = (Map<String, Object>) site.get("answers");
            assertTrue(shown != null, "the console's overview has no answers for the site: " + site);
            @SuppressWarnings("unchecked")
            Map<String, Object> gallery = (Map<String, Object>) shown.get("gallery");
            assertEquals(g.getVersion(), ((Number) gallery.get("version")).longValue());
            assertEquals(3, ((Number) gallery.get("identities")).intValue());
            assertEquals("closed set: no public strangers", gallery.get("openSet"));
            assertEquals(4, ((Number) shown.get("answers")).intValue());
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> channels = (List<Map<String, Object>>) shown.get("channels");
            assertEquals(1, channels.size());
            assertEquals(rr.epsilon(), ((Number) channels.get(0).get("epsilonPerAnswer")).doubleValue());
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> rows = (List<Map<String, Object>>) channels.get(0).get("perIdentity");
            double[] expected = rr.estimateCounts(new double[] {1, 1, 1, 1});
            List<String> labels = new ArrayList<>(people);
            labels.add("unknown");
            for (int i = 0; i < rows.size(); i++) {
                assertEquals(labels.get(i), rows.get(i).get("label"));
                assertEquals(1, ((Number) rows.get(i).get("released")).intValue());
                assertEquals(expected[i], ((Number) rows.get(i).get("estimated")).doubleValue(), 1e-9);
            }
            assertEquals(4, rows.size());
        }
    }

    /** The site's entry of /console/api/overview, read over HTTP as a logged-in operator. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> consoleSite(ApplicationContext ctx, String site) throws Exception {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        String base = "http://127.0.0.1:" + ctx.getBean(EmbeddedServer.class).getPort();
        var login = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "/login"))
                .header("Content-Type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                        "{\"username\":\"ops\",\"password\":\"" + PASSWORD + "\"}")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        String token = login.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith("JWT="))
                .map(c -> c.substring(4, c.indexOf(';'))).findFirst().orElseThrow(() -> new AssertionError("no login: " + login));
        var overview = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "/console/api/overview"))
                .header("Authorization", "Bearer " + token).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(200, overview.statusCode(), overview.body());
        Map<String, Object> body = ctx.getBean(io.micronaut.json.JsonMapper.class).readValue(overview.body(), Map.class);
        for (Map<String, Object> s : (List<Map<String, Object>>) body.get("sites")) {
            if (site.equals(s.get("site"))) {
                return s;
            }
        }
        throw new AssertionError("site " + site + " not in the console's overview: " + overview.body());
    }

    private static Properties client() {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        return p;
    }

    /** Records of a topic from the beginning: until {@code expected} came, or for 20 s (expected −1: then all). */
    private static List<ConsumerRecord<String, byte[]>> read(String topic, int partitions, int expected) {
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(client(), new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                tps.add(new TopicPartition(topic, i));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(expected < 0 ? 8 : 30).toNanos();
            while ((expected < 0 || out.size() < expected) && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }
}
