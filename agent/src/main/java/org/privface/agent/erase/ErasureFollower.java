package org.privface.agent.erase;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.PublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.control.SignedControl;
import org.privface.wire.erasure.Erasures;
import org.privface.wire.topics.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the site's erasure topic from its beginning and carries out every erasure command an
 * operator key of the gateway's own configuration signed for this site (the keys that sign control
 * records, in the erasure domain), then reports its completion on the same topic. A command from
 * the future (beyond the clock skew) is refused; an old one is harmless, because the erasure only
 * reaches images enrolled before the command was issued ({@link GatewayErasure}). Completed
 * request ids are kept in {@code erasures-done.txt} in the data directory (ids only), so a restart
 * does not report again; an erasure interrupted by a crash is not in it and runs again.
 */
public final class ErasureFollower implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ErasureFollower.class);
    static final String DONE_FILE = "erasures-done.txt";

    /** What the gateway does for one verified command: the counts of its completion report. */
    public interface Handler {
        Map<String, String> erase(String pseudonym, Instant issuedAt) throws Exception;
    }

    private final String site;
    private final String component;
    private final Map<String, PublicKey> keys;
    private final Duration maxSkew;
    private final Handler handler;
    private final Path doneFile;
    private final Set<String> done = new HashSet<>();
    private final KafkaConsumer<String, byte[]> consumer;
    private final KafkaProducer<String, byte[]> producer;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long completed;
    private volatile long refused;

    public ErasureFollower(KafkaClientProperties client, String site, String gatewayId, Map<String, PublicKey> keys,
                           Duration maxSkew, Path dataDir, Handler handler) throws IOException {
        this.site = site;
        this.component = "gateway:" + gatewayId;
        this.keys = Map.copyOf(keys);
        this.maxSkew = maxSkew;
        this.handler = handler;
        this.doneFile = dataDir.resolve(DONE_FILE);
        if (Files.exists(doneFile)) {
            Files.readAllLines(doneFile, StandardCharsets.UTF_8).stream().map(String::strip).filter(l -> !l.isEmpty())
                    .forEach(done::add);
        }
        Properties c = client.consumer();
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "privface-agent-erasure-" + gatewayId);
        consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer());
        Properties p = client.producer();
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "privface-agent-erasure-report-" + gatewayId);
        producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
        thread = new Thread(this::run, "agent-erasure");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        TopicPartition tp = new TopicPartition(Topics.erasure(site), 0);
        try {
            // The topic may not exist yet on an older cluster: look quietly until it does.
            while (running && consumer.partitionsFor(tp.topic(), Duration.ofSeconds(5)).isEmpty()) {
                for (int i = 0; i < 50 && running; i++) {
                    Thread.sleep(200);
                }
            }
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            while (running) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    if (!handle(r)) {
                        consumer.seek(tp, r.offset()); // not done (a disk or broker fault): again after a pause
                        Thread.sleep(2_000);
                        break;
                    }
                }
            }
        } catch (WakeupException e) {
            // close()
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.error("erasure topic {} stopped: {}", tp, e.toString());
        }
    }

    /** Judges one record; false when a verified command could not be completed yet. */
    boolean handle(ConsumerRecord<String, byte[]> r) {
        if (!Erasures.isCommand(r.value())) {
            return true; // a report, or nothing of ours
        }
        Erasures.Command c;
        try {
            c = Erasures.readCommand(r);
        } catch (IllegalArgumentException e) {
            refused++;
            LOG.warn("erasure topic offset {}: refused, {}", r.offset(), e.getMessage());
            return true;
        }
        if (done.contains(c.request())) {
            return true;
        }
        PublicKey key = keys.get(c.envelope().keyId());
        if (key == null || !c.site().equals(site)
                || !SignedControl.verify(SignedControl.ERASURE_DOMAIN, key, site, c.envelope(), r.value())) {
            refused++;
            LOG.warn("erasure topic offset {}: refused, {}", r.offset(), key == null ? "signed by a key this gateway does"
                    + " not trust (" + c.envelope().keyId() + ")" : "bad signature");
            return true;
        }
        Instant issued = Instant.ofEpochMilli(c.envelope().issuedAt());
        if (issued.isAfter(Instant.now().plus(maxSkew))) {
            refused++;
            LOG.warn("erasure topic offset {}: refused, issued in the future ({})", r.offset(), issued);
            return true;
        }
        try {
            Map<String, String> counts = handler.erase(c.person(), issued);
            producer.send(Erasures.report(site, new Erasures.Report(c.person(), c.request(), component, Instant.now(),
                    counts))).get();
            Files.writeString(doneFile, c.request() + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND, StandardOpenOption.SYNC);
            done.add(c.request());
            completed++;
            LOG.info("erasure request {} by {} (key {}) completed: {}", c.request(), c.envelope().operator(),
                    c.envelope().keyId(), counts);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (Exception e) {
            LOG.error("erasure request {} not completed yet, retrying: {}", c.request(), e.toString());
            return false;
        }
    }

    public long completed() {
        return completed;
    }

    public long refused() {
        return refused;
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
        producer.close(Duration.ofSeconds(2));
    }
}
