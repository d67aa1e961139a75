package org.privface.recognizer.ingest;

import java.time.Instant;

import io.micrometer.core.instrument.MeterRegistry;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.privface.recognizer.answer.AnswerResults;
import org.privface.recognizer.publish.RecognizerOutput;
import org.privface.wire.FaceRecords;
import org.privface.wire.InvalidRecordException;
import org.privface.wire.UnknownSchemaException;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.topics.Topics;

/**
 * Reads every site's answer records from the beginning (no group: the tallies are rebuilt from
 * the topic after a restart), publishes each as a result and counts it for the unbiased
 * per-identity estimates; a bad record is dead-lettered.
 */
@Singleton
public class AnswerReader extends PollingWorker {
    private final KafkaClientProperties kafka;
    private final RecognizerOutput output;
    private final MeterRegistry metrics;
    private final AnswerResults tally = new AnswerResults();

    public AnswerReader(KafkaClientProperties kafka, RecognizerOutput output, MeterRegistry metrics) {
        super("answer-reader");
        this.kafka = kafka;
        this.output = output;
        this.metrics = metrics;
    }

    @Override
    protected void runLoop() throws InterruptedException {
        readEverything(kafka, Topics.ALL_ANSWER, "privface-recognizer-answers", "answer", this::handle);
    }

    void handle(ConsumerRecord<String, byte[]> rec) {
        try {
            FaceAnswer a = FaceRecords.decodeAnswerFromTopic(rec.topic(), rec.value());
            tally.add(a);
            output.result(AnswerResults.result(a, Instant.now()));
            metrics.counter("privface.recognizer.answers", "site", a.getSiteId()).increment();
            if (a.getLabel() == null) {
                // The "unknown" share against the gallery's calibration (k8s/monitoring, answer-rate drift).
                metrics.counter("privface.recognizer.answers.unknown", "site", a.getSiteId()).increment();
            }
        } catch (UnknownSchemaException e) {
            // A newer revision's record: left in the topic (read from the beginning, never committed)
            // for the upgraded recognizer, not dead-lettered (docs/operations.md, "Upgrades").
            metrics.counter("privface.recognizer.records.parked", "site", Topics.siteOf(rec.topic()), "kind", "answer").increment();
        } catch (InvalidRecordException e) {
            output.deadLetter(rec, e.getMessage());
        }
    }

    /** Released and estimated counts per site, gallery version and channel. */
    public java.util.Map<String, AnswerResults.Estimate> estimates() {
        return tally.estimates();
    }
}
