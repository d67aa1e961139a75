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
                if (space.isEmpty()) {
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
