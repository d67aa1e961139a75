package org.privface.agent.link;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.privface.agent.control.StatusCounts;
import org.privface.agent.detect.DetectedFace;

/**
 * Appearance linking on one gateway: gives each new track its person, from the raw embedding of the
 * track's first face that passes the quality checks, before any budget is asked (computing an
 * embedding releases nothing). The embedding goes to the {@link PersonLedger} and nowhere else.
 */
public final class GatewayLinking {
    /** Faces narrower than this (pixels) are not embedded for linking: too little face for a reliable link. */
    public static final int DEFAULT_MIN_FACE_SIZE = 40;
    /** Detector confidence a face needs to be embedded for linking. */
    public static final double DEFAULT_MIN_SCORE = 0.8;

    private final PersonLedger ledger;
    private final int minFaceSize;
    private final double minScore;
    private final StatusCounts noised;

    public GatewayLinking(PersonLedger ledger, int minFaceSize, double minScore) {
        this.ledger = ledger;
        this.minFaceSize = minFaceSize;
        this.minScore = minScore;
        this.noised = new StatusCounts().count("appearances", () -> ledger.stats(Instant.now()).appearances())
                .count("linkedAppearances", () -> ledger.stats(Instant.now()).linked());
    }

    /** Whether linking runs, and why not. */
    public record Decision(GatewayLinking linking, String reason) {
        public Optional<GatewayLinking> on() {
            return Optional.ofNullable(linking);
        }
    }

    /**
     * Opens linking where it can run: enabled, an embedding network on disk, and a detector with
     * the landmarks alignment needs. Otherwise off, and the records' budget scope is the track.
     */
    public static Decision open(boolean enabled, double threshold, int minFaceSize, double minScore,
                                Optional<String> embedderMissing, boolean landmarks, Path dir, Duration window) throws IOException {
        if (!enabled) {
            return new Decision(null, "agent.link.enabled is false");
        }
        if (embedderMissing.isPresent()) {
            return new Decision(null, embedderMissing.get());
        }
        if (Double.isNaN(threshold)) {
            return new Decision(null, "no calibrated link threshold for a custom embedding network: set agent.link.threshold");
        }
        if (!landmarks) {
            return new Decision(null, "the detector gives no landmarks, which alignment needs");
        }
        PersonLedger l = PersonLedger.open(dir, threshold, window, Instant.now());
        return new Decision(new GatewayLinking(l, minFaceSize, minScore), "on");
    }

    public PersonLedger ledger() {
        return ledger;
    }

    /**
     * The person of a track: the one it was linked to, or, on the track's first face that passes
     * the quality checks, the person its embedding links to. Empty while no face of the track has
     * passed, or when the ledger is full; the face must then not be released.
     *
     * @param trackPersons the camera's track → person map; a new link is put there
     * @param embedding    the face's embedding, asked for only when the face is linked (the
     *                     release reuses it)
     */
    public Optional<String> personOf(String camera, String trackId, Map<String, String> trackPersons, Mat frame,
                                     DetectedFace face, Supplier<double[]> embedding, Instant now) {
        String known = trackPersons.get(trackId);
        if (known != null) {
            return Optional.of(known);
        }
        if (!passes(frame, face)) {
            return Optional.empty();
        }
        Optional<PersonLedger.Link> link = ledger.link(camera, embedding.get(), now);
        link.ifPresent(l -> trackPersons.put(trackId, l.personId()));
        return link.map(PersonLedger.Link::personId);
    }

    /** Landmarks for alignment, a confident detection, enough pixels, and the whole box in the frame. */
    boolean passes(Mat frame, DetectedFace face) {
        Rect b = face.box();
        return face.landmarks() != null && face.landmarks().length >= 10 && face.score() >= minScore
                && b.width >= minFaceSize && b.x >= 0 && b.y >= 0 && b.x + b.width <= frame.cols()
                && b.y + b.height <= frame.rows();
    }

    /**
     * The status topic's linking section: the settings, and the appearances and links noised
     * ({@link StatusCounts}, ε per appearance per counter). No per-person spend, exact link count
     * or persons held: those are {@link #localReport}'s.
     */
    public Map<String, Object> report() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("enabled", true);
        m.put("budgetScope", "person");
        m.put("threshold", ledger.threshold());
        m.put("noised", noised.section(Instant.now()));
        return m;
    }

    /** The exact linking counters and the most any person spent: the authenticated REST status only. */
    public Map<String, Object> localReport() {
        PersonLedger.Stats s = ledger.stats(Instant.now());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("appearances", s.appearances());
        m.put("linkedAppearances", s.linked());
        m.put("personsHeld", s.persons());
        m.put("maxPersonEpsilon", s.maxPersonEpsilon());
        m.put("personCharges", s.charges());
        m.put("personRefusals", s.refusals());
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
