package org.privface.agent;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.BiConsumer;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.privface.kafka.testkit.RealKafka;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.topics.Topics;

/** Reads a site's enrollment and query topics from the start, decoding (and so validating) every record. */
final class SiteRecords {
    private SiteRecords() {
    }

    /** Up to {@code expected} records, within 30 s; {@code check} sees each raw record's key and decoded face. */
    static List<PerturbedFace> read(String site, long expected, BiConsumer<String, PerturbedFace> check) {
        List<PerturbedFace> records = new ArrayList<>();
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(cp, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (String t : List.of(Topics.enrollment(site), Topics.query(site))) {
                c.partitionsFor(t).forEach(pi -> tps.add(new TopicPartition(t, pi.partition())));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (records.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    PerturbedFace f = FaceRecords.decodeFace(r.value());
                    check.accept(r.key(), f);
                    records.add(f);
                }
            }
        }
        return records;
    }

    /** Creates the site's topics on the test broker (idempotent). */
    static void createTopics(String site) {
        Properties p = new Properties();
        p.put(org.apache.kafka.clients.admin.AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(p)) {
            new org.privface.wire.topics.TopicApplier(admin).apply(Topics.definitions(List.of(site)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
