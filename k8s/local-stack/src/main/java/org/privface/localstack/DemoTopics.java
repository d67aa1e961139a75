package org.privface.localstack;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.topics.Topics;

/**
 * Reading the demo's topics back as one principal: every record of a type from the start, and the
 * site's signed gallery. Split from {@link Demo} (issue 40).
 */
final class DemoTopics {
    private DemoTopics() {
    }

    /** Reads records of one type from the start of topics until {@code expected} are in, or quiet/timeout. */
    static <T> Map<String, T> readAll(Properties client, List<String> topics, int expected, Duration timeout,
                                              java.util.function.Function<byte[], T> decode,
                                              java.util.function.Function<T, String> eventId) {
        Properties p = new Properties();
        p.putAll(client);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        Map<String, T> out = new LinkedHashMap<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (String t : topics) {
                c.partitionsFor(t).forEach(pi -> tps.add(new TopicPartition(t, pi.partition())));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            // The timeout is idle time: a loaded machine that is still delivering records is not cut off
            // (at load 29 a fixed 10 s returned 6 of 48 answers, silently).
            long deadline = System.nanoTime() + timeout.toNanos();
            boolean caughtUp = false;
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    T record = decode.apply(r.value());
                    out.put(eventId.apply(record), record);
                    deadline = System.nanoTime() + timeout.toNanos();
                }
                caughtUp = tps.stream().allMatch(tp -> c.position(tp) >= end.get(tp));
                if (expected < 0 ? caughtUp : out.size() >= expected) {
                    break;
                }
            }
            if (expected < 0 && !caughtUp) {
                throw new IllegalStateException("read " + out.size() + " records of " + topics + " but not to their end offsets "
                        + end + " within " + timeout + " without a record");
            }
        }
        return out;
    }

    /** The site's gallery, as the super user reads it, once the recognizer has signed one on its topic. */
    static FaceGallery awaitGallery(LocalBroker broker, Duration timeout) {
        String topic = Topics.gallery(Demo.SITE);
        Map<String, FaceGallery> g = readAll(broker.client(LocalBroker.ADMIN), List.of(topic), 1, timeout,
                b -> FaceRecords.decodeGalleryFromTopic(topic, b), x -> Long.toString(x.getVersion()));
        return g.values().stream().max(Comparator.comparingLong(FaceGallery::getVersion)).orElseThrow(() ->
                new IllegalStateException("no gallery on " + topic + " within " + timeout + "; see recognizer.log"));
    }
}
