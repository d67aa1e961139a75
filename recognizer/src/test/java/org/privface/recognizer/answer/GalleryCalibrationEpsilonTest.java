package org.privface.recognizer.answer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
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
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * The recognizer calibrates a site's open-set gallery at the ε the site's gateways report they
 * answer with (status topic), not at its own setting, writes that ε, the rule and the strangers'
 * count in the record (FaceGallery revision 2), and rebuilds the gallery when the gateways' ε
 * changes (issue 38). Real broker, real recognizer service.
 */
class GalleryCalibrationEpsilonTest {
    private static final String SITE = "calibeps";
    private static final int K = 8;
    private static final String SPACE = "fr_feature-test.k" + K;

    @Test
    void theGalleryIsCalibratedAtTheEpsilonTheGatewaysReport(@TempDir Path dir) throws Exception {
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        try (Admin admin = Admin.create(ap)) {
            new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
        }
        KeyPair key = org.privface.wire.control.SignedControl.generate();
        Path keyFile = Files.writeString(dir.resolve("gallery.key"),
                org.privface.wire.control.SignedControl.base64(key.getPrivate()));
        // 2,400 public strangers' directions (test inputs from a seeded generator, not noise).
        java.util.Random seeds = new java.util.Random(38);
        double[][] strangers = new double[2400][K];
        for (double[] s : strangers) {
            for (int i = 0; i < K; i++) {
                s[i] = seeds.nextGaussian();
            }
            EmbeddingMechanism.unit(s);
        }
        Path strangersFile = dir.resolve("strangers.txt");
        new PublicStrangers("public-test", SPACE, strangers).write(strangersFile);
        Map<String, Object> props = new HashMap<>();
        props.put("kafka.bootstrap.servers", RealKafka.bootstrapServers());
        props.put("micronaut.server.port", "-1");
        props.put("recognizer.min-enrollments", "100000");
        props.put("recognizer.answer.signing-key-file", keyFile.toString());
        props.put("recognizer.answer.strangers-file", strangersFile.toString());
        props.put("recognizer.answer.epsilon", "7"); // only until a gateway reports
        props.put("recognizer.answer.quiet-period", "500ms");
        try (ApplicationContext ctx = ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext();
             KafkaProducer<String, byte[]> p = new KafkaProducer<>(client(), new StringSerializer(), new ByteArraySerializer())) {
            status(p, "gw-1", 15.0);
            GalleryService service = ctx.getBean(GalleryService.class);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (service.reportedAnswerEpsilon(SITE).isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertEquals(15.0, service.reportedAnswerEpsilon(SITE).orElseThrow());
            double s = 1 / Math.sqrt(K);
            List<String> people = List.of("alice", "bob", "carol");
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
            FaceGallery first = galleries(1).get(0);
            assertEquals(15.0, first.getCalibration().getEpsilon(), "the gateways' ε, not the setting's 7");
            assertEquals("wilson", first.getCalibration().getRule());
            assertEquals(2400, first.getCalibration().getStrangers());

            // The site's policy moves to answers at ε 12: a new gallery for ε 12 follows.
            status(p, "gw-1", 12.0);
            List<FaceGallery> both = galleries(2);
            FaceGallery second = both.get(1);
            assertEquals(12.0, second.getCalibration().getEpsilon());
            assertTrue(second.getVersion() > first.getVersion());
        }
    }

    private static void status(KafkaProducer<String, byte[]> p, String gateway, double answerEpsilon) throws Exception {
        String body = "{\"site\":\"" + SITE + "\",\"gateway\":\"" + gateway + "\",\"answer\":{\"release\":\"answer\","
                + "\"answerEpsilon\":" + answerEpsilon + "}}";
        p.send(new ProducerRecord<>(Topics.status(SITE), gateway, body.getBytes(StandardCharsets.UTF_8))).get();
    }

    private static List<FaceGallery> galleries(int expected) {
        Properties cp = client();
        List<FaceGallery> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(cp, new StringDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition(Topics.gallery(SITE), 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (out.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    out.add(FaceRecords.decodeGalleryFromTopic(r.topic(), r.value()));
                }
            }
        }
        assertEquals(expected, out.size(), "galleries published");
        return out;
    }

    private static Properties client() {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        return p;
    }
}
