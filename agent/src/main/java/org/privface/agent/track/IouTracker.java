package org.privface.agent.track;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Follows faces across the frames of one camera so releases can be charged to a per-track budget.
 *
 * <p>Matching is greedy: pairs above the IoU threshold first, highest IoU first; then, for what is left, pairs whose
 * centres are within {@code centreFraction} of the boxes' mean size, nearest first (fast motion leaves no overlap).
 * Each track and each detection is matched at most once per frame. A track survives up to {@code maxMissedFrames}
 * consecutive frames without a match (counted from frame sequence numbers, so skipped frames count) and no longer
 * than {@code maxIdle} since it was last seen. Track ids are random UUIDs, never derived from the image, so they
 * reveal nothing about the face.
 *
 * <p>One instance per camera stream. A frame sequence that does not increase is taken as a restarted source (a
 * camera reconnect): the gap is then measured by time alone, so tracks last seen within {@code maxIdle} live on and
 * a face still in place keeps its track and its spent budget; older ones end.
 *
 * <p>Tracks are never evicted to make room: that would hand a face still in view a fresh track, and so a fresh
 * budget. Past {@code maxTracks} a new detection is returned {@link Tracked#untracked() untracked}, and the caller
 * withholds it until a track ends. Thread-safe, though one camera normally drives it from one thread.
 */
public final class IouTracker {

    public static final double DEFAULT_IOU_THRESHOLD = 0.3;
    public static final double DEFAULT_CENTRE_FRACTION = 1.0;
    public static final int DEFAULT_MAX_MISSED_FRAMES = 15;
    public static final Duration DEFAULT_MAX_IDLE = Duration.ofSeconds(10);
    public static final int DEFAULT_MAX_TRACKS = 64;

    /**
     * @param iouThreshold    a pair matches on overlap when IoU is strictly above this, in [0, 1)
     * @param centreFraction  fallback radius as a fraction of the boxes' mean size; 0 turns the fallback off
     * @param maxMissedFrames consecutive unmatched frames a track survives, >= 0
     * @param maxIdle         longest time since a track was last seen, positive
     * @param maxTracks       concurrent tracks kept; beyond it new detections are left untracked, >= 1
     */
    public record Config(double iouThreshold, double centreFraction, int maxMissedFrames, Duration maxIdle,
                         int maxTracks) {
        public Config {
            if (!(iouThreshold >= 0 && iouThreshold < 1)) {
                throw new IllegalArgumentException("iouThreshold must be in [0, 1), was " + iouThreshold);
            }
            if (!(centreFraction >= 0) || !Double.isFinite(centreFraction)) {
                throw new IllegalArgumentException("centreFraction must be >= 0 and finite, was " + centreFraction);
            }
            if (maxMissedFrames < 0) {
                throw new IllegalArgumentException("maxMissedFrames must be >= 0, was " + maxMissedFrames);
            }
            Objects.requireNonNull(maxIdle, "maxIdle");
            if (maxIdle.isNegative() || maxIdle.isZero()) {
                throw new IllegalArgumentException("maxIdle must be positive, was " + maxIdle);
            }
            if (maxTracks < 1) {
                throw new IllegalArgumentException("maxTracks must be >= 1, was " + maxTracks);
            }
        }

        public static Config defaults() {
            return new Config(DEFAULT_IOU_THRESHOLD, DEFAULT_CENTRE_FRACTION, DEFAULT_MAX_MISSED_FRAMES,
                    DEFAULT_MAX_IDLE, DEFAULT_MAX_TRACKS);
        }

        public Config withIouThreshold(double v) {
            return new Config(v, centreFraction, maxMissedFrames, maxIdle, maxTracks);
        }

        public Config withCentreFraction(double v) {
            return new Config(iouThreshold, v, maxMissedFrames, maxIdle, maxTracks);
        }

        public Config withMaxMissedFrames(int v) {
            return new Config(iouThreshold, centreFraction, v, maxIdle, maxTracks);
        }

        public Config withMaxIdle(Duration v) {
            return new Config(iouThreshold, centreFraction, maxMissedFrames, v, maxTracks);
        }

        public Config withMaxTracks(int v) {
            return new Config(iouThreshold, centreFraction, maxMissedFrames, maxIdle, v);
        }
    }

    /**
     * One detection of the frame, in the order given to {@link #update}.
     *
     * @param trackId    null when untracked
     * @param framesSeen frames in which this track has been matched, this one included (1 for a new track)
     * @param untracked  the tracker was full, so this detection belongs to no track and must not be released
     */
    public record Tracked(String trackId, Box box, boolean isNew, long framesSeen, boolean untracked) {
        public Tracked(String trackId, Box box, boolean isNew, long framesSeen) {
            this(trackId, box, isNew, framesSeen, false);
        }
    }

    private static final class Track {
        final String id;
        Box box;
        long lastSequence;
        Instant lastSeenAt;
        long framesSeen;

        Track(String id, Box box, long sequence, Instant at) {
            this.id = id;
            this.box = box;
            this.lastSequence = sequence;
            this.lastSeenAt = at;
            this.framesSeen = 1;
        }
    }

    private record Pair(int track, int detection, double score) {
    }

    private final Config config;
    private final Map<String, Track> tracks = new LinkedHashMap<>();
    private List<String> ended = List.of();
    private boolean started;
    private long lastSequence;

    public IouTracker() {
        this(Config.defaults());
    }

    public IouTracker(Config config) {
        this.config = Objects.requireNonNull(config, "config");
    }

    public Config config() {
        return config;
    }

    /**
     * Assigns every detection of a frame to a track, creating tracks for unmatched detections and ending tracks
     * that have gone unseen too long; {@link #ended()} then lists the tracks this call ended.
     *
     * @return one entry per detection, in the same order
     */
    public synchronized List<Tracked> update(List<Box> detections, long frameSequence, Instant at) {
        Objects.requireNonNull(detections, "detections");
        Objects.requireNonNull(at, "at");
        for (Box d : detections) {
            Objects.requireNonNull(d, "detection");
        }
        List<String> endedNow = new ArrayList<>();
        if (started && frameSequence <= lastSequence) {
            // The source restarted (a reconnect): sequence numbers say nothing across the gap, so only time
            // ends a track; idle ones end just below, the rest may match where they were.
            for (Track t : tracks.values()) {
                t.lastSequence = frameSequence - 1;
            }
        }
        started = true;
        lastSequence = frameSequence;

        for (Iterator<Track> it = tracks.values().iterator(); it.hasNext(); ) {
            Track t = it.next();
            long missedBefore = frameSequence - t.lastSequence - 1;
            if (missedBefore > config.maxMissedFrames() || idleTooLong(t, at)) {
                endedNow.add(t.id);
                it.remove();
            }
        }

        List<Track> live = new ArrayList<>(tracks.values());
        int[] assigned = match(live, detections);

        List<Tracked> out = new ArrayList<>(detections.size());
        boolean[] matched = new boolean[live.size()];
        for (int j = 0; j < detections.size(); j++) {
            Box d = detections.get(j);
            if (assigned[j] >= 0) {
                Track t = live.get(assigned[j]);
                matched[assigned[j]] = true;
                t.box = d;
                t.lastSequence = frameSequence;
                t.lastSeenAt = at;
                t.framesSeen++;
                out.add(new Tracked(t.id, d, false, t.framesSeen));
            } else if (tracks.size() >= config.maxTracks()) {
                out.add(new Tracked(null, d, false, 0, true));
            } else {
                Track n = new Track("trk-" + UUID.randomUUID(), d, frameSequence, at);
                tracks.put(n.id, n);
                out.add(new Tracked(n.id, d, true, 1));
            }
        }

        for (int i = 0; i < live.size(); i++) {
            Track t = live.get(i);
            if (!matched[i] && frameSequence - t.lastSequence > config.maxMissedFrames()) {
                endedNow.add(t.id);
                tracks.remove(t.id);
            }
        }


        ended = List.copyOf(endedNow);
        return List.copyOf(out);
    }

    /** Tracks ended by the last {@link #update}: unseen for too many frames or too long. */
    public synchronized List<String> ended() {
        return ended;
    }

    /** Tracks currently alive. */
    public synchronized int size() {
        return tracks.size();
    }

    private boolean idleTooLong(Track t, Instant at) {
        return Duration.between(t.lastSeenAt, at).compareTo(config.maxIdle()) > 0;
    }

    /** For each detection, the index in {@code live} of its track, or -1. */
    private int[] match(List<Track> live, List<Box> detections) {
        int[] assigned = new int[detections.size()];
        Arrays.fill(assigned, -1);
        boolean[] trackUsed = new boolean[live.size()];

        List<Pair> overlaps = new ArrayList<>();
        for (int i = 0; i < live.size(); i++) {
            for (int j = 0; j < detections.size(); j++) {
                double iou = live.get(i).box.iou(detections.get(j));
                if (iou > config.iouThreshold()) {
                    overlaps.add(new Pair(i, j, iou));
                }
            }
        }
        overlaps.sort(Comparator.comparingDouble(Pair::score).reversed());
        assignGreedily(overlaps, assigned, trackUsed);

        if (config.centreFraction() > 0) {
            List<Pair> near = new ArrayList<>();
            for (int i = 0; i < live.size(); i++) {
                if (trackUsed[i]) {
                    continue;
                }
                Box tb = live.get(i).box;
                for (int j = 0; j < detections.size(); j++) {
                    if (assigned[j] >= 0) {
                        continue;
                    }
                    Box d = detections.get(j);
                    double scale = (tb.size() + d.size()) / 2;
                    double distance = tb.centreDistance(d);
                    if (scale > 0 && distance <= config.centreFraction() * scale) {
                        near.add(new Pair(i, j, distance / scale));
                    }
                }
            }
            near.sort(Comparator.comparingDouble(Pair::score));
            assignGreedily(near, assigned, trackUsed);
        }
        return assigned;
    }

    /** Stable sorts upstream keep ties in track-then-detection order, so results are deterministic. */
    private static void assignGreedily(List<Pair> ranked, int[] assigned, boolean[] trackUsed) {
        for (Pair p : ranked) {
            if (!trackUsed[p.track()] && assigned[p.detection()] < 0) {
                trackUsed[p.track()] = true;
                assigned[p.detection()] = p.track();
            }
        }
    }
}
