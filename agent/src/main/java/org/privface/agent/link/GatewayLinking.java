package org.privface.agent.link;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.privface.privacy.StatusCounts;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.capture.SteadyClock;

/**
 * Appearance linking on one gateway: gives each new track its person before any budget is asked
 * (computing an embedding releases nothing). The embeddings go to the {@link PersonLedger} and
 * nowhere else.
 *
 * <p>More evidence than one face: a track is linked on the average of its first {@code facesToLink}
 * faces that pass the quality checks (nothing of it is released before), against the ledger's
 * score over several appearances per person. Time and place rule candidates out: a person seen in
 * another track, on this or another camera, while this track was already under way is someone
 * else (one person is not in two places at once; off where cameras' views overlap). Every
 * {@code recheckEvery}-th passing face of a linked track is compared with its person again; two
 * disagreeing checks in a row split the track (the tracker followed another face): what was paid
 * stays charged, and the rest is a new segment, linked afresh and with its own track budget.
 */
public final class GatewayLinking {
    /** Faces narrower than this (pixels) are not embedded for linking: too little face for a reliable link. */
    public static final int DEFAULT_MIN_FACE_SIZE = 40;
    /** Detector confidence a face needs to be embedded for linking. */
    public static final double DEFAULT_MIN_SCORE = 0.8;
    /** Passing faces averaged before a track is linked: a third of a second at 10 frames a second. */
    public static final int DEFAULT_FACES_TO_LINK = 3;
    /** A linked track's passing faces between two checks that it is still its person. */
    public static final int DEFAULT_RECHECK_EVERY = 5;
    /** Disagreeing checks in a row that split a track: one blurred face is not a swap. */
    static final int DISAGREEMENTS_TO_SPLIT = 2;
    /** How long an ended track still rules its person out of tracks that overlapped it. */
    static final Duration ENDED_KEPT = Duration.ofMinutes(1);

    private final PersonLedger ledger;
    private final int minFaceSize;
    private final double minScore;
    private final StatusCounts noised;
    private final int facesToLink;
    private final int recheckEvery;
    private final boolean disjointViews;
    /** The packaged network linking embeds with; null: the release's embedding. */
    private String network;
    /** Live and recently ended tracks of every camera, by camera and track id. */
    private final Map<String, TrackState> tracks = new HashMap<>();
    private long splits;
    private long ruledOut;

    /** One track as linking sees it. */
    private static final class TrackState {
        final String camera;
        final String trackId;
        final List<double[]> pending = new ArrayList<>();
        String person;
        int segment;
        Instant segmentStart;
        Instant lastSeen;
        Instant ended;
        int sinceCheck;
        int disagreements;

        TrackState(String camera, String trackId) {
            this.camera = camera;
            this.trackId = trackId;
        }

        String budgetTrack() {
            return segment == 0 ? trackId : trackId + "~" + segment;
        }
    }

    /**
     * A track's person, and the id its track budget is kept under: the track's own, or a split-off
     * segment's, which spends from a fresh track allowance but from the same person ledger.
     */
    public record Segment(String personId, String budgetTrack) {
    }

    public GatewayLinking(PersonLedger ledger, int minFaceSize, double minScore) {
        this(ledger, minFaceSize, minScore, 1, DEFAULT_RECHECK_EVERY, false);
    }

    public GatewayLinking(PersonLedger ledger, int minFaceSize, double minScore, int facesToLink, int recheckEvery,
                          boolean disjointViews) {
        if (facesToLink < 1 || recheckEvery < 1) {
            throw new IllegalArgumentException("facesToLink and recheckEvery must be >= 1, were " + facesToLink + " and "
                    + recheckEvery);
        }
        this.ledger = ledger;
        this.minFaceSize = minFaceSize;
        this.minScore = minScore;
        // Per person, at most once a day each: a person's appearances and links are not theirs to count.
        this.noised = new StatusCounts("person").counter("persons").counter("linkedPersons");
        this.facesToLink = facesToLink;
        this.recheckEvery = recheckEvery;
        this.disjointViews = disjointViews;
    }

    /** Whether linking runs, and why not. */
    public record Decision(GatewayLinking linking, String reason) {
        public Optional<GatewayLinking> on() {
            return Optional.ofNullable(linking);
        }
    }

    /**
     * How a gateway links: threshold and evidence ({@code docs/privacy.md}, "The budget per person").
     *
     * @param network the packaged network linking embeds with; null: the release's embedding
     */
    public record Rule(double threshold, int matches, int facesToLink, int recheckEvery, boolean disjointViews,
                       String network) {
        /** The rule before issue 30: the first passing face, the best single match, the release's embedding. */
        public static Rule single(double threshold) {
            return new Rule(threshold, 1, 1, DEFAULT_RECHECK_EVERY, false, null);
        }
    }

    /**
     * Opens linking where it can run: enabled, an embedding network on disk, and a detector with
     * the landmarks alignment needs. Otherwise off, and the records' budget scope is the track.
     */
    public static Decision open(boolean enabled, double threshold, int minFaceSize, double minScore,
                                Optional<String> embedderMissing, boolean landmarks, Path dir, Duration window) throws IOException {
        return open(enabled, Rule.single(threshold), minFaceSize, minScore, embedderMissing, landmarks, dir, window);
    }

    public static Decision open(boolean enabled, Rule rule, int minFaceSize, double minScore,
                                Optional<String> embedderMissing, boolean landmarks, Path dir, Duration window) throws IOException {
        if (!enabled) {
            return new Decision(null, "agent.link.enabled is false");
        }
        if (embedderMissing.isPresent()) {
            return new Decision(null, embedderMissing.get());
        }
        if (Double.isNaN(rule.threshold())) {
            return new Decision(null, "no calibrated link threshold for a custom embedding network: set agent.link.threshold");
        }
        if (!landmarks) {
            return new Decision(null, "the detector gives no landmarks, which alignment needs");
        }
        PersonLedger l = PersonLedger.open(dir, rule.threshold(), rule.matches(), window, SteadyClock.system().instant());
        GatewayLinking g = new GatewayLinking(l, minFaceSize, minScore, rule.facesToLink(), rule.recheckEvery(),
                rule.disjointViews());
        g.network = rule.network();
        return new Decision(g, "on" + (rule.network() == null ? "" : ", embedding with " + rule.network()));
    }

    public PersonLedger ledger() {
        return ledger;
    }

    /** The packaged network linking embeds with, or null where it reuses the release's embedding. */
    public String network() {
        return network;
    }

    /**
     * The person of a track's face: the one its track (segment) was linked to, or, once enough of the
     * track's faces have passed the quality checks, the person their average links to. Empty while
     * too few have passed, or when the ledger is full; the face must then not be released.
     *
     * @param embedding the face's embedding, asked for only when the face is needed for a link or a
     *                  check (the release reuses it)
     */
    public Optional<Segment> personOf(String camera, String trackId, Mat frame, DetectedFace face,
                                      Supplier<double[]> embedding, Instant now) {
        boolean passes = passes(frame, face);
        // Embedded outside the lock: the other cameras link meanwhile.
        double[] e = passes && wants(camera, trackId) ? embedding.get() : null;
        return observe(camera, trackId, passes, e, now);
    }

    /** Whether the track's next passing face is needed: for its link, or for a check. */
    private synchronized boolean wants(String camera, String trackId) {
        TrackState t = tracks.get(camera + "\n" + trackId);
        return t == null || t.person == null || t.sinceCheck + 1 >= recheckEvery;
    }

    /**
     * The core of {@link #personOf} without pixels: one face of a track; {@code passes} whether it
     * passed the quality checks, {@code embedding} its embedding where it is needed (else null).
     */
    public synchronized Optional<Segment> observe(String camera, String trackId, boolean passes, double[] embedding,
                                                  Instant now) {
        Objects.requireNonNull(now, "now");
        TrackState t = tracks.computeIfAbsent(camera + "\n" + trackId, k -> new TrackState(camera, trackId));
        t.lastSeen = now;
        if (t.segmentStart == null) {
            t.segmentStart = now;
        }
        if (t.person != null) {
            if (passes && ++t.sinceCheck >= recheckEvery && embedding != null) {
                t.sinceCheck = 0;
                double s = ledger.similarity(t.person, embedding);
                t.disagreements = s >= ledger.threshold() ? 0 : t.disagreements + 1;
                if (t.disagreements >= DISAGREEMENTS_TO_SPLIT || Double.isNaN(s)) {
                    split(t, now);
                    return Optional.empty();
                }
            }
            return Optional.of(new Segment(t.person, t.budgetTrack()));
        }
        if (!passes || embedding == null) {
            return Optional.empty();
        }
        t.pending.add(embedding);
        if (t.pending.size() < facesToLink) {
            return Optional.empty();
        }
        Set<String> elsewhere = disjointViews ? elsewhere(t) : Set.of();
        Optional<PersonLedger.Link> link = ledger.link(camera, mean(t.pending), now, elsewhere);
        t.pending.clear();
        if (link.isEmpty()) {
            return Optional.empty();
        }
        t.person = link.get().personId();
        noised.add("persons", t.person, now);
        if (link.get().linked()) {
            noised.add("linkedPersons", t.person, now);
        }
        t.sinceCheck = 0;
        t.disagreements = 0;
        return Optional.of(new Segment(t.person, t.budgetTrack()));
    }

    /**
     * The track has ended: returns the ids its track budget was kept under (to forget). It still
     * rules its person out of tracks it overlapped for a minute.
     */
    public synchronized List<String> ended(String camera, String trackId, Instant now) {
        TrackState t = tracks.get(camera + "\n" + trackId);
        List<String> ids = new ArrayList<>();
        ids.add(trackId);
        if (t != null) {
            for (int s = 1; s <= t.segment; s++) {
                ids.add(trackId + "~" + s);
            }
            t.ended = now;
        }
        tracks.values().removeIf(x -> x.ended != null && !now.isBefore(x.ended.plus(ENDED_KEPT)));
        return ids;
    }

    private void split(TrackState t, Instant now) {
        splits++;
        t.person = null;
        t.segment++;
        t.segmentStart = now;
        t.pending.clear();
        t.sinceCheck = 0;
        t.disagreements = 0;
    }

    /** Persons of other tracks seen while {@code t}'s segment was under way: not its person. */
    private Set<String> elsewhere(TrackState t) {
        Set<String> out = new HashSet<>();
        for (TrackState o : tracks.values()) {
            if (o != t && o.person != null && !o.lastSeen.isBefore(t.segmentStart)) {
                out.add(o.person);
            }
        }
        ruledOut += out.size();
        return out;
    }

    private static double[] mean(List<double[]> faces) {
        double[] m = new double[faces.get(0).length];
        for (double[] f : faces) {
            float[] u = PersonLedger.unit(f);
            if (u.length != m.length) {
                throw new IllegalArgumentException("a track's faces have embeddings of different lengths");
            }
            for (int i = 0; i < m.length; i++) {
                m[i] += u[i];
            }
        }
        return m;
    }

    /** Landmarks for alignment, a confident detection, enough pixels, and the whole box in the frame. */
    boolean passes(Mat frame, DetectedFace face) {
        Rect b = face.box();
        return face.landmarks() != null && face.landmarks().length >= 10 && face.score() >= minScore
                && b.width >= minFaceSize && b.x >= 0 && b.y >= 0 && b.x + b.width <= frame.cols()
                && b.y + b.height <= frame.rows();
    }

    /**
     * The status topic's linking section: the settings, and the persons seen and linked, each
     * person counted at most once a day and noised ({@link StatusCounts}). No per-person spend, exact link count
     * or persons held: those are {@link #localReport}'s.
     */
    public Map<String, Object> report() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("enabled", true);
        m.put("budgetScope", "person");
        m.put("threshold", ledger.threshold());
        m.put("network", network == null ? "release's" : network);
        m.put("matches", ledger.matches());
        m.put("facesToLink", facesToLink);
        m.put("disjointViews", disjointViews);
        m.put("noised", noised.section(Instant.now()));
        return m;
    }

    /** The noised counts of persons seen and linked (for the gateway's total of what its counts cost a person). */
    public StatusCounts counts() {
        return noised;
    }

    /** The exact linking counters and the most any person spent: the authenticated REST status only. */
    public Map<String, Object> localReport() {
        PersonLedger.Stats s = ledger.stats(SteadyClock.system().instant());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("appearances", s.appearances());
        m.put("linkedAppearances", s.linked());
        m.put("personsHeld", s.persons());
        m.put("maxPersonEpsilon", s.maxPersonEpsilon());
        m.put("personCharges", s.charges());
        m.put("personRefusals", s.refusals());
        m.put("personUnrecorded", s.unrecorded());
        synchronized (this) {
            m.put("splitTracks", splits);
            m.put("candidatesRuledOut", ruledOut);
        }
        m.put("countedPersons", noised.exact());
        return m;
    }

    /** The report of a gateway that links nothing. */
    public static Map<String, Object> offReport(String reason) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("enabled", false);
        m.put("budgetScope", "track");
        m.put("reason", reason);
        return m;
    }
}
