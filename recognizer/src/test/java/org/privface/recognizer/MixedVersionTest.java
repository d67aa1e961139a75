package org.privface.recognizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
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
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * A mixed rollout against a real broker, losing no record either way (docs/operations.md, "Upgrades"):
 * an old-revision gateway (PerturbedFace revision 1) with this recognizer, whose queries are all
 * answered; and a new-revision gateway (a schema this build has never seen) with this recognizer,
 * whose queries are parked, neither answered nor dead-lettered nor committed, and are all there for
 * a consumer of the group that knows the new revision once this recognizer is gone.
 */
class MixedVersionTest {
    private static final String SITE = "mixed";
    private static final String GROUP = "mixed-version";
    private static final int DIM = 16;
    private static final int PARKED_PARTITION = 5;

    private static PerturbedFace face(RecordKind kind, String label, double[] centre, SplittableRandom r) {
        List<Float> v = new ArrayList<>();
        for (double c : centre) {
            v.add((float) (c + r.nextGaussian() * 0.1));
        }
        return PerturbedFace.newBuilder().setEventId(UUID.randomUUID().toString()).setSiteId(SITE)
                .setCameraId("cam-1").setTrackId("t-" + UUID.randomUUID()).setCaptureTimestamp(Instant.now())
                .setKind(kind)
                .setMechanism(MechanismParams.newBuilder().setName("PEEP").setSensitivityMode("l1-clip")
                        .setEpsilonPerCoordinate(1).setEpsilonPerFace(DIM).setNoiseScale(1).setBasisId("pca-mixed").build())
                .setDimension(DIM).setVector(v).setEnrollmentLabel(label).build();
    }

    /** PerturbedFace as a later revision might be: one more optional field, so a fingerprint this build lacks. */
    static Schema newerRevision() throws Exception {
        ObjectNode s = (ObjectNode) new ObjectMapper().readTree(PerturbedFace.getClassSchema().toString());
        ObjectNode extra = ((ArrayNode) s.get("fields")).addObject();
        extra.put("name", "capturedBy");
        extra.putArray("type").add("null").add("string");
        extra.putNull("default");
        return new Schema.Parser().parse(s.toString());
    }

    static byte[] encode(Schema schema, GenericRecord r) throws Exception {
        ByteBuffer buf = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), schema).encode(r);
        byte[] out = new byte[buf.remaining()];
        buf.get(out);
        return out;
    }

    /** f under another schema, by Avro's own resolution from the current one (new fields take their defaults). */
    static GenericRecord as(Schema schema, PerturbedFace f) {
        BinaryMessageDecoder<GenericRecord> d = new BinaryMessageDecoder<>(GenericData.get(), schema);
        d.addSchema(PerturbedFace.getClassSchema());
        try {
            return d.decode(FaceRecords.encode(f));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static Schema revisionOne() throws Exception {
        try (var in = MixedVersionTest.class.getResourceAsStream("/org/privface/wire/schemas/history/PerturbedFace-r1.avsc")) {
            return new Schema.Parser().parse(in);
        }
    }

    @Test
    void neitherAnOldNorANewRevisionGatewayLosesARecord() throws Exception {
        String bootstrap = RealKafka.bootstrapServers();
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
            // A site whose query topic predates the one-partition layout (issue 41) keeps its 6 partitions: one is
            // parked at a newer revision while the others flow.
            admin.createPartitions(Map.of(Topics.query(SITE), org.apache.kafka.clients.admin.NewPartitions.increaseTo(6)))
                    .all().get();
        }
        Schema newer = newerRevision();
        Schema r1 = revisionOne();
        Map<String, Object> props = new HashMap<>();
        props.put("kafka.bootstrap.servers", bootstrap);
        props.put("micronaut.server.port", -1);
        props.put("recognizer.group-id", GROUP);
        props.put("recognizer.model-dir", Files.createTempDirectory("privface-mixed-").toString());
        props.put("recognizer.min-enrollments", 30);
        props.put("recognizer.quiet-period", "500ms");
        ApplicationContext recognizer = ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext();
        Set<String> answerable = new HashSet<>();
        List<String> waiting = new ArrayList<>(); // partition 5 from the first newer-revision record on, in order
        long firstParked;
        try {
            SplittableRandom r = new SplittableRandom(5);
            double[][] centres = new double[3][DIM];
            for (double[] c : centres) {
                for (int j = 0; j < DIM; j++) {
                    c[j] = r.nextDouble();
                }
            }
            Properties pp = new Properties();
            pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(pp, new StringSerializer(), new ByteArraySerializer())) {
                for (int i = 0; i < 45; i++) {
                    PerturbedFace e = face(RecordKind.ENROLLMENT, "p" + (i % 3), centres[i % 3], r);
                    p.send(new ProducerRecord<>(Topics.enrollment(SITE), e.getCameraId(), FaceRecords.encode(e)));
                }
                for (int i = 0; i < 20; i++) {
                    // Partitions 0-4: the current gateway and an old one (revision 1) side by side.
                    PerturbedFace q = face(RecordKind.QUERY, null, centres[i % 3], r);
                    byte[] bytes = i % 2 == 0 ? FaceRecords.encode(q) : encode(r1, as(r1, q));
                    answerable.add(q.getEventId());
                    p.send(new ProducerRecord<>(Topics.query(SITE), i % 5, "cam-1", bytes));
                }
                // Partition 5: two current queries, then two of a newer revision, then one current behind them.
                for (int i = 0; i < 2; i++) {
                    PerturbedFace q = face(RecordKind.QUERY, null, centres[i], r);
                    answerable.add(q.getEventId());
                    p.send(new ProducerRecord<>(Topics.query(SITE), PARKED_PARTITION, "cam-1", FaceRecords.encode(q)));
                }
                firstParked = -1;
                for (int i = 0; i < 3; i++) {
                    PerturbedFace q = face(RecordKind.QUERY, null, centres[i], r);
                    byte[] bytes = i < 2 ? encode(newer, as(newer, q)) : FaceRecords.encode(q);
                    waiting.add(q.getEventId());
                    long off = p.send(new ProducerRecord<>(Topics.query(SITE), PARKED_PARTITION, "cam-1", bytes)).get().offset();
                    firstParked = firstParked < 0 ? off : firstParked;
                }
                p.flush();
            }

            // Every query the recognizer can read is answered, once; none of the waiting ones.
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
                        if (answerable.contains(res.getEventId()) || waiting.contains(res.getEventId())) {
                            answers.merge(res.getEventId(), 1, Integer::sum);
                        }
                    }
                    if (answers.keySet().containsAll(answerable) && settleUntil == Long.MAX_VALUE) {
                        settleUntil = System.nanoTime() + Duration.ofSeconds(4).toNanos();
                    }
                }
            }
            assertEquals(answerable, answers.keySet(), "every current and revision-1 query answered, none parked");
            assertTrue(answers.values().stream().allMatch(n -> n == 1), "none answered twice");
            double parked = recognizer.getBean(MeterRegistry.class).find("privface.recognizer.records.parked")
                    .tag("site", SITE).counters().stream().mapToDouble(x -> x.count()).sum();
            assertTrue(parked >= 1, "the newer revision was parked: " + parked);
        } finally {
            recognizer.close();
        }

        // Nothing of this site was dead-lettered.
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(cp, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            c.partitionsFor(Topics.DEAD_LETTER).forEach(pi -> tps.add(new TopicPartition(Topics.DEAD_LETTER, pi.partition())));
            c.assign(tps);
            c.seekToBeginning(tps);
            List<String> dead = new ArrayList<>();
            long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
            while (System.nanoTime() < until) {
                for (ConsumerRecord<String, byte[]> rec : c.poll(Duration.ofMillis(200))) {
                    var h = rec.headers().lastHeader("privface.source");
                    String source = h == null ? "" : new String(h.value(), StandardCharsets.UTF_8);
                    if (source.startsWith(Topics.query(SITE)) || source.startsWith(Topics.enrollment(SITE))) {
                        dead.add(source);
                    }
                }
            }
            assertEquals(List.of(), dead, "no record of the mixed rollout dead-lettered");
        }

        // The group's offset on the parked partition stops at the first newer record: a recognizer that knows
        // the revision (here: a consumer of the group with its schema) reads every waiting query from there.
        TopicPartition tp = new TopicPartition(Topics.query(SITE), PARKED_PARTITION);
        try (Admin admin = Admin.create(ap)) {
            OffsetAndMetadata committed = admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata().get().get(tp);
            assertEquals(firstParked, committed.offset(), "committed up to the first parked record, not past it");
        }
        Properties np = new Properties();
        np.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        np.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        np.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        BinaryMessageDecoder<GenericRecord> upgraded = new BinaryMessageDecoder<>(GenericData.get(), newer);
        upgraded.addSchema(PerturbedFace.getClassSchema());
        List<String> read = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(np, new StringDeserializer(), new ByteArrayDeserializer())) {
            c.assign(List.of(tp));
            long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (read.size() < waiting.size() && System.nanoTime() < until) {
                for (ConsumerRecord<String, byte[]> rec : c.poll(Duration.ofMillis(200))) {
                    read.add(upgraded.decode(rec.value()).get("eventId").toString());
                }
            }
        }
        assertEquals(waiting, read, "the newer-revision queries and the one behind them, all still there, in order");
    }
}
