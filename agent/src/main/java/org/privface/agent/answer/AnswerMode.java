package org.privface.agent.answer;

import java.security.PublicKey;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.privface.privacy.answer.Gallery;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.wire.FaceRecords;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.avro.AnswerTrack;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gateway's answer release, for the camera workers: the site's release setting, the verified
 * gallery, the exact sampler and the answer topic's producer, with what the status report says.
 */
public final class AnswerMode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AnswerMode.class);

    /** What a query face releases. */
    public enum Release {
        VECTOR, ANSWER, BOTH;

        public static Release parse(String s) {
            try {
                return valueOf(s.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException | NullPointerException e) {
                throw new IllegalArgumentException("agent.answer.release must be vector, answer or both, not '" + s + "'");
            }
        }
    }

    private final Release release;
    private final GalleryFollower gallery;
    private final AnswerRelease answers;
    private final Producer<String, byte[]> producer;
    private final String site;
    private final AtomicLong released = new AtomicLong();
    private final AtomicLong withheldNoGallery = new AtomicLong();
    private volatile String lastProblem;

    public AnswerMode(Release release, String site, GalleryFollower gallery, Producer<String, byte[]> producer) {
        this.release = release;
        this.site = site;
        this.gallery = gallery;
        this.answers = new AnswerRelease(site);
        this.producer = producer;
    }

    /** From the settings: null for {@code vector}; otherwise follows the gallery topic and opens the producer. */
    public static AnswerMode open(String releaseSetting, Map<String, String> galleryKeys, String site,
                                  KafkaClientProperties client) {
        Release r = Release.parse(releaseSetting);
        if (r == Release.VECTOR) {
            return null;
        }
        Map<String, PublicKey> keys = new LinkedHashMap<>();
        galleryKeys.forEach((id, b64) -> {
            SignedControl.checkName("gallery key id", id);
            keys.put(id, SignedControl.publicKey(b64));
        });
        if (keys.isEmpty()) {
            LOG.error("agent.answer.release is {} but agent.answer.gallery-keys names no recognizer key: no gallery can be"
                    + " accepted, so query faces release {}", r, r == Release.ANSWER ? "nothing" : "vectors only");
        }
        Properties p = client.producer();
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "privface-agent-answers-" + site);
        GalleryFollower follower = new GalleryFollower(site, keys).start(client);
        try {
            // A restarted gateway answers with its site's gallery from the first face, where the topic holds one.
            if (!follower.awaitReplay(java.time.Duration.ofSeconds(15))) {
                LOG.warn("gallery topic of site {} not read within 15 s; query faces wait for a gallery", site);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return new AnswerMode(r, site, follower, new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer()));
    }

    public Release release() {
        return release;
    }

    /** Whether vectors of query faces are released too. */
    public boolean vectors() {
        return release == Release.BOTH;
    }

    /** The gallery to answer with, if a valid one is held. */
    public Optional<Gallery> gallery() {
        return gallery.current();
    }

    /** Counts a query face withheld because no valid gallery is held (answer-only sites). */
    public void withheldForNoGallery() {
        withheldNoGallery.incrementAndGet();
    }

    /**
     * Decodes and releases one query face at {@code epsilon} and sends the record; its event id, or
     * empty when the gallery does not fit the mechanism's space (the face then releases nothing).
     */
    public Optional<String> answer(Gallery g, EmbeddingMechanism m, double[] embedding, double epsilon, String camera,
                          String trackId, Instant capturedAt, AnswerTrack track) {
        FaceAnswer a;
        try {
            a = answers.release(g, m, embedding, epsilon, camera, trackId, capturedAt, track);
        } catch (IllegalStateException e) {
            lastProblem = e.getMessage();
            LOG.warn("query face not answered: {}", e.getMessage());
            return Optional.empty();
        }
        producer.send(new ProducerRecord<>(Topics.answer(site), camera, FaceRecords.encode(a)), (md, ex) -> {
            if (ex != null) {
                LOG.warn("answer {} not delivered: {}", a.getEventId(), ex.toString());
            }
        });
        released.incrementAndGet();
        return Optional.of(a.getEventId());
    }

    /** For the status report: the setting, the gallery held or why none, counts. */
    public Map<String, Object> report() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("release", release.name().toLowerCase(Locale.ROOT));
        m.put("gallery", gallery.status());
        m.put("answers", released.get());
        m.put("withheldNoGallery", withheldNoGallery.get());
        if (release == Release.ANSWER && gallery.current().isEmpty()) {
            m.put("queriesWithheldBecause", gallery.whyNone().orElse("no gallery"));
        }
        if (lastProblem != null) {
            m.put("lastProblem", lastProblem);
        }
        return m;
    }

    @Override
    public void close() throws InterruptedException {
        gallery.close();
        producer.close();
    }
}
