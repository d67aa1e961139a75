package org.privface.recognizer.ingest;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
import org.privface.recognizer.model.ModelKey;
import org.privface.recognizer.model.ModelRegistry;
import org.privface.recognizer.model.TrainedModel;
import org.privface.recognizer.ownership.SiteOwnership;
import org.privface.recognizer.polling.PollingWorker;
import org.privface.recognizer.publish.RecognizerOutput;
import org.privface.wire.FaceRecords;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.InvalidRecordException;
import org.privface.wire.UnknownSchemaException;
import org.privface.wire.WireLimits;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.topics.Topics;

/**
 * Answers the query records of the sites this replica owns ({@link SiteOwnership}): their
 * partitions are assigned to it whole, and progress is committed to the group
 * {@code recognizer.group-id} (offsets only: the group has no members, ownership decides who
 * reads), so a new owner starts where the old one stopped. Offsets are committed only after the
 * results (or dead letters) are acknowledged. A partition
 * whose model does not exist yet is rewound and paused, so its queries wait instead of being
 * dropped.
 */
@Singleton
public class QueryWorker extends PollingWorker {
    private static final long RETRY_MS = 1_000;
    private static final int DEDUP_CAPACITY = 100_000;

    private final KafkaClientProperties kafka;
    private final RecognizerSettings settings;
    private final ModelRegistry registry;
    private final RecognizerOutput output;
    private final MeterRegistry metrics;
    /** Recently answered event ids: agent retries re-send the same id. */
    private final Map<String, Boolean> seen = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > DEDUP_CAPACITY;
        }
    };

    private final SiteOwnership ownership;

    public QueryWorker(KafkaClientProperties kafka, RecognizerSettings settings,
                       ModelRegistry registry, RecognizerOutput output, MeterRegistry metrics,
                       SiteOwnership ownership) {
        super("query-worker");
        this.kafka = kafka;
        this.settings = settings;
        this.registry = registry;
        this.output = output;
        this.metrics = metrics;
        this.ownership = ownership;
    }

    @Override
    protected void runLoop() throws InterruptedException {
        Properties p = kafka.consumer();
        p.put(ConsumerConfig.GROUP_ID_CONFIG, settings.getGroupId());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, settings.getMaxBatch());
        p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        Map<TopicPartition, Long> pausedUntil = new HashMap<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            register(consumer);
            OwnedPartitions follow = new OwnedPartitions(ownership, "query-worker", Topics::query);
            try {
            while (running()) {
                // The batch before was committed: let go of revoked sites, take on acquired ones.
                OwnedPartitions.Change change = follow.sync(consumer);
                change.removed().forEach(pausedUntil::remove);
                if (follow.assigned().isEmpty()) {
                    Thread.sleep(200);
                    continue;
                }
                resumeDue(consumer, pausedUntil);
                ConsumerRecords<String, byte[]> batch = consumer.poll(Duration.ofMillis(200));
                if (batch.isEmpty()) {
                    continue;
                }
                Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                List<String> answered = new ArrayList<>();
                for (TopicPartition tp : batch.partitions()) {
                    Long next = process(batch.records(tp), sent, answered);
                    List<ConsumerRecord<String, byte[]>> recs = batch.records(tp);
                    long end = recs.get(recs.size() - 1).offset() + 1;
                    if (next != null && next < end) {
                        // Wait for the model: rewind to the first unanswered query and pause.
                        consumer.seek(tp, next);
                        consumer.pause(List.of(tp));
                        pausedUntil.put(tp, System.currentTimeMillis() + RETRY_MS);
                    }
                    long done = next == null ? end : next;
                    if (done > recs.get(0).offset()) {
                        commit.put(tp, new OffsetAndMetadata(done));
                    }
                }
                output.flush();
                try {
                    for (Future<RecordMetadata> f : sent) {
                        f.get();
                    }
                } catch (ExecutionException e) {
                    // Not committed, so these queries are read again; they must not count as seen.
                    answered.forEach(seen::remove);
                    throw new IllegalStateException("publishing results failed: " + e.getCause(), e);
                }
                if (!commit.isEmpty()) {
                    consumer.commitSync(commit);
                }
            }
            } finally {
                follow.clear();
            }
        } catch (WakeupException e) {
            // stop() asked us to leave poll().
        }
    }

    private static void resumeDue(KafkaConsumer<?, ?> consumer, Map<TopicPartition, Long> pausedUntil) {
        long now = System.currentTimeMillis();
        List<TopicPartition> due = pausedUntil.entrySet().stream().filter(e -> e.getValue() <= now)
                .map(Map.Entry::getKey).toList();
        if (!due.isEmpty()) {
            due.forEach(pausedUntil::remove);
            consumer.resume(due);
        }
    }

    /**
     * Answers the records of one partition in order. Returns the offset of the first record that
     * must wait for a model, or null when all were handled.
     */
    private Long process(List<ConsumerRecord<String, byte[]>> recs, List<Future<RecordMetadata>> sent,
                         List<String> answered) {
        List<PerturbedFace> pending = new ArrayList<>();
        TrainedModel pendingModel = null;
        for (ConsumerRecord<String, byte[]> rec : recs) {
            String site = Topics.siteOf(rec.topic());
            PerturbedFace f;
            try {
                f = FaceRecords.decodeFromTopic(rec.topic(), rec.value());
            } catch (UnknownSchemaException e) {
                // A newer revision's record: park the partition here, uncommitted, until a recognizer
                // that knows the revision owns it (docs/operations.md, "Upgrades"). Not a dead letter.
                metrics.counter("privface.recognizer.records.parked", "site", site, "kind", "query").increment();
                answer(pendingModel, pending, sent);
                return rec.offset();
            } catch (InvalidRecordException e) {
                sent.add(output.deadLetter(rec, e.getMessage()));
                continue;
            }
            if (seen.containsKey(f.getEventId())) {
                metrics.counter("privface.recognizer.duplicates", "site", site, "kind", "query").increment();
                continue;
            }
            Optional<TrainedModel> model = registry.model(ModelKey.of(f));
            if (model.isEmpty() && System.currentTimeMillis() - rec.timestamp() > settings.getModelWait().toMillis()) {
                // Waited long enough: a model that never comes must not stall the queries behind it.
                sent.add(output.deadLetter(rec, "no model for " + ModelKey.of(f) + " within recognizer.model-wait "
                        + settings.getModelWait()));
                continue;
            }
            if (model.isEmpty()) {
                answer(pendingModel, pending, sent);
                return rec.offset();
            }
            if (model.get().mlp().inputDim() != f.getDimension()) {
                sent.add(output.deadLetter(rec, "dimension " + f.getDimension() + " does not match model input "
                        + model.get().mlp().inputDim()));
                continue;
            }
            if (pendingModel != null && pendingModel != model.get()) {
                answer(pendingModel, pending, sent);
                pending.clear();
            }
            pendingModel = model.get();
            pending.add(f);
            // Seen from now on, so a retry of it later in the same batch is skipped too.
            seen.put(f.getEventId(), Boolean.TRUE);
            answered.add(f.getEventId());
        }
        answer(pendingModel, pending, sent);
        return null;
    }

    private void answer(TrainedModel model, List<PerturbedFace> faces, List<Future<RecordMetadata>> sent) {
        if (model == null || faces.isEmpty()) {
            return;
        }
        float[][] x = faces.stream().map(FaceRecords::vector).toArray(float[][]::new);
        List<TrainedModel.Decision> decisions = model.decide(x, settings.getUnknownThreshold(), settings.getOpenSetMargin());
        Instant now = Instant.now();
        for (int i = 0; i < x.length; i++) {
            PerturbedFace f = faces.get(i);
            TrainedModel.Decision d = decisions.get(i);
            String label = d.label();
            float confidence = d.confidence();
            sent.add(output.result(RecognitionResult.newBuilder()
                    .setSchemaVersion(WireLimits.SCHEMA_VERSION)
                    .setEventId(f.getEventId())
                    .setSiteId(f.getSiteId())
                    .setCameraId(f.getCameraId())
                    .setTrackId(f.getTrackId())
                    .setPredictedLabel(label)
                    .setConfidence(confidence)
                    .setModelVersion(model.version())
                    .setEpsilonPerFace(f.getMechanism().getEpsilonPerFace())
                    .setRecognizedAt(now)
                    .build()));
            metrics.counter("privface.recognizer.results", "site", f.getSiteId(),
                    "outcome", label == null ? "unknown" : "identified").increment();
            metrics.summary("privface.recognizer.query.epsilon.per.face", "site", f.getSiteId())
                    .record(f.getMechanism().getEpsilonPerFace());
        }
    }
}
