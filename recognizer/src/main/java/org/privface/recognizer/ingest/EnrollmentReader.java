package org.privface.recognizer.ingest;

import java.time.Duration;
import java.util.HashSet;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import io.micrometer.core.instrument.MeterRegistry;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.privface.recognizer.model.ModelRegistry;
import org.privface.recognizer.publish.RecognizerOutput;
import org.privface.wire.FaceRecords;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.InvalidRecordException;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.topics.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads every site's enrollment topic from the beginning. The topics keep enrollments forever,
 * so they are the training set of record: a restarted recognizer replays them and loses none.
 * No consumer group, no commits; every replica sees every enrollment.
 */
@Singleton
public class EnrollmentReader extends PollingWorker {
    private static final Logger LOG = LoggerFactory.getLogger(EnrollmentReader.class);
    private static final long REFRESH_MS = 2_000;

    private final KafkaClientProperties kafka;
    private final ModelRegistry registry;
    private final RecognizerOutput output;
    private final MeterRegistry metrics;

    public EnrollmentReader(KafkaClientProperties kafka, ModelRegistry registry,
                            RecognizerOutput output, MeterRegistry metrics) {
        super("enrollment-reader");
        this.kafka = kafka;
        this.registry = registry;
        this.output = output;
        this.metrics = metrics;
    }

    @Override
    protected void runLoop() throws ExecutionException, InterruptedException {
        Properties p = kafka.consumer();
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            register(consumer);
            Set<TopicPartition> assigned = new HashSet<>();
            long nextRefresh = 0;
            while (running()) {
                if (System.currentTimeMillis() >= nextRefresh) {
                    if (followFromBeginning(consumer, Topics.ALL_ENROLLMENT, assigned)) {
                        LOG.info("following {} enrollment partitions", assigned.size());
                    }
                    nextRefresh = System.currentTimeMillis() + REFRESH_MS;
                }
                if (assigned.isEmpty()) {
                    Thread.sleep(200);
                    continue;
                }
                for (ConsumerRecord<String, byte[]> rec : consumer.poll(Duration.ofMillis(200))) {
                    handle(rec);
                }
            }
        } catch (WakeupException e) {
            // stop() asked us to leave poll().
        }
    }

    private void handle(ConsumerRecord<String, byte[]> rec) {
        String site = Topics.siteOf(rec.topic());
        try {
            PerturbedFace f = FaceRecords.decodeFromTopic(rec.topic(), rec.value());
            if (registry.addEnrollment(f)) {
                metrics.counter("privface.recognizer.enrollments", "site", site).increment();
            } else {
                metrics.counter("privface.recognizer.duplicates", "site", site, "kind", "enrollment").increment();
            }
        } catch (InvalidRecordException e) {
            output.deadLetter(rec, e.getMessage());
        }
    }
}
