package org.privface.recognizer.answer;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
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
import org.privface.recognizer.ownership.SiteOwnership;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.control.SignedControl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the arrival of the enrollment releases of the sites this replica owns (the releases
 * themselves stay in the {@link org.privface.recognizer.model.ModelRegistry}), and once a site is replayed ({@link SiteOwnership#ready}) and its enrollments are
 * quiet, builds its gallery ({@link GalleryBuilder}) and publishes it signed
 * ({@link GalleryPublisher}). Only the owner publishes. Versions come from the ownership: above
 * every version on the site's gallery topic (which the owner reads back) and at least the owner's
 * epoch·2^32, so they grow across owners and a deposed owner's late gallery stays below its
 * successor's; no wall clock. A new owner whose replayed enrollments are those of the gallery on
 * the topic publishes nothing.
 *
 * <p>The open-set threshold holds its false-positive target only at the ε the answers are released
 * at, so each site's gallery is calibrated at the ε its gateways report they answer with (their
 * status reports' {@code answer.answerEpsilon}, the value most of them report), and rebuilt when
 * that changes; until a gateway of the site has reported, at {@code recognizer.answer.epsilon}. A
 * gateway answering at another ε refuses the gallery and reports why. A gallery is also rebuilt
 * after {@code republish-after}, so it never reaches the gateways' maximum age.
 */
@Singleton
public class GalleryService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GalleryService.class);

    private final AnswerSettings settings;
    /** The releases themselves are the registry's (one copy per replica, of its own sites only). */
    private final EnrollmentReleases registry;
    private final Map<String, Long> lastArrival = new ConcurrentHashMap<>();
    private final Map<String, FaceGallery> published = new ConcurrentHashMap<>();
    private final GalleryPublisher publisher;
    private final Optional<PublicStrangers> strangers;
    private final KafkaProducer<String, byte[]> producer;
    private final ScheduledExecutorService timer;
    private final SiteOwnership ownership;

    private final org.privface.recognizer.status.StatusReader status;

    public GalleryService(AnswerSettings settings, KafkaClientProperties kafka, SiteOwnership ownership,
                          EnrollmentReleases registry,
                          org.privface.recognizer.status.StatusReader status)
            throws IOException, java.security.NoSuchAlgorithmException {
        this.settings = settings;
        this.registry = registry;
        this.ownership = ownership;
        this.status = status;
        ownership.listen(site -> { }, this::forget);
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
        if (settings.getStrangersFile() != null && settings.getStrangersSha256() != null) {
            String have = java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                    .digest(Files.readAllBytes(settings.getStrangersFile())));
            if (!have.equalsIgnoreCase(settings.getStrangersSha256().trim())) {
                throw new IllegalStateException("recognizer.answer.strangers-file " + settings.getStrangersFile()
                        + " has SHA-256 " + have + ", not the pinned " + settings.getStrangersSha256());
            }
        }
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
        if (publisher == null) {
            return;
        }
        lastArrival.put(f.getSiteId(), System.nanoTime());
    }

    /** Sites whose gallery must be rebuilt or withdrawn because a person was erased. */
    private final java.util.Set<String> erased = ConcurrentHashMap.newKeySet();
    /** Sites whose last published gallery predates an erasure there (it may name the erased person). */
    private final java.util.Set<String> unbuilt = ConcurrentHashMap.newKeySet();
    private final java.util.Set<String> building = ConcurrentHashMap.newKeySet();

    /**
     * Enrollments of the site were erased from the registry (a tombstone, or every record of an erased
     * person): the owner rebuilds the site's gallery at the next check without them, without waiting for
     * the quiet period; with nobody left, the gallery is withdrawn by a tombstone on the compacted
     * gallery topic. A replica that does not own the site holds no gallery of it and does nothing.
     */
    public void erased(String site) {
        if (publisher == null || !ownership.owns(site)) {
            return;
        }
        unbuilt.add(site);
        erased.add(site);
        lastArrival.put(site, System.nanoTime() - settings.getQuietPeriod().toNanos() - 1);
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
        unbuilt.remove(site);
        LOG.info("site {}: gallery withdrawn (tombstone): no enrolled person left to build one from", site);
    }

    /** The newest gallery of a site this replica owns, as published (its labels name the answers' outputs). */
    public Optional<FaceGallery> gallery(String site) {
        Optional<FaceGallery> onTopic = ownership.lastGallery(site);
        return onTopic.isPresent() ? onTopic : Optional.ofNullable(published.get(site));
    }

    /** A site given up: its releases are dropped (its new owner replays them). */
    private void forget(String site) {
        lastArrival.remove(site);
        published.remove(site);
    }

    /**
     * The ε per answer a site's gateways report under their current policy: the value most of
     * them report (the newest report breaks a tie); empty until one has reported.
     */
    public java.util.OptionalDouble reportedAnswerEpsilon(String site) {
        if (status == null) {
            return java.util.OptionalDouble.empty();
        }
        Map<Double, Integer> votes = new java.util.HashMap<>();
        Map<Double, Instant> newest = new java.util.HashMap<>();
        status.gateways().getOrDefault(site, Map.of()).values().forEach(l -> {
            if (l.current().body().get("answer") instanceof Map<?, ?> a && a.get("answerEpsilon") instanceof Number n
                    && n.doubleValue() > 0 && Double.isFinite(n.doubleValue())) {
                votes.merge(n.doubleValue(), 1, Integer::sum);
                newest.merge(n.doubleValue(), l.current().receivedAt(), (x, y) -> x.isAfter(y) ? x : y);
            }
        });
        return votes.keySet().stream().max(java.util.Comparator.<Double>comparingInt(votes::get)
                .thenComparing(newest::get)).map(java.util.OptionalDouble::of).orElse(java.util.OptionalDouble.empty());
    }

    /** The ε a site's gallery is calibrated at now: its gateways' (reported), else the setting's. */
    public double calibrationEpsilon(String site) {
        return reportedAnswerEpsilon(site).orElse(settings.getEpsilon());
    }

    /** Sites whose published open-set gallery no longer fits: calibrated at another ε, or due to be republished. */
    private void markStale() {
        for (Map.Entry<String, FaceGallery> e : Map.copyOf(published).entrySet()) {
            FaceGallery g = e.getValue();
            boolean old = Duration.between(g.getBuiltAt(), Instant.now()).compareTo(settings.getRepublishAfter()) > 0;
            Double at = g.getCalibration() == null ? null : g.getCalibration().getEpsilon();
            boolean otherEpsilon = at != null && reportedAnswerEpsilon(e.getKey()).isPresent()
                    && Math.abs(at - reportedAnswerEpsilon(e.getKey()).getAsDouble()) > 1e-6 * Math.max(1, at);
            if ((old || otherEpsilon) && !lastArrival.containsKey(e.getKey())) {
                LOG.info("site {}: gallery {} is rebuilt ({})", e.getKey(), g.getVersion(), old ? "due to be republished"
                        : "its gateways answer at ε " + reportedAnswerEpsilon(e.getKey()).getAsDouble() + ", not " + at);
                lastArrival.put(e.getKey(), System.nanoTime() - settings.getQuietPeriod().toNanos());
            }
        }
    }

    private void buildDue() {
        markStale();
        long quiet = settings.getQuietPeriod().toNanos();
        for (Map.Entry<String, Long> e : Map.copyOf(lastArrival).entrySet()) {
            String site = e.getKey();
            if (System.nanoTime() - e.getValue() < quiet || !ownership.ready(site)) {
                continue; // not quiet yet, or still replaying: a partial gallery must not supersede a whole one
            }
            lastArrival.remove(site, e.getValue());
            try {
                building.add(site);
                boolean afterErasure = erased.remove(site);
                List<PerturbedFace> all = registry.enrollments(site);
                if (all.isEmpty()) {
                    if (afterErasure) {
                        withdraw(site);
                    }
                    continue;
                }
                Optional<String> space = GalleryBuilder.mainSpace(site, all);
                if (space.isEmpty()) {
                    if (afterErasure) {
                        withdraw(site);
                    }
                    LOG.info("site {}: no EMBEDDING enrollments, no gallery", site);
                    continue;
                }
                Optional<PublicStrangers> s = strangers.flatMap(x -> x.inSpace(space.get()));
                if (strangers.isPresent() && s.isEmpty()) {
                    LOG.warn("site {}: the public strangers are in {}, the enrollments in {}: closed-set gallery", site,
                            strangers.get().basisId(), space.get());
                }
                Optional<FaceGallery> last = ownership.lastGallery(site);
                if (last.isPresent() && last.get().getEnrollmentReleases() == all.size()
                        && published.get(site) == null) {
                    // A new owner that replayed what the current gallery was built from: nothing to publish.
                    published.put(site, last.get());
                    LOG.info("site {}: gallery {} on the topic covers the {} replayed releases; kept", site,
                            last.get().getVersion(), all.size());
                    continue;
                }
                java.util.OptionalLong next = ownership.nextGalleryVersion(site);
                if (next.isEmpty()) {
                    continue; // given up meanwhile
                }
                long version = next.getAsLong();
                double epsilon = calibrationEpsilon(site);
                if (s.isPresent() && reportedAnswerEpsilon(site).isEmpty()) {
                    LOG.info("site {}: no gateway has reported its answer ε yet; calibrating at recognizer.answer.epsilon {}"
                            + " until one does", site, epsilon);
                }
                FaceGallery g = GalleryBuilder.build(site, version, space.get(), all, s, epsilon,
                        settings.getReleasedRate(), settings.getCalibrationBound(), Instant.now());
                if (!ownership.owns(site)) {
                    continue;
                }
                publisher.publish(producer, g);
                published.put(site, g);
                unbuilt.remove(site);
                ownership.published(g);
                LOG.info("site {}: gallery {} published, {} people from {} enrollment releases, threshold {} for answers"
                        + " at ε {}", site, version, g.getLabels().size(), g.getEnrollmentReleases(), g.getThreshold(),
                        epsilon);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception ex) {
                LOG.error("site {}: gallery not published: {}", site, ex.toString());
                if (unbuilt.contains(site)) {
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

    @PreDestroy
    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
            producer.close();
        }
    }
}
