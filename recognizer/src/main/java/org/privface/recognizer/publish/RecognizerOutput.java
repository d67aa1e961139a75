package org.privface.recognizer.publish;

import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.concurrent.Future;

import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.privface.wire.FaceRecords;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.topics.Topics;

/** Everything the recognizer writes: results, and records it could not use, with the reason. */
@Singleton
public class RecognizerOutput implements AutoCloseable {
    private final KafkaProducer<String, byte[]> producer;

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RecognizerOutput.class);
    private final io.micrometer.core.instrument.MeterRegistry metrics;

    public RecognizerOutput(KafkaClientProperties kafka, io.micrometer.core.instrument.MeterRegistry metrics) {
        this.metrics = metrics;
        Properties p = kafka.producer();
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "privface-recognizer");
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    public Future<RecordMetadata> result(RecognitionResult r) {
        return producer.send(new ProducerRecord<>(Topics.RESULTS, r.getCameraId(), FaceRecords.encode(r)));
    }

    /**
     * The original bytes, untouched, with where they came from and why they were refused; counted
     * per site and logged (the reason, never the payload).
     */
    public Future<RecordMetadata> deadLetter(ConsumerRecord<String, byte[]> rec, String reason) {
        String site;
        try {
            site = Topics.siteOf(rec.topic());
        } catch (IllegalArgumentException e) {
            site = "unknown";
        }
        metrics.counter("privface.recognizer.dead.letters", "site", site).increment();
        LOG.warn("dead-lettered {}/{}@{}: {}", rec.topic(), rec.partition(), rec.offset(), reason);
        ProducerRecord<String, byte[]> out = new ProducerRecord<>(Topics.DEAD_LETTER, rec.key(), rec.value());
        out.headers().add("privface.reason", reason.getBytes(StandardCharsets.UTF_8));
        out.headers().add("privface.source", (rec.topic() + "/" + rec.partition() + "@" + rec.offset())
                .getBytes(StandardCharsets.UTF_8));
        return producer.send(out);
    }

    /** Blocks until everything sent so far is acknowledged; offsets are committed only after this. */
    public void flush() {
        producer.flush();
    }

    @PreDestroy
    @Override
    public void close() {
        producer.close();
    }
}
