package org.privface.agent.publish;

import java.util.Properties;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.privface.privacy.Release;
import org.privface.wire.FaceRecords;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.topics.Topics;

/**
 * Sends perturbed faces' records ({@link PerturbedRecords} builds them from a {@link Release},
 * which holds noisy coordinates and no pixels) and the spool's encoded ones. Idempotent producer with acks=all, so broker retries never
 * duplicate a record; keyed by camera so one camera's records stay in order.
 */
public final class FacePublisher implements AutoCloseable {
    private final KafkaProducer<String, byte[]> producer;
    private final String siteId;

    public FacePublisher(String bootstrapServers, String siteId, Properties overrides) {
        this(KafkaClientProperties.bootstrap(bootstrapServers), siteId, overrides);
    }

    /**
     * @param client the gateway's {@code kafka.*} settings (bootstrap servers, security), applied
     *               first; this producer's own settings and then {@code overrides} go on top
     */
    public FacePublisher(KafkaClientProperties client, String siteId, Properties overrides) {
        this.siteId = Topics.checkSite(siteId);
        Properties p = client.producer();
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "privface-agent-" + siteId);
        // Fail a delivery within seconds rather than two minutes: the record is on the spool and
        // will be resent, and send() must not block the uplink for long while the broker is away.
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 15_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 5_000);
        p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 2_000);
        p.putAll(overrides);
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    /** The site whose topics this publisher sends to. */
    public String site() {
        return siteId;
    }

    /** Sends a record to its site's enrollment or query topic; completes on broker acknowledgement. */
    public CompletableFuture<RecordMetadata> send(PerturbedFace face) {
        String topic = face.getKind() == RecordKind.ENROLLMENT ? Topics.enrollment(siteId) : Topics.query(siteId);
        byte[] value = FaceRecords.encode(face);
        CompletableFuture<RecordMetadata> done = new CompletableFuture<>();
        producer.send(new ProducerRecord<>(topic, face.getCameraId(), value), (md, e) -> {
            if (e != null) {
                done.completeExceptionally(e);
            } else {
                done.complete(md);
            }
        });
        return done;
    }

    /** Sends an already-encoded record, as the uplink replays it from the spool. */
    public void sendRaw(ProducerRecord<String, byte[]> record, org.apache.kafka.clients.producer.Callback callback) {
        producer.send(record, callback);
    }

    public void flush() {
        producer.flush();
    }

    @Override
    public void close() {
        // Bounded: a dead broker must not hold up shutdown; unacknowledged records stay spooled.
        producer.close(java.time.Duration.ofSeconds(5));
    }
}
