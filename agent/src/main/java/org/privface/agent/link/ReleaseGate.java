package org.privface.agent.link;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import org.privface.privacy.StatusCounts;
import org.privface.agent.track.TrackBudget;

/**
 * One camera's release decisions: asks a face's person (where the gateway links) and then its
 * track for budget, and names the track id the release goes out under. What it guarantees on the
 * wire (docs/privacy.md, "What each published field depends on"):
 *
 * <ul>
 *   <li>A segment a linking split made is published under a fresh random track id, so no published
 *       track carries two budget windows ({@code releaseIndex} restarting, {@code windowStartMillis}
 *       jumping) that only the person ledger explains.</li>
 *   <li>A segment held because its person had no room releases nothing more in this appearance,
 *       so no release of it lines up with the end of another track's (public) window: the time
 *       its person's budget came back would otherwise key the tracks of one person across cameras.</li>
 *   <li>A segment whose grant the person ledger refused (two cameras racing for the last share)
 *       releases nothing more, so no {@code releaseIndex} gap shows the refusal.</li>
 *   <li>A segment started under another policy version releases nothing more.</li>
 * </ul>
 * So each published track's records are a prefix of what it would publish were it its own person.
 * Runs on the camera's thread; not thread-safe.
 */
public final class ReleaseGate {
    /** Why a face was not released; {@link #GRANTED} where it was. */
    public enum Outcome {
        GRANTED,
        /** Linking on and the track not yet linked to a person (too few passing faces, or the ledger full). */
        NOT_LINKED,
        /** Its person had no room: this segment releases nothing more. */
        HELD_BY_PERSON,
        /** Its track's own budget refused the face. */
        TRACK_SPENT,
        /** Started under another policy version, or stopped after a refused charge: releases nothing more. */
        STOPPED
    }

    /**
     * A decision for one face.
     *
     * @param publishedTrackId the id a release goes out under (null when not granted)
     * @param unit             whose face it is for counting: the person where linked, else the track;
     *                         null while linking has not named a person
     */
    public record Decision(Outcome outcome, TrackBudget.Grant grant, String publishedTrackId, String unit) {
        public boolean granted() {
            return outcome == Outcome.GRANTED;
        }
    }

    private static final class SegmentState {
        final long version;
        boolean stopped;
        final String publishedId;

        SegmentState(long version, String publishedId) {
            this.version = version;
            this.publishedId = publishedId;
        }
    }

    /** The gateway's linking; null where off (the budget scope is the track). */
    private final GatewayLinking linking;
    /**
     * The status topic's counts of this camera: units (persons, tracks where linking is off) seen, and
     * held by their person's budget, each at most once a day: never faces, which one person moves
     * without bound (issue 39: ten minutes in view moved the per-face counts by 12,000).
     */
    private final StatusCounts counts;
    /** Every segment of the live tracks, by budget track id. */
    private final Map<String, SegmentState> segments = new HashMap<>();

    public ReleaseGate(GatewayLinking linking) {
        this(linking, new StatusCounts(linking == null ? "track" : "person"));
    }

    /** With the status counts given (tests: a seeded noise source); they get the counters "seen" and "withheld". */
    public ReleaseGate(GatewayLinking linking, StatusCounts counts) {
        this.linking = linking;
        this.counts = counts.counter(SEEN).counter(WITHHELD);
    }

    public static final String SEEN = "seen";
    public static final String WITHHELD = "withheld";

    /** This camera's noised counts ({@link StatusCounts#section}); their exact values only in the local report. */
    public StatusCounts counts() {
        return counts;
    }

    /** Decides, and counts the unit seen, and held where its person's budget held it. */
    public Decision decide(String trackId, long framesSeen, Optional<GatewayLinking.Segment> segment, TrackBudget budget,
                           long version, Instant now) {
        Decision d = decideOnly(trackId, framesSeen, segment, budget, version, now);
        if (d.unit() != null) {
            counts.add(SEEN, d.unit(), now);
            if (d.outcome() == Outcome.HELD_BY_PERSON) {
                counts.add(WITHHELD, d.unit(), now);
            }
        }
        return d;
    }

    /**
     * Decides one face of track {@code trackId}.
     *
     * @param segment its person and budget id where linking runs (empty while not linked), ignored where off
     * @param version the policy version in force, under which {@code budget} was made
     */
    private Decision decideOnly(String trackId, long framesSeen, Optional<GatewayLinking.Segment> segment,
                                TrackBudget budget, long version, Instant now) {
        if (linking != null && segment.isEmpty()) {
            return new Decision(Outcome.NOT_LINKED, null, null, null);
        }
        String budgetTrack = linking == null ? trackId : segment.get().budgetTrack();
        String unit = linking == null ? "track:" + trackId : "person:" + segment.get().personId();
        // A split's later segment goes out as a new track: a fresh random id, like the tracker's.
        SegmentState s = segments.computeIfAbsent(budgetTrack, id -> new SegmentState(version,
                id.equals(trackId) ? trackId : "trk-" + UUID.randomUUID()));
        if (s.stopped || s.version != version) {
            return new Decision(Outcome.STOPPED, null, null, unit);
        }
        if (linking != null && !linking.ledger().hasRoom(segment.get().personId(), budget, now)) {
            if (!budget.wouldGrant(budgetTrack, framesSeen, now)) {
                // The track's own budget refuses too: its own records explain this, and its own window may
                // still bring the next release, as it would were it alone.
                return new Decision(Outcome.TRACK_SPENT, null, null, unit);
            }
            // Held by its person alone: nothing more from this segment, not even once the person's
            // window ends, since that time is the first release of another of its tracks plus W.
            s.stopped = true;
            return new Decision(Outcome.HELD_BY_PERSON, null, null, unit);
        }
        Optional<TrackBudget.Grant> grant = budget.request(budgetTrack, framesSeen, now);
        if (grant.isEmpty()) {
            return new Decision(Outcome.TRACK_SPENT, null, null, unit);
        }
        if (linking != null && linking.ledger().charge(segment.get().personId(), budget, now).isEmpty()) {
            // The track spent a grant it cannot release: it releases nothing more, so no later
            // record of it carries a releaseIndex gap that only the person ledger explains.
            s.stopped = true;
            return new Decision(Outcome.STOPPED, null, null, unit);
        }
        return new Decision(Outcome.GRANTED, grant.get(), s.publishedId, unit);
    }

    /** The track has ended: forgets its segments, and returns the budget ids to forget. */
    public List<String> ended(String camera, String trackId, Instant now) {
        List<String> ids = linking == null ? List.of(trackId) : linking.ended(camera, trackId, now);
        ids.forEach(segments::remove);
        return ids;
    }

    /** Live segments (for the local report). */
    public int live() {
        return segments.size();
    }
}
