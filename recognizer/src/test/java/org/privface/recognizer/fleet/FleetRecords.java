package org.privface.recognizer.fleet;

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
import java.util.function.BooleanSupplier;

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
import org.privface.kafka.testkit.RealKafka;
import org.privface.privacy.answer.RandomizedResponse;
import org.privface.wire.avro.AnswerEpsilonScope;
import org.privface.wire.avro.AnswerMechanism;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.GalleryRef;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * Synthetic records and replicas for the ownership and fleet tests, against the real test broker:
 * sign-cap-like EMBEDDING enrollment releases (person c: + on coordinate c), queries near them,
 * answers, and recognizer replicas as Micronaut contexts in this JVM.
 */
public final class FleetRecords {
    public static final int K = 8;
    public static final String SPACE = "fr_feature-test.k" + K;
    public static final RandomizedResponse RR = RandomizedResponse.forEpsilon(3, 10);

    private FleetRecords() {
    }

    public static void createTopics(List<String> sites) throws Exception {
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        try (Admin admin = Admin.create(ap)) {
            // In slices: the KRaft controller refuses one request of thousands of partitions
            // ("excessively large batch operation"), as a 300-site fleet asked for.
            for (int from = 0; from < sites.size(); from += 50) {
                new TopicApplier(admin).apply(Topics.definitions(sites.subList(from, Math.min(sites.size(), from + 50))));
            }
        }
    }

    private static List<Float> signs(int person, int variant) {
        double s = 1 / Math.sqrt(K);
        List<Float> v = new ArrayList<>();
        for (int i = 0; i < K; i++) {
            v.add((float) (i == person || i == (person + variant) % K ? s : -s));
        }
        return v;
    }

    private static MechanismParams mechanism() {
        return MechanismParams.newBuilder().setName("EMBEDDING").setSensitivityMode("sign-cap.every-face")
                .setEpsilonPerCoordinate(10).setEpsilonPerFace(10).setNoiseScale(0.1).setBasisId(SPACE).build();
    }

    public static PerturbedFace enrollment(String site, String eventId, int person, int variant) {
        return PerturbedFace.newBuilder().setEventId(eventId).setSiteId(site).setCameraId("enrollment")
                .setTrackId("t-" + eventId).setCaptureTimestamp(Instant.now()).setKind(RecordKind.ENROLLMENT)
                .setMechanism(mechanism()).setDimension(K).setVector(signs(person, variant))
                .setEnrollmentLabel("p" + person).build();
    }

    public static PerturbedFace query(String site, String eventId, int person) {
        return PerturbedFace.newBuilder().setEventId(eventId).setSiteId(site).setCameraId("cam-1")
                .setTrackId("t-" + eventId).setCaptureTimestamp(Instant.now()).setKind(RecordKind.QUERY)
                .setMechanism(mechanism()).setDimension(K).setVector(signs(person, 1)).build();
    }

    public static FaceAnswer answer(String site, String eventId, long galleryVersion, int output) {
        return FaceAnswer.newBuilder().setEventId(eventId).setSiteId(site).setCameraId("cam-1")
                .setTrackId("trk-" + eventId).setCaptureTimestamp(Instant.now())
                .setGallery(GalleryRef.newBuilder().setVersion(galleryVersion).setIdentities(3).setBasisId(SPACE).build())
                .setOutput(output).setLabel(output == 3 ? null : "p" + output)
                .setMechanism(AnswerMechanism.newBuilder().setName("RR").setKeepNumerator(RR.keepNumerator())
                        .setEpsilonPerFace(RR.epsilon()).setEpsilonCovers(AnswerEpsilonScope.QUERY_FACE).build())
                .build();
    }

    /** A signing key file for the replicas' galleries. */
    public static Path signingKey(Path dir) throws Exception {
        KeyPair key = SignedControl.generate();
        return Files.writeString(dir.resolve("gallery.key"), SignedControl.base64(key.getPrivate()));
    }

    /** One recognizer replica in this JVM; {@code extra} overrides the defaults. */
    public static ApplicationContext replica(String name, String group, String sites, Path key, Map<String, Object> extra) {
        Map<String, Object> props = new HashMap<>();
        props.put("kafka.bootstrap.servers", RealKafka.bootstrapServers());
        props.put("micronaut.server.port", "-1");
        props.put("recognizer.group-id", group);
        props.put("recognizer.sites", sites);
        props.put("recognizer.instance-id", name);
        props.put("recognizer.min-enrollments", "100000");
        props.put("recognizer.answer.signing-key-file", key.toString());
        props.put("recognizer.answer.key-id", "fleet");
        props.put("recognizer.answer.quiet-period", "500ms");
        props.put("recognizer.ownership-session-timeout", "6s");
        props.putAll(extra);
        return ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext();
    }

    public static Properties client() {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        return p;
    }

    /** Every record of the topics, from the beginning to their current ends. */
    public static List<ConsumerRecord<String, byte[]>> readAll(List<String> topics) {
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(client(), new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (String t : topics) {
                c.partitionsFor(t).forEach(pi -> tps.add(new TopicPartition(t, pi.partition())));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> ends = c.endOffsets(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (tps.stream().anyMatch(tp -> c.position(tp) < ends.get(tp)) && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }

    /** Waits until {@code done} or the timeout; returns whether it came. */
    public static boolean await(Duration timeout, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (done.getAsBoolean()) {
                return true;
            }
            Thread.sleep(200);
        }
        return done.getAsBoolean();
    }
}
