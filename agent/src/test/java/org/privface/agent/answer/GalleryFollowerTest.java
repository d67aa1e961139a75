package org.privface.agent.answer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.privface.kafka.testkit.RealKafka;
import org.privface.privacy.answer.Gallery;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.wire.FaceRecords;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * The gateway takes a gallery only when the recognizer key it trusts signed it for this site;
 * forged, tampered, unsigned, older and another site's records are refused and change nothing.
 * Through a real broker.
 */
class GalleryFollowerTest {
    private static final String SITE = "gallery-site";
    private static final KeyPair RECOGNIZER = SignedControl.generate();
    private static final KeyPair MALLORY = SignedControl.generate();

    static FaceGallery gallery(long version, String basisId, int k) {
        List<Double> t = new java.util.ArrayList<>();
        for (int c = 0; c < 3; c++) {
            for (int i = 0; i < k; i++) {
                t.add(i == c ? 1.0 : 0.0);
            }
        }
        return FaceGallery.newBuilder().setSiteId(SITE).setVersion(version).setBuiltAt(Instant.now()).setBasisId(basisId)
                .setK(k).setLabels(List.of("alice", "bob", "carol")).setTemplates(t).setThreshold(0.2)
                .setEnrollmentReleases(9).setCalibration(null).build();
    }

    static ProducerRecord<String, byte[]> signed(FaceGallery g, KeyPair key, String keyId) {
        byte[] body = FaceRecords.encode(g);
        ProducerRecord<String, byte[]> r = new ProducerRecord<>(Topics.gallery(SITE), SITE, body);
        SignedControl.sign(SignedControl.GALLERY_DOMAIN, key.getPrivate(), keyId, SITE, "recognizer", 1, body)
                .addTo(r.headers());
        return r;
    }

    @Test
    void onlyTheTrustedKeysSignedNewerGalleryIsTaken() throws Exception {
        Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        try (Admin admin = Admin.create(a)) {
            new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
        }
        String space = "fr_feature-test.k8";
        ProducerRecord<String, byte[]> good = signed(gallery(2, space, 8), RECOGNIZER, "recognizer-1");
        ProducerRecord<String, byte[]> forged = signed(gallery(5, space, 8), MALLORY, "recognizer-1");
        ProducerRecord<String, byte[]> tampered = signed(gallery(6, space, 8), RECOGNIZER, "recognizer-1");
        byte[] changed = tampered.value().clone();
        changed[changed.length - 20] ^= 1;
        tampered = new ProducerRecord<>(tampered.topic(), null, tampered.key(), changed, tampered.headers());
        ProducerRecord<String, byte[]> unsigned = new ProducerRecord<>(Topics.gallery(SITE), SITE,
                FaceRecords.encode(gallery(7, space, 8)));
        ProducerRecord<String, byte[]> older = signed(gallery(1, space, 8), RECOGNIZER, "recognizer-1");
        ProducerRecord<String, byte[]> unknownKey = signed(gallery(8, space, 8), RECOGNIZER, "someone-else");

        GalleryFollower follower = new GalleryFollower(SITE, Map.of("recognizer-1", RECOGNIZER.getPublic()));
        assertTrue(follower.whyNone().orElseThrow().contains("no signed gallery"), follower.whyNone().toString());
        try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(KafkaClientProperties.bootstrap(RealKafka.bootstrapServers())
                .producer(), new StringSerializer(), new ByteArraySerializer())) {
            p.send(forged).get();
            follower.start(KafkaClientProperties.bootstrap(RealKafka.bootstrapServers()));
            waitFor(() -> follower.refusedCount() == 1);
            assertTrue(follower.current().isEmpty(), "a forged gallery is never taken");
            assertTrue(follower.whyNone().orElseThrow().contains("bad signature"), follower.whyNone().toString());
            p.send(good).get();
            waitFor(() -> follower.current().isPresent());
            for (ProducerRecord<String, byte[]> bad : List.of(tampered, unsigned, older, unknownKey)) {
                p.send(bad).get();
            }
            waitFor(() -> follower.refusedCount() == 5);
        } finally {
            follower.close();
        }
        Gallery held = follower.current().orElseThrow();
        assertEquals(2, held.version(), "the trusted gallery stays: forged, tampered, unsigned, older changed nothing");
        assertEquals(List.of("alice", "bob", "carol"), held.labels());
        assertEquals(5L, follower.status().get("refused"));
        assertFalse(follower.status().containsKey("none"));
        // Another site's record, offered directly, is refused too.
        assertTrue(follower.offer(Topics.gallery("other"), "other", good.headers(), good.value()).isPresent());
    }

    /** The release decodes against the held gallery, in its own space only, and states the sampler's ε. */
    @Test
    void anAnswerIsDecodedInTheGallerysSpaceAndStatesItsEpsilon() {
        EmbeddingMechanism m = EmbeddingMechanism.publicPreset("fr_feature", EmbeddingMechanism.Noise.SIGN_CAP, 10);
        int k = m.k();
        java.util.Random seeds = new java.util.Random(3); // test inputs only, not noise
        double[][] faces = new double[3][m.basis().inputDimension()];
        double[][] templates = new double[3][];
        for (int c = 0; c < 3; c++) {
            for (int i = 0; i < faces[c].length; i++) {
                faces[c][i] = seeds.nextGaussian();
            }
            templates[c] = m.direction(faces[c]);
        }
        Gallery g = new Gallery(4, m.releaseSpace(), List.of("alice", "bob", "carol"), templates, 0.99);
        AnswerSampler release = new AnswerSampler(SITE);
        int right = 0;
        for (int i = 0; i < 200; i++) {
            FaceAnswer a = release.answer(g, m, faces[i % 3], 10, "cam-1", "t-" + i, Instant.now(), null);
            FaceAnswer back = FaceRecords.decodeAnswer(FaceRecords.encode(a));
            assertEquals(release.sampler(3, 10).epsilon(), back.getMechanism().getEpsilonPerFace());
            assertTrue(back.getMechanism().getEpsilonPerFace() <= 10);
            assertEquals(4, back.getGallery().getVersion());
            right += back.getOutput() == i % 3 ? 1 : 0;
        }
        // κ = e^10/(e^10 + 3) ≈ 0.99986: a wrong answer among 200 has probability about 3 %.
        assertTrue(right >= 198, "kept " + right + " of 200");
        Gallery elsewhere = new Gallery(5, "dlib-x.k" + k, List.of("a", "b", "c"), templates, 0);
        assertThrows(IllegalStateException.class,
                () -> release.answer(elsewhere, m, faces[0], 10, "cam-1", "t", Instant.now(), null));
    }

    static void waitFor(java.util.function.BooleanSupplier done) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out");
            }
            Thread.sleep(50);
        }
    }
}
