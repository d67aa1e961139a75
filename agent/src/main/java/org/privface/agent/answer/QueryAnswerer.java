package org.privface.agent.answer;

import java.security.PublicKey;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import org.privface.agent.publish.Uplink;
import org.privface.privacy.answer.Gallery;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.avro.AnswerTrack;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.control.SignedControl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers query faces for the camera workers: decodes a face against the site's verified gallery
 * and releases who it is by randomized response ({@link AnswerSampler}), under the site's setting
 * of what query faces release ({@link Mode}), with what the status report says. Answer records go out through
 * the gateway's {@link Uplink}, spooled to disk like the vectors, so a broker outage or a restart
 * loses none.
 */
public final class QueryAnswerer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(QueryAnswerer.class);

    /** What a query face releases: its vector, an answer, or both ({@code agent.answer.release}). */
    public enum Mode {
        VECTOR, ANSWER, BOTH;

        public static Mode parse(String s) {
            try {
                return valueOf(s.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException | NullPointerException e) {
                throw new IllegalArgumentException("agent.answer.release must be vector, answer or both, not '" + s + "'");
            }
        }
    }

    private final Mode release;
    private final GalleryFollower gallery;
    private final AnswerSampler answers;
    private final Uplink uplink;
    private final AtomicLong released = new AtomicLong();
    private final AtomicLong withheldNoGallery = new AtomicLong();
    private final AtomicLong withheldUnanswerable = new AtomicLong();
    private volatile String unanswerable;
    private final AtomicLong spoolDropped = new AtomicLong();
    private volatile String lastProblem;
    /** Faces of a track decoded together into one answer ({@code agent.answer.track-faces}). */
    private final int trackFaces;

    public QueryAnswerer(Mode release, String site, GalleryFollower gallery, Uplink uplink) {
        this(release, site, gallery, uplink, 1);
    }

    /** @param trackFaces faces of a track decoded together into one answer, at least 1 */
    public QueryAnswerer(Mode release, String site, GalleryFollower gallery, Uplink uplink, int trackFaces) {
        if (trackFaces < 1) {
            throw new IllegalArgumentException("agent.answer.track-faces must be at least 1, was " + trackFaces);
        }
        this.trackFaces = trackFaces;
        this.release = release;
        this.gallery = gallery;
        this.answers = new AnswerSampler(site);
        this.uplink = uplink;
    }

    /**
     * From the settings: null for {@code vector}; otherwise follows the gallery topic and sends
     * answers through {@code uplink}.
     */
    public static QueryAnswerer open(String releaseSetting, Map<String, String> galleryKeys, String site,
                                  KafkaClientProperties client, Uplink uplink) {
        return open(releaseSetting, galleryKeys, site, client, uplink, GalleryFollower.Options.none());
    }

    /** @param options what the gateway checks of a gallery beyond its signature ({@link GalleryFollower.Options}) */
    public static QueryAnswerer open(String releaseSetting, Map<String, String> galleryKeys, String site,
                                  KafkaClientProperties client, Uplink uplink, GalleryFollower.Options options) {
        return open(releaseSetting, galleryKeys, site, client, uplink, options, 1);
    }

    /** @param trackFaces faces of a track decoded together into one answer ({@code agent.answer.track-faces}) */
    public static QueryAnswerer open(String releaseSetting, Map<String, String> galleryKeys, String site,
                                  KafkaClientProperties client, Uplink uplink, GalleryFollower.Options options,
                                  int trackFaces) {
        Mode r = Mode.parse(releaseSetting);
        if (r == Mode.VECTOR) {
            return null;
        }
        Map<String, PublicKey> keys = new LinkedHashMap<>();
        galleryKeys.forEach((id, b64) -> {
            SignedControl.checkName("gallery key id", id);
            keys.put(id, SignedControl.publicKey(b64));
        });
        if (keys.isEmpty()) {
            LOG.error("agent.answer.release is {} but agent.answer.gallery-keys names no recognizer key: no gallery can be"
                    + " accepted, so query faces release {}", r, r == Mode.ANSWER ? "nothing" : "vectors only");
        }
        GalleryFollower follower = new GalleryFollower(site, keys, options).start(client);
        try {
            // A restarted gateway answers with its site's gallery from the first face, where the topic holds one.
            if (!follower.awaitReplay(java.time.Duration.ofSeconds(15))) {
                LOG.warn("gallery topic of site {} not read within 15 s; query faces wait for a gallery", site);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return new QueryAnswerer(r, site, follower, uplink, trackFaces);
    }

    public Mode release() {
        return release;
    }

    /**
     * Faces of one track decoded together into one answer: the answer waits for them, or for the
     * track's end, and is released once at the track's grant.
     */
    public int trackFaces() {
        return trackFaces;
    }

    /** Whether vectors of query faces are released too. */
    public boolean vectors() {
        return release == Mode.BOTH;
    }

    /** The gallery to answer with, if a valid one is held. */
    public Optional<Gallery> gallery() {
        return gallery.current();
    }

    /** The gateway's answer samplers (one per C and ε). */
    public AnswerSampler sampler() {
        return answers;
    }

    /**
     * Counts a query face withheld, before any charge, because the policy and gallery held cannot
     * answer it (an impossible ε split, a gallery of another space, a mechanism without embeddings).
     */
    public void withheldForPlan(String why) {
        withheldUnanswerable.incrementAndGet();
        unanswerable = why;
    }

    /** Counts a query face withheld because no valid gallery is held (answer-only sites). */
    public void withheldForNoGallery() {
        withheldNoGallery.incrementAndGet();
    }

    /**
     * The face's direction in the gallery's space, held until its track's answer; empty when the
     * gallery does not fit the mechanism's space (the face then releases nothing).
     */
    public Optional<double[]> query(Gallery g, EmbeddingMechanism m, double[] embedding) {
        try {
            return Optional.of(AnswerSampler.query(g, m, embedding));
        } catch (IllegalStateException e) {
            lastProblem = e.getMessage();
            LOG.warn("query face not answered: {}", e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * Decodes a track's held faces together ({@link AnswerSampler#answer}), releases the answer at
     * {@code epsilon} and spools the record. The record states the ε it spent, at most
     * {@code epsilon}: that is what is charged and counted.
     */
    public FaceAnswer answer(Gallery g, List<double[]> directions, double epsilon, String camera, String trackId,
                             Instant capturedAt, AnswerTrack track) {
        FaceAnswer a = answers.answer(g, directions, epsilon, camera, trackId, capturedAt, track);
        if (!uplink.submit(a)) {
            spoolDropped.incrementAndGet(); // released (its ε is spent) but dropped by the spool's bound
        }
        released.incrementAndGet();
        return a;
    }

    /** For the status report: the setting, the gallery held or why none, counts. */
    public Map<String, Object> report() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("release", release.name().toLowerCase(Locale.ROOT));
        double eps = gallery.answerEpsilon();
        if (!Double.isNaN(eps)) {
            m.put("answerEpsilon", eps); // what the recognizer calibrates this site's gallery for
        }
        m.put("gallery", gallery.status());
        m.put("answers", released.get());
        m.put("trackFaces", trackFaces); // configuration, the same for every face
        // Not withheldNoGallery nor withheldUnanswerable: exact counts of query faces (issue 39); the local
        // report has them. Why faces are unanswerable is the configuration's, not a face's.
        if (unanswerable != null) {
            m.put("unanswerableBecause", unanswerable);
        }
        m.put("droppedBySpool", spoolDropped.get());
        if (release == Mode.ANSWER && gallery.current().isEmpty()) {
            m.put("queriesWithheldBecause", gallery.whyNone().orElse("no gallery"));
        }
        if (lastProblem != null) {
            m.put("lastProblem", lastProblem);
        }
        return m;
    }

    /** The exact counts, for the gateway's authenticated REST status only. */
    public Map<String, Object> localReport() {
        return Map.of("withheldNoGallery", withheldNoGallery.get(), "withheldUnanswerable", withheldUnanswerable.get());
    }

    @Override
    public void close() throws InterruptedException {
        gallery.close(); // the uplink is the gateway's: it outlives the answers and keeps what is unsent
    }
}
