package org.privface.agent.control;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
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
import org.privface.agent.policy.AuditLog;
import org.privface.agent.policy.PolicyOverride;
import org.privface.agent.policy.PolicyStore;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the site's compacted control topic, where the operator's console writes a JSON
 * {@link PolicyOverride} under the key of the site, signed with an operator key. Only a record
 * that {@link ControlSignatures} accepts (signed by a key of the gateway's own configuration,
 * for this site, newer than the key's last record, not stale) goes on to the same
 * {@link PolicyStore#applyRemote} as REST, floor included; any other, and a malformed one, is
 * audited as rejected and changes nothing. On start it replays the topic from the beginning and
 * applies the last accepted record again, so the latest instruction survives a gateway restart.
 * After each change, and every report interval, the gateway's report goes to the site's
 * compacted status topic under its gateway id, so the operator sees what was applied.
 */
public final class ControlTopic implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlTopic.class);
    /** Header naming the operator who proposed a control record; signed, and recorded in the audit log. */
    public static final String OPERATOR_HEADER = SignedControl.OPERATOR_HEADER;
    /** Largest control record read; a policy change is a few hundred bytes. */
    static final int MAX_CONTROL_BYTES = 4096;
    /** How long a record that could not be recorded (a full disk) waits before it is judged again. */
    static final Duration RETRY_PAUSE = Duration.ofSeconds(1);

    private final GatewayState state;
    private final ControlSignatures signatures;
    private final ObjectMapper json;
    private final KafkaConsumer<String, byte[]> consumer;
    private final KafkaProducer<String, String> status;
    private final String site;
    private final Duration reportEvery;
    private final Thread thread;
    private volatile boolean running = true;
    /** Offsets below this were on the topic when the gateway started reading it; -1 until known. */
    private long replayEnd = -1;
    private volatile boolean caughtUp;
    /** Opens once the records that were on the topic at start have been judged. */
    private final java.util.concurrent.CountDownLatch replayed = new java.util.concurrent.CountDownLatch(1);

    /**
     * @param client the gateway's {@code kafka.*} settings (bootstrap servers, security) for both clients
     * @param reportEvery how often the report is sent when nothing changes
     * @param signatures which records may change the policy
     */
    public ControlTopic(KafkaClientProperties client, GatewayState state, ObjectMapper json, Duration reportEvery,
                        ControlSignatures signatures) {
        if (reportEvery.isNegative() || reportEvery.isZero()) {
            throw new IllegalArgumentException("agent.control.report-interval must be positive, not " + reportEvery);
        }
        this.reportEvery = reportEvery;
        this.state = state;
        this.signatures = signatures;
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
            while (running) {
                if (replayEnd < 0) {
                    try {
                        replayEnd = consumer.endOffsets(List.of(tp), Duration.ofSeconds(2)).get(tp);
                    } catch (org.apache.kafka.common.errors.TimeoutException e) {
                        LOG.debug("control topic {}: end offset not known yet: {}", tp, e.toString());
                    }
                }
                if (replayEnd >= 0) {
                    for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                        try {
                            apply(r);
                        } catch (java.io.UncheckedIOException e) {
                            // The key's counter or the audit could not be written (a full disk): nothing
                            // changed. Judge the record again after a pause, rather than drop an
                            // operator's instruction or stop following the topic.
                            LOG.error("control topic {}: offset {} not applied yet, retrying in {}: {}", tp, r.offset(),
                                    RETRY_PAUSE, e.getCause() == null ? e.toString() : e.getCause().toString());
                            consumer.seek(tp, r.offset());
                            Thread.sleep(RETRY_PAUSE.toMillis());
                            break;
                        }
                    }
                    caughtUp = caughtUp || consumer.position(tp) >= replayEnd;
                    if (caughtUp) {
                        replayed.countDown();
                    }
                }
                if (System.nanoTime() > nextReport) {
                    report();
                    nextReport = System.nanoTime() + reportEvery.toNanos();
                }
            }
        } catch (WakeupException e) {
            // close() woke us up
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.error("control topic {} stopped: {}", tp, e.toString());
        }
    }

    void apply(ConsumerRecord<String, byte[]> r) {
        if (!site.equals(r.key())) {
            // Another key is not addressed to this site; a compacted topic refuses keyless records anyway.
            return;
        }
        String source = "control-topic@" + r.offset();
        if (r.value() == null) {
            return; // a tombstone clears the topic's state; the gateway keeps its current policy
        }
        if (r.value().length > MAX_CONTROL_BYTES) {
            reject(source, claimedOperator(r), "control record of " + r.value().length + " bytes");
            return;
        }
        ControlSignatures.Verdict v = signatures.check(r.headers(), r.value(), r.offset() < replayEnd);
        switch (v.kind()) {
            case SKIP -> {
                return;
            }
            case REFUSE -> {
                reject(source, claimedOperator(r), v.reason());
                return;
            }
            default -> signatures.accepted(v);
        }
        String operator = v.envelope().operator();
        PolicyOverride change;
        try {
            change = json.readValue(r.value(), PolicyOverride.class);
        } catch (Exception e) {
            state.policies().applyRemote(null, source, operator + " (unreadable: " + e.getClass().getSimpleName() + ")");
            return;
        }
        PolicyStore.Result res = state.policies().applyRemote(change, source, operator);
        LOG.info("control topic offset {}: {} by {} (key {}{}) {}", r.offset(), res.outcome(), operator,
                v.envelope().keyId(), v.kind() == ControlSignatures.Kind.REAPPLY ? ", applied again at start" : "", res.reason());
    }

    /** The operator a refused record names, marked as unproven: nothing vouches for it. */
    private static String claimedOperator(ConsumerRecord<String, byte[]> r) {
        Header h = r.headers().lastHeader(OPERATOR_HEADER);
        String name = h == null || h.value() == null ? "unknown" : new String(h.value(), StandardCharsets.UTF_8);
        return name.replaceAll("[^A-Za-z0-9._@-]", "_") + " (unverified)";
    }

    /** Audits a record that never reaches the policy store; its unproven body is not repeated in the log. */
    private void reject(String source, String principal, String reason) {
        PolicyStore.Versioned now = state.policies().current();
        state.policies().audit().append(new AuditLog.Entry(Instant.now(), source, principal, site,
                PolicyStore.Outcome.REJECTED.name(), null, null, now.policy().epsilon(), now.version(), reason));
        LOG.warn("control topic {}: {}", source, reason);
    }

    /** Whether the records that were on the topic at start have all been judged. */
    boolean caughtUp() {
        return caughtUp;
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
