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
 * changes nothing. So is a gallery that would be charged for and never used: a {@code k} other
 * than its release space's, one older than the version this gateway last held (kept in a file
 * across restarts, so a replayed old gallery is not taken after one), one built longer ago than
 * the maximum age, and an open-set gallery calibrated for another ε than the gateway answers with. Privacy never depends on the gallery (randomized response is ε-LDP whatever
 * it holds); the signature is for integrity: a forged gallery would make answers useless.
 */
public final class GalleryFollower implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GalleryFollower.class);

    private final String site;
    private final Map<String, PublicKey> keys;
    private final Options options;
    /** The highest version this gateway ever installed (from the version file): nothing below it is taken. */
    private volatile long floor;
    private volatile Gallery current;
    private volatile FaceGallery currentRecord;
    private volatile String lastRefusal;
    private final AtomicLong refused = new AtomicLong();
    private KafkaConsumer<String, byte[]> consumer;
    private Thread thread;
    private volatile boolean running = true;
    /** Opens once the records on the topic at start have been judged. */
    private final java.util.concurrent.CountDownLatch replayed = new java.util.concurrent.CountDownLatch(1);

    /**
     * What a gateway checks beyond the signature.
     *
     * @param versionFile   where the highest installed version is kept across restarts; null keeps none
     * @param maxAge        a gallery built longer ago than this is refused, and a held one stops being
     *                      used once it is; null for no limit
     * @param clock         for the age
     * @param answerEpsilon the ε per answer this gateway spends under its current policy (NaN when not
     *                      known): an open-set gallery calibrated for another ε is refused
     */
    public record Options(java.nio.file.Path versionFile, Duration maxAge, java.time.Clock clock,
                          java.util.function.DoubleSupplier answerEpsilon) {
        /** No persisted version, no age limit, no ε check: for tests of the signature alone. */
        public static Options none() {
            return new Options(null, null, java.time.Clock.systemUTC(), () -> Double.NaN);
        }
    }

    /** Relative tolerance on the calibration ε: the gateway's charge is a hair under the nominal ε. */
    static final double EPSILON_TOLERANCE = 1e-6;

    /** @param keys the recognizer keys trusted for galleries, by key id */
    public GalleryFollower(String site, Map<String, PublicKey> keys) {
        this(site, keys, Options.none());
    }

    public GalleryFollower(String site, Map<String, PublicKey> keys, Options options) {
        this.site = Topics.checkSite(site);
        this.keys = Map.copyOf(keys);
        this.options = options;
        this.floor = readFloor(options.versionFile());
    }

    private static long readFloor(java.nio.file.Path file) {
        if (file == null || !java.nio.file.Files.exists(file)) {
            return 0;
        }
        try {
            return Long.parseLong(java.nio.file.Files.readString(file).trim());
        } catch (java.io.IOException | NumberFormatException e) {
            // A damaged file must not open the door to old galleries: refuse to start without it.
            throw new IllegalStateException("gallery version file " + file + " unreadable (" + e
                    + "); fix or remove it knowingly", e);
        }
    }

    /** Writes the version whole (temporary file, then an atomic move), before the gallery is used. */
    private void persist(long version) throws java.io.IOException {
        java.nio.file.Path file = options.versionFile();
        if (file == null) {
            return;
        }
        java.nio.file.Files.createDirectories(file.toAbsolutePath().getParent());
        java.nio.file.Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        java.nio.file.Files.writeString(tmp, Long.toString(version));
        java.nio.file.Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
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
        if (g.getVersion() < floor) {
            return "version " + g.getVersion() + " is below " + floor + ", the newest this gateway held before"
                    + " (a replayed old gallery)";
        }
        String unusable = unusable(g, model);
        if (unusable != null) {
            return unusable;
        }
        try {
            persist(g.getVersion());
        } catch (java.io.IOException ex) {
            return "version " + g.getVersion() + " could not be recorded (" + ex.getMessage() + "), so it is not used";
        }
        floor = Math.max(floor, g.getVersion());
        current = model;
        currentRecord = g;
        LOG.info("gallery {} of site {} installed: {} people, space {}, threshold {}", g.getVersion(), site,
                model.identities(), g.getBasisId(), g.getThreshold());
        return null;
    }

    /**
     * Why a valid, signed gallery would be charged for and not used, or null: its k is not its
     * release space's, it is over age, or it is open-set and calibrated for another ε (or does not
     * say for which).
     */
    private String unusable(FaceGallery g, Gallery model) {
        java.util.regex.Matcher k = SPACE_K.matcher(g.getBasisId());
        if (!k.find()) {
            return "space " + g.getBasisId() + " names no k";
        }
        if (Integer.parseInt(k.group(1)) != model.k()) {
            return "k " + model.k() + " does not match its space " + g.getBasisId()
                    + ": every query face would be charged and none answered";
        }
        String age = overAge(g.getBuiltAt());
        if (age != null) {
            return age;
        }
        return epsilonMismatch(g);
    }

    private static final java.util.regex.Pattern SPACE_K = java.util.regex.Pattern.compile("\\.k(\\d{1,4})$");

    private String overAge(java.time.Instant builtAt) {
        if (options.maxAge() == null) {
            return null;
        }
        Duration age = Duration.between(builtAt, options.clock().instant());
        return age.compareTo(options.maxAge()) > 0
                ? "built " + builtAt + ", " + age.toHours() + " h ago, over the maximum age " + options.maxAge() : null;
    }

    /** An open-set threshold holds its false-positive target only at the ε it was calibrated for. */
    private String epsilonMismatch(FaceGallery g) {
        double want = options.answerEpsilon().getAsDouble();
        if (g.getCalibration() == null || Double.isNaN(want)) {
            return null; // a closed set's threshold (−∞) holds at any ε
        }
        Double at = g.getCalibration().getEpsilon();
        if (at == null) {
            return "open-set gallery of revision 1 does not say which ε it was calibrated for; this gateway answers at ε "
                    + want;
        }
        return Math.abs(at - want) > EPSILON_TOLERANCE * Math.max(1, want)
                ? "calibrated for answers at ε " + at + ", this gateway answers at ε " + want
                        + ": its strangers' rate would not be the one calibrated" : null;
    }

    /**
     * The gallery to decode with, if one was accepted and is still usable: not over age, and
     * calibrated for the ε the gateway answers with now (a policy change can change that).
     */
    public Optional<Gallery> current() {
        FaceGallery g = currentRecord;
        if (g == null) {
            return Optional.empty();
        }
        String why = overAge(g.getBuiltAt());
        if (why == null) {
            why = epsilonMismatch(g);
        }
        if (why != null) {
            if (!why.equals(heldUnusable)) {
                heldUnusable = why;
                LOG.warn("held gallery {} no longer used: {}", g.getVersion(), why);
            }
            return Optional.empty();
        }
        heldUnusable = null;
        return Optional.ofNullable(current);
    }

    private volatile String heldUnusable;

    /** Why there is no gallery to answer with, or empty when there is one. */
    public Optional<String> whyNone() {
        if (current().isPresent()) {
            return Optional.empty();
        }
        if (current != null && heldUnusable != null) {
            return Optional.of("the held gallery is not used: " + heldUnusable);
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
            m.put("builtAt", g.getBuiltAt().toString());
            if (g.getCalibration() != null) {
                if (g.getCalibration().getEpsilon() != null) {
                    m.put("calibrationEpsilon", g.getCalibration().getEpsilon());
                }
                if (g.getCalibration().getRule() != null) {
                    m.put("calibrationRule", g.getCalibration().getRule());
                }
                m.put("calibrationStrangers", g.getCalibration().getStrangers());
            }
        }
        whyNone().ifPresent(w -> m.put("none", w));
        m.put("refused", refused.get());
        if (lastRefusal != null) {
            m.put("lastRefusal", lastRefusal);
        }
        return m;
    }

    /** The ε per answer this gateway spends under its current policy; NaN when not known. */
    public double answerEpsilon() {
        return options.answerEpsilon().getAsDouble();
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
