package org.privface.recognizer.ingest;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import io.micrometer.core.instrument.MeterRegistry;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.privface.recognizer.RecognizerSettings;
import org.privface.recognizer.answer.AnswerResults;
import org.privface.recognizer.ownership.SiteOwnership;
import org.privface.recognizer.polling.PollingWorker;
import org.privface.recognizer.publish.RecognizerOutput;
import org.privface.wire.FaceRecords;
import org.privface.wire.InvalidRecordException;
import org.privface.wire.UnknownSchemaException;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.topics.Topics;

/**
 * Turns the answer records of the sites this replica owns into results, and counts them for the
 * unbiased per-identity estimates; a bad record is dead-lettered. Progress is committed to the
 * consumer group {@code <group-id>.answers} only after the results of a batch are acknowledged,
 * so an answer is published once across restarts and owner changes (at least once if a replica
 * dies between the acknowledgement and the commit). When a site is acquired its answer topic is
 * read from the beginning: records below the committed offset only rebuild the tallies, the
 * rest become results.
 */
@Singleton
public class AnswerReader extends PollingWorker {
    private final KafkaClientProperties kafka;
    private final RecognizerSettings settings;
    private final RecognizerOutput output;
    private final MeterRegistry metrics;
    private final SiteOwnership ownership;
    private final AnswerResults tally = new AnswerResults();

    public AnswerReader(KafkaClientProperties kafka, RecognizerSettings settings, RecognizerOutput output,
                        MeterRegistry metrics, SiteOwnership ownership) {
        super("answer-reader");
        this.kafka = kafka;
        this.settings = settings;
        this.output = output;
        this.metrics = metrics;
        this.ownership = ownership;
        ownership.listen(site -> { }, tally::forget);
    }

    /** The group whose committed offsets say which answers are already results. */
    static String group(RecognizerSettings settings) {
        return settings.getGroupId() + ".answers";
    }

    @Override
    protected void runLoop() throws InterruptedException {
        Properties p = kafka.consumer();
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group(settings));
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "privface-recognizer-answers");
        OwnedPartitions follow = new OwnedPartitions(ownership, "answer-reader", Topics::answer);
        Map<TopicPartition, Long> parked = new HashMap<>();
        // Per partition, the first offset not yet published as a result.
        Map<TopicPartition, Long> publishFrom = new HashMap<>();
        try (var consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            register(consumer);
            while (running()) {
                OwnedPartitions.Change c = follow.sync(consumer);
                c.removed().forEach(publishFrom::remove);
                if (!c.added().isEmpty()) {
                    Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(c.added());
                    for (TopicPartition tp : c.added()) {
                        OffsetAndMetadata om = committed.get(tp);
                        publishFrom.put(tp, om == null ? 0 : om.offset());
                    }
                    consumer.seekToBeginning(c.added());
                }
                if (follow.assigned().isEmpty()) {
                    Thread.sleep(200);
                    continue;
                }
                parked.keySet().retainAll(consumer.assignment());
                for (var it = parked.entrySet().iterator(); it.hasNext(); ) {
                    var e = it.next();
                    if (System.nanoTime() - e.getValue() > PARKED_RETRY.toNanos()) {
                        consumer.resume(List.of(e.getKey()));
                        it.remove();
                    }
                }
                ConsumerRecords<String, byte[]> batch = consumer.poll(Duration.ofMillis(200));
                if (batch.isEmpty()) {
                    continue;
                }
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
                for (TopicPartition tp : batch.partitions()) {
                    long from = publishFrom.getOrDefault(tp, 0L);
                    long last = -1;
                    for (ConsumerRecord<String, byte[]> rec : batch.records(tp)) {
                        if (!handle(rec, rec.offset() >= from, sent)) {
                            // A newer revision's record: the partition stops at it, uncommitted, for an upgraded
                            // recognizer (docs/operations.md, "Upgrades"); retried after a pause.
                            consumer.seek(tp, rec.offset());
                            consumer.pause(List.of(tp));
                            parked.put(tp, System.nanoTime());
                            break;
                        }
                        last = rec.offset();
                    }
                    if (last + 1 > from) {
                        commit.put(tp, new OffsetAndMetadata(last + 1));
                        publishFrom.put(tp, last + 1);
                    }
                }
                output.flush();
                try {
                    for (Future<RecordMetadata> f : sent) {
                        f.get();
                    }
                } catch (ExecutionException e) {
                    throw new IllegalStateException("publishing results failed: " + e.getCause(), e);
                }
                if (!commit.isEmpty()) {
                    consumer.commitSync(commit);
                }
            }
        } catch (WakeupException e) {
            // stop() asked us to leave poll().
        } finally {
            follow.clear();
        }
    }

    /** How long a partition stopped at a record of an unknown schema waits before it is read again. */
    static final Duration PARKED_RETRY = Duration.ofSeconds(30);

    /**
     * Counts one answer record and, when {@code publish}, writes its result (or dead letter). False for a
     * record of a schema this build does not know: it is neither counted nor committed.
     */
    boolean handle(ConsumerRecord<String, byte[]> rec, boolean publish, List<Future<RecordMetadata>> sent) {
        try {
            FaceAnswer a = FaceRecords.decodeAnswerFromTopic(rec.topic(), rec.value());
            tally.add(a);
            if (publish) {
                sent.add(output.result(AnswerResults.result(a, Instant.now())));
                metrics.counter("privface.recognizer.answers", "site", a.getSiteId()).increment();
                if (a.getLabel() == null) {
                    // The "unknown" share against the gallery's calibration (k8s/monitoring, answer-rate drift).
                    metrics.counter("privface.recognizer.answers.unknown", "site", a.getSiteId()).increment();
                }
            }
        } catch (UnknownSchemaException e) {
            metrics.counter("privface.recognizer.records.parked", "site", Topics.siteOf(rec.topic()), "kind", "answer").increment();
            return false;
        } catch (InvalidRecordException e) {
            if (publish) {
                sent.add(output.deadLetter(rec, e.getMessage()));
            }
        }
        return true;
    }

    /** Released and estimated counts per site, gallery version and channel, of the sites this replica owns. */
    public Map<String, AnswerResults.Estimate> estimates() {
        return tally.estimates();
    }
}
