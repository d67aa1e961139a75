package org.privface.recognizer.answer;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
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
    private final Map<String, List<PerturbedFace>> enrollments = new ConcurrentHashMap<>();
    private final Map<String, Long> lastArrival = new ConcurrentHashMap<>();
    private final Map<String, FaceGallery> published = new ConcurrentHashMap<>();
    private final GalleryPublisher publisher;
    private final Optional<PublicStrangers> strangers;
    private final KafkaProducer<String, byte[]> producer;
    private final ScheduledExecutorService timer;
    private long lastVersion;

    private final org.privface.recognizer.ingest.StatusReader status;

    public GalleryService(AnswerSettings settings, KafkaClientProperties kafka,
                          org.privface.recognizer.ingest.StatusReader status)
            throws IOException, java.security.NoSuchAlgorithmException {
        this.settings = settings;
        this.status = status;
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
        enrollments.computeIfAbsent(f.getSiteId(), s -> java.util.Collections.synchronizedList(new ArrayList<>())).add(f);
        lastArrival.put(f.getSiteId(), System.nanoTime());
    }

    /** The last gallery published for a site (its labels name the answers' outputs). */
    public Optional<FaceGallery> gallery(String site) {
        return Optional.ofNullable(published.get(site));
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
                if (space.isEmpty()) {
                    LOG.info("site {}: no EMBEDDING enrollments, no gallery", site);
                    continue;
                }
                Optional<PublicStrangers> s = strangers.flatMap(x -> x.inSpace(space.get()));
                if (strangers.isPresent() && s.isEmpty()) {
                    LOG.warn("site {}: the public strangers are in {}, the enrollments in {}: closed-set gallery", site,
                            strangers.get().basisId(), space.get());
                }
                long version;
                synchronized (this) {
                    version = lastVersion = Math.max(lastVersion + 1, System.currentTimeMillis());
                }
                double epsilon = calibrationEpsilon(site);
                if (s.isPresent() && reportedAnswerEpsilon(site).isEmpty()) {
                    LOG.info("site {}: no gateway has reported its answer ε yet; calibrating at recognizer.answer.epsilon {}"
                            + " until one does", site, epsilon);
                }
                FaceGallery g = GalleryBuilder.build(site, version, space.get(), all, s, epsilon,
                        settings.getReleasedRate(), settings.getCalibrationBound(), Instant.now());
                publisher.publish(producer, g);
                published.put(site, g);
                LOG.info("site {}: gallery {} published, {} people from {} enrollment releases, threshold {} for answers"
                        + " at ε {}", site, version, g.getLabels().size(), g.getEnrollmentReleases(), g.getThreshold(),
                        epsilon);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception ex) {
                LOG.error("site {}: gallery not published: {}", site, ex.toString());
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
