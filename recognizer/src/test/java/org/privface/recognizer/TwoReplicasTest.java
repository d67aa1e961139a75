package org.privface.recognizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
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
import org.privface.kafka.testkit.RealKafka;
import org.privface.recognizer.model.ModelKey;
import org.privface.recognizer.model.ModelStore;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/** Two recognizer replicas in one consumer group: every query answered exactly once, one trainer. */
class TwoReplicasTest {
    private static final String SITE = "replicas";
    private static final int DIM = 16;
    private static final int QUERIES = 200;

    private static PerturbedFace face(RecordKind kind, String label, double[] centre, SplittableRandom r) {
        List<Float> v = new ArrayList<>();
        for (double c : centre) {
            v.add((float) (c + r.nextGaussian() * 0.1));
        }
        return PerturbedFace.newBuilder().setEventId(UUID.randomUUID().toString()).setSiteId(SITE)
                .setCameraId("cam-" + r.nextInt(6)).setTrackId("t-" + UUID.randomUUID()).setCaptureTimestamp(Instant.now())
                .setKind(kind)
                .setMechanism(MechanismParams.newBuilder().setName("PEEP").setSensitivityMode("l1-clip")
                        .setEpsilonPerCoordinate(1).setEpsilonPerFace(DIM).setNoiseScale(1).setBasisId("pca-rep").build())
                .setDimension(DIM).setVector(v).setEnrollmentLabel(label).build();
    }

    @Test
    void eachQueryIsAnsweredExactlyOnceAndOneReplicaTrains() throws Exception {
        String bootstrap = RealKafka.bootstrapServers();
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
        }
        Path models = Files.createTempDirectory("privface-replicas-");
        List<ApplicationContext> replicas = new ArrayList<>();
        try {
            for (String name : List.of("replica-a", "replica-b")) {
                Map<String, Object> props = new HashMap<>();
                props.put("kafka.bootstrap.servers", bootstrap);
                props.put("micronaut.server.port", -1);
                props.put("recognizer.group-id", "two-replicas");
                props.put("recognizer.model-dir", models.toString());
                props.put("recognizer.instance-id", name);
                props.put("recognizer.min-enrollments", 60);
                props.put("recognizer.quiet-period", "500ms");
                replicas.add(ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext());
            }
            SplittableRandom r = new SplittableRandom(11);
            double[][] centres = new double[3][DIM];
            for (double[] c : centres) {
                for (int j = 0; j < DIM; j++) {
                    c[j] = r.nextDouble();
                }
            }
            Properties pp = new Properties();
            pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            Set<String> asked = new HashSet<>();
            try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(pp, new StringSerializer(), new ByteArraySerializer())) {
                for (int i = 0; i < 90; i++) {
                    PerturbedFace e = face(RecordKind.ENROLLMENT, "p" + (i % 3), centres[i % 3], r);
                    p.send(new ProducerRecord<>(Topics.enrollment(SITE), e.getCameraId(), FaceRecords.encode(e)));
                }
                for (int i = 0; i < QUERIES; i++) {
                    PerturbedFace q = face(RecordKind.QUERY, null, centres[i % 3], r);
                    asked.add(q.getEventId());
                    p.send(new ProducerRecord<>(Topics.query(SITE), q.getCameraId(), FaceRecords.encode(q)));
                }
                p.flush();
            }

            Map<String, Integer> answers = new HashMap<>();
            Properties cp = new Properties();
            cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(cp, new StringDeserializer(), new ByteArrayDeserializer())) {
                List<TopicPartition> tps = new ArrayList<>();
                c.partitionsFor(Topics.RESULTS).forEach(pi -> tps.add(new TopicPartition(Topics.RESULTS, pi.partition())));
                c.assign(tps);
                c.seekToBeginning(tps);
                long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
                long settleUntil = Long.MAX_VALUE;
                while (System.nanoTime() < Math.min(deadline, settleUntil)) {
                    for (ConsumerRecord<String, byte[]> rec : c.poll(Duration.ofMillis(200))) {
                        RecognitionResult res = FaceRecords.decodeResult(rec.value());
                        if (asked.contains(res.getEventId())) {
                            answers.merge(res.getEventId(), 1, Integer::sum);
                        }
                    }
                    if (answers.size() == QUERIES && settleUntil == Long.MAX_VALUE) {
                        settleUntil = System.nanoTime() + Duration.ofSeconds(3).toNanos();
                    }
                }
            }
            assertEquals(QUERIES, answers.size(), "every query answered");
            assertTrue(answers.values().stream().allMatch(n -> n == 1), "no query answered twice");
            List<Properties> versions = new ModelStore(models).history(new ModelKey(SITE, "pca-rep", "PEEP"));
            assertTrue(!versions.isEmpty());
            Set<String> trainers = new HashSet<>();
            versions.forEach(v -> trainers.add(v.getProperty("trainedBy")));
            assertEquals(1, trainers.size(), "one trainer per model: " + trainers);
        } finally {
            replicas.forEach(ApplicationContext::close);
        }
    }
}
