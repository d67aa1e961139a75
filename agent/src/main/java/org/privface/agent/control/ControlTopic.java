package org.privface.agent.control;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

import io.micronaut.serde.ObjectMapper;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.privface.agent.policy.PolicyOverride;
import org.privface.agent.policy.PolicyStore;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.topics.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the site's compacted control topic, where the operator writes a JSON
 * {@link PolicyOverride} under the key of the site. On start it replays the topic from the
 * beginning, so the latest instruction survives a gateway restart. Every record goes through the
 * same {@link PolicyStore#applyRemote} as REST, floor included; a malformed one is audited as
 * rejected and skipped. After each change, and every report interval, the gateway's report goes
 * to the site's compacted status topic under its gateway id, so the operator sees what was applied.
 */
public final class ControlTopic implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlTopic.class);
    /** Header naming the operator who wrote a control record; recorded in the audit log. */
    public static final String OPERATOR_HEADER = "privface.operator";
    /** Largest control record read; a policy change is a few hundred bytes. */
    static final int MAX_CONTROL_BYTES = 4096;

    private final GatewayState state;
    private final ObjectMapper json;
    private final KafkaConsumer<String, byte[]> consumer;
    private final KafkaProducer<String, String> status;
    private final String site;
    private final Duration reportEvery;
    private final Thread thread;
    private volatile boolean running = true;
    /** Opens once the records that were on the topic at start have been applied. */
    private final java.util.concurrent.CountDownLatch replayed = new java.util.concurrent.CountDownLatch(1);

    public ControlTopic(String bootstrapServers, GatewayState state, ObjectMapper json) {
        this(KafkaClientProperties.bootstrap(bootstrapServers), state, json, Duration.ofSeconds(10));
    }

    /**
     * @param client the gateway's {@code kafka.*} settings (bootstrap servers, security) for both clients
     * @param reportEvery how often the report is sent when nothing changes
     */
    public ControlTopic(KafkaClientProperties client, GatewayState state, ObjectMapper json, Duration reportEvery) {
        if (reportEvery.isNegative() || reportEvery.isZero()) {
            throw new IllegalArgumentException("agent.control.report-interval must be positive, not " + reportEvery);
        }
        this.reportEvery = reportEvery;
        this.state = state;
        this.json = json;
        this.site = state.policies().site();
        Properties c = client.consumer();
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "privface-agent-control-" + state.gatewayId());
        this.consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer());
        Properties p = client.producer();
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 5_000);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "privface-agent-status-" + state.gatewayId());
        this.status = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
        state.policies().onChange(v -> report());
        this.thread = new Thread(this::run, "agent-control-topic");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        TopicPartition tp = new TopicPartition(Topics.control(site), 0);
        long nextReport = 0;
        try {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = -1;
            while (running) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    apply(r);
                }
                if (replayed.getCount() > 0) {
                    try {
                        if (end < 0) {
                            end = consumer.endOffsets(List.of(tp), Duration.ofSeconds(5)).getOrDefault(tp, 0L);
                        }
                        if (consumer.position(tp, Duration.ofSeconds(5)) >= end) {
                            replayed.countDown();
                        }
                    } catch (org.apache.kafka.common.errors.TimeoutException e) {
                        // the broker is not answering yet; asked again after the next poll
                    }
                }
                if (System.nanoTime() > nextReport) {
                    report();
                    nextReport = System.nanoTime() + reportEvery.toNanos();
                }
            }
        } catch (WakeupException e) {
            // close() woke us up
        } catch (RuntimeException e) {
            LOG.error("control topic {} stopped: {}", tp, e.toString());
        }
    }

    void apply(ConsumerRecord<String, byte[]> r) {
        if (!site.equals(r.key())) {
            // Another key is not addressed to this site; a compacted topic refuses keyless records anyway.
            return;
        }
        Header h = r.headers().lastHeader(OPERATOR_HEADER);
        String operator = h == null ? "unknown" : new String(h.value(), StandardCharsets.UTF_8).replaceAll("[^A-Za-z0-9._@-]", "_");
        String source = "control-topic@" + r.offset();
        if (r.value() == null) {
            return; // a tombstone clears the topic's state; the gateway keeps its current policy
        }
        PolicyOverride change;
        try {
            if (r.value().length > MAX_CONTROL_BYTES) {
                throw new IllegalArgumentException("control record of " + r.value().length + " bytes");
            }
            change = json.readValue(r.value(), PolicyOverride.class);
        } catch (Exception e) {
            state.policies().applyRemote(null, source, operator + " (unreadable: " + e.getClass().getSimpleName() + ")");
            return;
        }
        PolicyStore.Result res = state.policies().applyRemote(change, source, operator);
        LOG.info("control topic offset {}: {} {}", r.offset(), res.outcome(), res.reason());
    }

    /**
     * Waits until the instructions already on the topic at start are applied, so the gateway acts
     * on the policy the operator last set rather than on each older one in turn; false on timeout.
     */
    public boolean awaitReplay(Duration timeout) throws InterruptedException {
        return replayed.await(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** Publishes the gateway's report on the site's status topic, keyed by gateway. */
    public void report() {
        try {
            status.send(new ProducerRecord<>(Topics.status(site), state.gatewayId(), json.writeValueAsString(state.report())));
        } catch (Exception e) {
            LOG.debug("status report not sent: {}", e.toString());
        }
    }

    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        consumer.close(Duration.ofSeconds(2));
        status.close(Duration.ofSeconds(2));
    }
}
