package org.privface.recognizer.answer;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.control.SignedControl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each site's enrollment releases (as the enrollment reader hands them over), and once a
 * site's enrollments are quiet, builds its gallery ({@link GalleryBuilder}) and publishes it
 * signed ({@link GalleryPublisher}). Versions are the build's milliseconds and never go down, so
 * a restarted recognizer's gallery supersedes the last one without reading the topic (it may not:
 * only the site's gateways read galleries).
 */
@Singleton
public class GalleryService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GalleryService.class);

    private final AnswerSettings settings;
    private final Map<String, List<PerturbedFace>> enrollments = new ConcurrentHashMap<>();
    private final Map<String, Long> lastArrival = new ConcurrentHashMap<>();
    private final Map<String, FaceGallery> published = new ConcurrentHashMap<>();
    private final GalleryPublisher publisher;
    private final Optional<PublicStrangers> strangers;
    private final KafkaProducer<String, byte[]> producer;
    private final ScheduledExecutorService timer;
    private long lastVersion;

    public GalleryService(AnswerSettings settings, KafkaClientProperties kafka) throws IOException {
        this.settings = settings;
        if (settings.getSigningKeyFile() == null) {
            LOG.info("recognizer.answer.signing-key-file unset: no gallery models are published");
            publisher = null;
            strangers = Optional.empty();
            producer = null;
            timer = null;
            return;
        }
        publisher = new GalleryPublisher(SignedControl.privateKey(Files.readString(settings.getSigningKeyFile())),
                settings.getKeyId());
        strangers = settings.getStrangersFile() == null ? Optional.empty()
                : Optional.of(PublicStrangers.read(settings.getStrangersFile()));
        Properties p = kafka.producer();
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "privface-recognizer-gallery");
        producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "gallery-builder");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::buildDue, 1, 1, TimeUnit.SECONDS);
    }

    /** One validated, new enrollment record. */
    public void add(PerturbedFace f) {
        add(f, null, Instant.now());
    }

    /** One validated, new enrollment record, with its record key (wire/erasure/PersonKeys) and write time. */
    public void add(PerturbedFace f, String key, Instant written) {
        if (publisher == null) {
            return;
        }
        List<PerturbedFace> list = enrollments.computeIfAbsent(f.getSiteId(),
                s -> java.util.Collections.synchronizedList(new ArrayList<>()));
        synchronized (list) {
            // Only person keys name one release; older records' keys (a camera id) are shared by many.
            if (key != null && org.privface.wire.erasure.PersonKeys.pseudonymOf(key).isPresent()) {
                Map<String, Keyed> k = keyed.computeIfAbsent(f.getSiteId(), s -> new ConcurrentHashMap<>());
                // A newer record under the same key (a new form of that release) replaces the old one.
                k.entrySet().removeIf(e -> {
                    if (e.getValue().key().equals(key)) {
                        list.removeIf(x -> x.getEventId().equals(e.getKey()));
                        return true;
                    }
                    return false;
                });
                k.put(f.getEventId(), new Keyed(key, written));
            }
            list.add(f);
        }
        lastArrival.put(f.getSiteId(), System.nanoTime());
    }

    /** Where a gallery enrollment came from: its record key and write time. */
    private record Keyed(String key, Instant written) {
    }

    private final Map<String, Map<String, Keyed>> keyed = new ConcurrentHashMap<>();
    /** Sites whose gallery must be rebuilt or withdrawn because a person was erased. */
    private final java.util.Set<String> erased = ConcurrentHashMap.newKeySet();

    /**
     * Drops the enrollments of records whose key matches and were written no later than
     * {@code before} (a tombstone's key, or every key of an erased person), and rebuilds the site's
     * gallery at the next check without them; with nobody left, the gallery is withdrawn by a
     * tombstone on the compacted gallery topic. Returns the enrollments dropped.
     */
    public int remove(String site, java.util.function.Predicate<String> key, Instant before) {
        List<PerturbedFace> list = enrollments.get(site);
        Map<String, Keyed> k = keyed.get(site);
        if (publisher == null || list == null || k == null) {
            return 0;
        }
        int n;
        synchronized (list) {
            int was = list.size();
            list.removeIf(f -> {
                Keyed w = k.get(f.getEventId());
                boolean gone = w != null && key.test(w.key()) && !w.written().isAfter(before);
                if (gone) {
                    k.remove(f.getEventId());
                }
                return gone;
            });
            n = was - list.size();
        }
        if (n > 0) {
            lastErasure.put(site, System.currentTimeMillis());
            erased.add(site);
            // due at the next check, without waiting for the quiet period
            lastArrival.put(site, System.nanoTime() - settings.getQuietPeriod().toNanos() - 1);
        }
        return n;
    }

    /** Waits until an erasure's rebuild (or withdrawal) of the site's gallery has run; false on timeout. */
    public boolean awaitRebuilt(String site, java.time.Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (erased.contains(site) || building.contains(site)) {
            if (System.nanoTime() > end) {
                return false;
            }
            Thread.sleep(100);
        }
        return true;
    }

    private final java.util.Set<String> building = ConcurrentHashMap.newKeySet();

    /** Whether the site's last published gallery still names any of {@code labels}. */
    public boolean names(String site, java.util.Collection<String> labels) {
        FaceGallery g = published.get(site);
        return g != null && g.getLabels().stream().anyMatch(labels::contains);
    }

    /** Withdraws a site's gallery: a tombstone under its key, so compaction removes the last one. */
    private void withdraw(String site) throws InterruptedException, java.util.concurrent.ExecutionException {
        producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(org.privface.wire.topics.Topics.gallery(site),
                site, null)).get();
        published.remove(site);
        LOG.info("site {}: gallery withdrawn (tombstone): no enrolled person left to build one from", site);
    }

    /** The last gallery published for a site (its labels name the answers' outputs). */
    public Optional<FaceGallery> gallery(String site) {
        return Optional.ofNullable(published.get(site));
    }

    private void buildDue() {
        long quiet = settings.getQuietPeriod().toNanos();
        for (Map.Entry<String, Long> e : Map.copyOf(lastArrival).entrySet()) {
            if (System.nanoTime() - e.getValue() < quiet) {
                continue;
            }
            String site = e.getKey();
            lastArrival.remove(site, e.getValue());
            try {
                List<PerturbedFace> all;
                List<PerturbedFace> list = enrollments.get(site);
                synchronized (list) {
                    all = List.copyOf(list);
                }
                Optional<String> space = GalleryBuilder.mainSpace(site, all);
                building.add(site);
                boolean afterErasure = erased.remove(site);
                if (space.isEmpty()) {
                    if (afterErasure) {
                        withdraw(site);
                    }
                    LOG.info("site {}: no EMBEDDING enrollments, no gallery", site);
                    continue;
                }
                Optional<PublicStrangers> s = strangers.filter(x -> x.basisId().equals(space.get()));
                if (strangers.isPresent() && s.isEmpty()) {
                    LOG.warn("site {}: the public strangers are in {}, the enrollments in {}: closed-set gallery", site,
                            strangers.get().basisId(), space.get());
                }
                long version;
                synchronized (this) {
                    version = lastVersion = Math.max(lastVersion + 1, System.currentTimeMillis());
                }
                FaceGallery g = GalleryBuilder.build(site, version, space.get(), all, s, settings.getEpsilon(),
                        settings.getReleasedRate(), settings.getCalibrationBound(), Instant.now());
                publisher.publish(producer, g);
                published.put(site, g);
                LOG.info("site {}: gallery {} published, {} people from {} enrollment releases, threshold {}", site,
                        version, g.getLabels().size(), g.getEnrollmentReleases(), g.getThreshold());
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception ex) {
                LOG.error("site {}: gallery not published: {}", site, ex.toString());
                if (erasedUnbuilt(site)) {
                    try {
                        withdraw(site); // an erasure's rebuild failed: no gallery beats one naming the erased person
                    } catch (Exception again) {
                        LOG.error("site {}: gallery not withdrawn either: {}", site, again.toString());
                    }
                }
            } finally {
                building.remove(site);
            }
        }
    }

    /** Whether the last published gallery predates an erasure at the site (it may name the erased person). */
    private boolean erasedUnbuilt(String site) {
        return lastErasure.getOrDefault(site, 0L) > published.getOrDefault(site, EMPTY).getVersion();
    }

    private static final FaceGallery EMPTY = new FaceGallery();
    private final Map<String, Long> lastErasure = new ConcurrentHashMap<>();

    @PreDestroy
    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
            producer.close();
        }
    }
}
