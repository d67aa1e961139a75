package org.privface.recognizer.ingest;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import io.micrometer.core.instrument.MeterRegistry;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.privface.recognizer.answer.GalleryService;
import org.privface.recognizer.model.ModelRegistry;
import org.privface.recognizer.ownership.SiteOwnership;
import org.privface.recognizer.polling.PollingWorker;
import org.privface.recognizer.publish.RecognizerOutput;
import org.privface.wire.FaceRecords;
import org.privface.wire.InvalidRecordException;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.UnknownSchemaException;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.topics.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replays the enrollment topics of the sites this replica owns ({@link SiteOwnership}) from the
 * beginning, and follows them. The topics keep enrollments forever, so they are the training set
 * of record: a new owner replays them and loses none. A site counts as replayed once every
 * partition of its topic is read to the end offset captured when the site was acquired; until
 * then nothing of it is trained or published. No consumer group and no commits: the offsets that
 * matter are the topic's ends.
 */
@Singleton
public class EnrollmentReader extends PollingWorker {
    private static final Logger LOG = LoggerFactory.getLogger(EnrollmentReader.class);
    private final KafkaClientProperties kafka;
    private final ModelRegistry registry;
    private final RecognizerOutput output;
    private final MeterRegistry metrics;
    private final GalleryService galleries;
    private final SiteOwnership ownership;

    public EnrollmentReader(KafkaClientProperties kafka, ModelRegistry registry, RecognizerOutput output,
                            MeterRegistry metrics, GalleryService galleries, SiteOwnership ownership) {
        super("enrollment-reader");
        this.galleries = galleries;
        this.kafka = kafka;
        this.registry = registry;
        this.output = output;
        this.metrics = metrics;
        this.ownership = ownership;
    }

    @Override
    protected void runLoop() throws InterruptedException {
        Properties p = kafka.consumer();
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "privface-recognizer-enrollment");
        OwnedPartitions follow = new OwnedPartitions(ownership, "enrollment-reader", Topics::enrollment);
        Map<TopicPartition, Long> replayTo = new HashMap<>();
        Set<String> replaying = new HashSet<>();
        try (var consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            register(consumer);
            while (running()) {
                OwnedPartitions.Change c = follow.sync(consumer);
                c.removed().forEach(replayTo::remove);
                if (!c.added().isEmpty()) {
                    consumer.seekToBeginning(c.added());
                    replayTo.putAll(consumer.endOffsets(c.added()));
                    c.added().forEach(tp -> replaying.add(Topics.siteOf(tp.topic())));
                }
                if (follow.assigned().isEmpty()) {
                    Thread.sleep(200);
                    continue;
                }
                for (var rec : consumer.poll(Duration.ofMillis(200))) {
                    handle(rec);
                }
                if (!replaying.isEmpty()) {
                    replayTo.entrySet().removeIf(e -> consumer.position(e.getKey()) >= e.getValue());
                    Set<String> behind = new HashSet<>();
                    replayTo.keySet().forEach(tp -> behind.add(Topics.siteOf(tp.topic())));
                    for (var it = replaying.iterator(); it.hasNext(); ) {
                        String site = it.next();
                        if (!behind.contains(site)) {
                            ownership.enrollmentsReplayed(site);
                            it.remove();
                        }
                    }
                }
            }
        } catch (WakeupException e) {
            // stop() asked us to leave poll().
        } finally {
            follow.clear();
        }
    }

    private void handle(ConsumerRecord<String, byte[]> rec) {
        String site = Topics.siteOf(rec.topic());
        if (rec.value() == null) {
            // A tombstone (an erased person's record, docs/operations.md): the record of that key is gone.
            if (rec.key() != null) {
                int n = registry.removeKey(site, rec.key());
                if (n > 0) {
                    galleries.erased(site);
                }
                metrics.counter("privface.recognizer.tombstones", "site", site).increment();
                LOG.debug("tombstone on {}: {} enrollment(s) dropped", rec.topic(), n);
            }
            return;
        }
        try {
            PerturbedFace f = FaceRecords.decodeFromTopic(rec.topic(), rec.value());
            java.time.Instant written = java.time.Instant.ofEpochMilli(rec.timestamp());
            if (registry.addEnrollment(f, rec.key(), written)) {
                galleries.add(f);
                metrics.counter("privface.recognizer.enrollments", "site", site).increment();
            } else {
                metrics.counter("privface.recognizer.duplicates", "site", site, "kind", "enrollment").increment();
            }
        } catch (UnknownSchemaException e) {
            // A newer revision's record: left in the topic (read from the beginning, never committed)
            // for the upgraded recognizer, not dead-lettered (docs/operations.md, "Upgrades").
            metrics.counter("privface.recognizer.records.parked", "site", site, "kind", "enrollment").increment();
        } catch (InvalidRecordException e) {
            output.deadLetter(rec, e.getMessage());
        }
    }
}
