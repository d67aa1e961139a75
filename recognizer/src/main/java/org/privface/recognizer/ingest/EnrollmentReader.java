package org.privface.recognizer.ingest;


import io.micrometer.core.instrument.MeterRegistry;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.privface.recognizer.model.ModelRegistry;
import org.privface.recognizer.publish.RecognizerOutput;
import org.privface.wire.FaceRecords;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.InvalidRecordException;
import org.privface.wire.UnknownSchemaException;
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

    private final KafkaClientProperties kafka;
    private final ModelRegistry registry;
    private final RecognizerOutput output;
    private final MeterRegistry metrics;
    private final org.privface.recognizer.answer.GalleryService galleries;

    public EnrollmentReader(KafkaClientProperties kafka, ModelRegistry registry,
                            RecognizerOutput output, MeterRegistry metrics,
                            org.privface.recognizer.answer.GalleryService galleries) {
        super("enrollment-reader");
        this.galleries = galleries;
        this.kafka = kafka;
        this.registry = registry;
        this.output = output;
        this.metrics = metrics;
    }

    @Override
    protected void runLoop() throws InterruptedException {
        readEverything(kafka, Topics.ALL_ENROLLMENT, "privface-recognizer-enrollment", "enrollment", this::handle);
    }

    private void handle(ConsumerRecord<String, byte[]> rec) {
        String site = Topics.siteOf(rec.topic());
        if (rec.value() == null) {
            // A tombstone (an erased person's record, docs/operations.md): the record of that key is gone.
            if (rec.key() != null) {
                int n = registry.removeKey(site, rec.key());
                galleries.remove(site, rec.key()::equals, java.time.Instant.MAX);
                metrics.counter("privface.recognizer.tombstones", "site", site).increment();
                LOG.debug("tombstone on {}: {} enrollment(s) dropped", rec.topic(), n);
            }
            return;
        }
        try {
            PerturbedFace f = FaceRecords.decodeFromTopic(rec.topic(), rec.value());
            java.time.Instant written = java.time.Instant.ofEpochMilli(rec.timestamp());
            if (registry.addEnrollment(f, rec.key(), written)) {
                galleries.add(f, rec.key(), written);
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
