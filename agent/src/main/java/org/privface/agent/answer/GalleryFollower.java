package org.privface.agent.answer;

import java.security.PublicKey;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.privface.privacy.answer.Gallery;
import org.privface.wire.FaceRecords;
import org.privface.wire.InvalidRecordException;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The site's gallery model as the gateway holds it: the latest record of
 * {@code privface.<site>.gallery} whose Ed25519 signature (domain
 * {@link SignedControl#GALLERY_DOMAIN}) checks under one of the recognizer keys the gateway trusts,
 * for this site, that decodes and validates, and whose version is above the one held. Anything
 * else (unsigned, forged, tampered, another site's, older, malformed) is logged, counted and
 * changes nothing. Privacy never depends on the gallery (randomized response is ε-LDP whatever
 * it holds); the signature is for integrity: a forged gallery would make answers useless.
 */
public final class GalleryFollower implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GalleryFollower.class);

    private final String site;
    private final Map<String, PublicKey> keys;
    private volatile Gallery current;
    private volatile FaceGallery currentRecord;
    private volatile String lastRefusal;
    private final AtomicLong refused = new AtomicLong();
    private KafkaConsumer<String, byte[]> consumer;
    private Thread thread;
    private volatile boolean running = true;
    /** Opens once the records on the topic at start have been judged. */
    private final java.util.concurrent.CountDownLatch replayed = new java.util.concurrent.CountDownLatch(1);

    /** @param keys the recognizer keys trusted for galleries, by key id */
    public GalleryFollower(String site, Map<String, PublicKey> keys) {
        this.site = Topics.checkSite(site);
        this.keys = Map.copyOf(keys);
    }

    /**
     * Judges one record of the gallery topic; installs it when it is good. Returns why it was
     * refused, or empty when it was installed.
     */
    public synchronized Optional<String> offer(String topic, String key, Headers headers, byte[] value) {
        String why = check(topic, key, headers, value);
        if (why != null) {
            refused.incrementAndGet();
            lastRefusal = why;
            LOG.warn("gallery record on {} refused: {}", topic, why);
            return Optional.of(why);
        }
        return Optional.empty();
    }

    private String check(String topic, String key, Headers headers, byte[] value) {
        if (!Topics.gallery(site).equals(topic) || !site.equals(key)) {
            return "not this site's gallery (" + topic + ", key " + key + ")";
        }
        if (value == null) {
            return "a tombstone: the gateway keeps its gallery";
        }
        SignedControl.Envelope e;
        try {
            e = SignedControl.Envelope.of(headers);
        } catch (IllegalArgumentException ex) {
            return ex.getMessage();
        }
        PublicKey k = keys.get(e.keyId());
        if (k == null) {
            return "signed with key " + e.keyId() + ", which this gateway does not trust for galleries";
        }
        if (!SignedControl.verify(SignedControl.GALLERY_DOMAIN, k, site, e, value)) {
            return "bad signature under key " + e.keyId() + " (forged or tampered)";
        }
        FaceGallery g;
        Gallery model;
        try {
            g = FaceRecords.decodeGalleryFromTopic(topic, value);
            model = new Gallery(g.getVersion(), g.getBasisId(), g.getLabels(), FaceRecords.templates(g), g.getThreshold());
        } catch (InvalidRecordException | IllegalArgumentException ex) {
            return "signed but invalid: " + ex.getMessage();
        }
        Gallery held = current;
        if (held != null && g.getVersion() <= held.version()) {
            return "version " + g.getVersion() + " is not above the held " + held.version();
        }
        current = model;
        currentRecord = g;
        LOG.info("gallery {} of site {} installed: {} people, space {}, threshold {}", g.getVersion(), site,
                model.identities(), g.getBasisId(), g.getThreshold());
        return null;
    }

    /** The gallery to decode with, if one was accepted. */
    public Optional<Gallery> current() {
        return Optional.ofNullable(current);
    }

    /** Why there is no gallery to answer with, or empty when there is one. */
    public Optional<String> whyNone() {
        if (current != null) {
            return Optional.empty();
        }
        return Optional.of(lastRefusal == null ? "no signed gallery received yet on " + Topics.gallery(site)
                : "no valid gallery: the last record was refused: " + lastRefusal);
    }

    /** For the status report: the gallery held (its version and size, nothing of a person) and refusals. */
    public Map<String, Object> status() {
        Map<String, Object> m = new LinkedHashMap<>();
        FaceGallery g = currentRecord;
        if (g != null) {
            m.put("version", g.getVersion());
            m.put("identities", g.getLabels().size());
            m.put("basisId", g.getBasisId());
        }
        whyNone().ifPresent(w -> m.put("none", w));
        m.put("refused", refused.get());
        return m;
    }

    public long refusedCount() {
        return refused.get();
    }

    /** Follows the topic from its beginning on a daemon thread (assigned partition, no group). */
    public synchronized GalleryFollower start(KafkaClientProperties client) {
        Properties c = client.consumer();
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "privface-agent-gallery-" + site);
        consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer());
        thread = new Thread(this::run, "agent-gallery-topic");
        thread.setDaemon(true);
        thread.start();
        return this;
    }

    private void run() {
        TopicPartition tp = new TopicPartition(Topics.gallery(site), 0);
        try {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = -1;
            while (running) {
                if (end < 0) {
                    try {
                        end = consumer.endOffsets(List.of(tp), Duration.ofSeconds(2)).get(tp);
                    } catch (org.apache.kafka.common.errors.TimeoutException e) {
                        LOG.debug("gallery topic {}: end offset not known yet", tp);
                        continue;
                    }
                }
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    offer(r.topic(), r.key(), r.headers(), r.value());
                }
                if (consumer.position(tp) >= end) {
                    replayed.countDown();
                }
            }
        } catch (WakeupException e) {
            // close()
        } catch (RuntimeException e) {
            LOG.error("gallery topic {} stopped: {}", tp, e.toString());
        }
    }

    /** Waits until the gallery records on the topic at start have been judged; false on timeout. */
    public boolean awaitReplay(Duration timeout) throws InterruptedException {
        return replayed.await(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        if (consumer != null) {
            consumer.wakeup();
            thread.join(10_000);
            consumer.close();
        }
    }
}
