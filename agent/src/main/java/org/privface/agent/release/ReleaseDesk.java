package org.privface.agent.release;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.opencv.core.Mat;
import org.privface.agent.answer.QueryAnswerer;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.link.GatewayLinking;
import org.privface.agent.link.ReleaseGate;
import org.privface.agent.policy.SitePolicy;
import org.privface.agent.publish.PerturbedRecords;
import org.privface.agent.publish.Uplink;
import org.privface.agent.track.TrackBudget;
import org.privface.privacy.FaceMechanism;
import org.privface.privacy.Release;
import org.privface.privacy.StatusCounts;
import org.privface.privacy.answer.Gallery;
import org.privface.wire.avro.AnswerTrack;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.TrackRelease;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes a face to records: grant (the person's and the track's budget, {@link ReleaseGate}) → ε
 * split between the answer and the vector ({@link AnswerPlan}) → mechanism → release → record →
 * uplink. A camera's desk does all of it; enrollment's desk only the second half
 * ({@link #send}), its grants being the enrollment ledger's. Not thread-safe: a camera's desk runs
 * on the camera's thread.
 *
 * <p>A policy change applies to tracks that start after it. Tracks already under way release
 * nothing more, so no change, remote or local, can raise what an appearance in progress spends.
 */
public final class ReleaseDesk {
    private static final Logger LOG = LoggerFactory.getLogger(ReleaseDesk.class);
    private final String camera;
    private final Mechanisms mechanisms;
    private final PerturbedRecords records;
    private final Uplink uplink;
    /** The gateway's appearance linking; null where off, and then the budget scope is the track. */
    private final GatewayLinking linking;
    /** The person's and the track's budget asked in order, and the id each release goes out under; null for enrollment. */
    private final ReleaseGate gate;
    private final ReleaseCounts counts;
    /** Releases of each live track, for the releases-per-track summary. */
    private final Map<String, long[]> tracks = new HashMap<>();
    /** Answers granted and waiting for more of their track's faces, by the tracker's track id. */
    private final Map<String, HeldAnswer> held = new HashMap<>();
    /** The site's answers; null where query faces release vectors only. */
    private QueryAnswerer answers;
    private SitePolicy policy;
    private TrackBudget budget;
    private long budgetVersion = -1;
    private AnswerPlan plan;
    private long planBudgetVersion = Long.MIN_VALUE;
    private Gallery planGallery;

    /** A camera's desk. */
    public ReleaseDesk(String camera, Mechanisms mechanisms, PerturbedRecords records, Uplink uplink,
                       GatewayLinking linking, ReleaseCounts counts) {
        this(camera, mechanisms, records, uplink, linking, new ReleaseGate(linking), counts);
    }

    private ReleaseDesk(String camera, Mechanisms mechanisms, PerturbedRecords records, Uplink uplink,
                        GatewayLinking linking, ReleaseGate gate, ReleaseCounts counts) {
        this.camera = camera;
        this.mechanisms = mechanisms;
        this.records = records;
        this.uplink = uplink;
        this.linking = linking;
        this.gate = gate;
        this.counts = counts;
    }

    /** Enrollment's desk: mechanism → release → record → uplink, charged beforehand in the enrollment ledger. */
    public static ReleaseDesk enrollment(Mechanisms mechanisms, PerturbedRecords records, Uplink uplink) {
        return new ReleaseDesk("enrollment", mechanisms, records, uplink, null, null, null);
    }

    /** Query faces answer by randomized response against the site's gallery (docs/wire.md, "Answers instead of vectors"). */
    public void answers(QueryAnswerer answerer) {
        this.answers = answerer;
    }

    /** The camera's policy from now on (merged with its overrides), and how its releases are charged. */
    public void policy(SitePolicy p, long version) {
        policy = p;
        budget = mechanisms.chargedBudget(p);
        budgetVersion = version;
    }

    public SitePolicy policy() {
        return policy;
    }

    /** The version of the policy held; -1 before the first. */
    public long policyVersion() {
        return budgetVersion;
    }

    /**
     * One detected, tracked face offered for release.
     *
     * @param input         the mechanism's input ({@link FaceInput#of})
     * @param embedding     the face's embedding, computed on first use (answers, and linking where it shares the network)
     * @param linkEmbedding the embedding linking reads
     * @param origin        told each record's event id before the record goes out (the gateway's origin log)
     */
    public record Offer(String trackId, long framesSeen, Mat image, DetectedFace face, Supplier<double[]> input,
                        Supplier<double[]> embedding, Supplier<double[]> linkEmbedding, Instant capturedAt,
                        Instant capturedAtOrNow, Consumer<String> origin) {
    }

    /** Releases what the face may release, or counts it withheld: answer checks, grant, ε split, records. */
    public void offer(Offer o) {
        // The person is linked once per face, where it is asked: before the held answer, or before the grant.
        Supplier<Optional<GatewayLinking.Segment>> segment = FaceInput.once(() -> linking == null ? Optional.empty()
                : linking.personOf(camera, o.trackId(), o.image(), o.face(), o.linkEmbedding(), o.capturedAt()));
        HeldAnswer h = held.get(o.trackId());
        if (h != null) {
            if (linking == null
                    || segment.get().map(GatewayLinking.Segment::budgetTrack).equals(Optional.of(h.budgetTrack))) {
                // Part of the answer this track's grant already paid for: decoded with it, charged nothing more.
                h.add(answers.query(h.gallery, h.split.mechanism(), o.embedding().get()));
                if (h.full(answers.trackFaces())) {
                    answer(held.remove(o.trackId()));
                }
                return;
            }
            // Linking split the track: what the earlier segment holds goes out before this one asks.
            answer(held.remove(o.trackId()));
        }
        Optional<Gallery> gallery = answers == null ? Optional.empty() : answers.gallery();
        if (answers != null && !answers.vectors() && gallery.isEmpty()) {
            // Answer-only with no valid gallery: nothing to answer with, and no vector may go out.
            answers.withheldForNoGallery();
            counts.withheld();
            return;
        }
        AnswerPlan split = null;
        if (answers != null && gallery.isPresent()) {
            split = answerPlan(gallery.get());
            if (!split.ok()) {
                // Refused before the grant: a face that cannot be answered is not charged.
                answers.withheldForPlan(split.refusal());
                counts.withheld();
                return;
            }
        }
        long[] state = tracks.computeIfAbsent(o.trackId(), id -> new long[] {0});
        Optional<ReleaseGate.Decision> granted = grant(o, segment.get());
        if (granted.isEmpty()) {
            return;
        }
        release(o, granted.get(), split, gallery, segment.get());
        state[0]++;
    }

    /** The person must have room before the track asks. */
    private Optional<ReleaseGate.Decision> grant(Offer o, Optional<GatewayLinking.Segment> segment) {
        ReleaseGate.Decision d = gate.decide(o.trackId(), o.framesSeen(), segment, budget, budgetVersion,
                o.capturedAtOrNow());
        if (d.granted()) {
            return Optional.of(d);
        }
        if (d.outcome() == ReleaseGate.Outcome.HELD_BY_PERSON) {
            counts.heldByPerson();
        } else {
            counts.withheld();
        }
        return Optional.empty();
    }

    /**
     * The grant's records: the answer at what the split leaves it, the vector at the rest (or at the
     * whole grant where the face is not answered). A split's later segment goes out under its own
     * fresh id (ReleaseGate). The answer is held for the track's next faces
     * ({@link QueryAnswerer#trackFaces}) and goes out with the last of them or at the track's end.
     */
    private void release(Offer o, ReleaseGate.Decision d, AnswerPlan split, Optional<Gallery> gallery,
                         Optional<GatewayLinking.Segment> segment) {
        String trackId = d.publishedTrackId();
        TrackBudget.Grant g = d.grant();
        FaceMechanism m = split != null ? split.mechanism()
                : mechanisms.forRelease(policy, g.epsilonForThisRelease(), g.muForThisRelease());
        if (split != null) {
            HeldAnswer h = new HeldAnswer(gallery.get(), split, trackId, trackSection(g), o.capturedAt(), o.origin(),
                    segment.map(GatewayLinking.Segment::budgetTrack).orElse(null));
            h.add(answers.query(h.gallery, split.mechanism(), o.embedding().get()));
            if (h.full(answers.trackFaces())) {
                answer(h);
            } else {
                held.put(o.trackId(), h);
            }
            if (!answers.vectors()) {
                return;
            }
        }
        Sent s = send(m, o.input().get(), trackId, o.capturedAt(), null, trackSection(g), null, o.origin());
        if (!s.spooled()) {
            counts.spoolDropped();
        }
        counts.released(s.release().epsilonPerFace());
    }

    /**
     * A track's answer, granted and charged, waiting for the track's next faces: the faces'
     * directions (never published), and what its record will say.
     */
    private static final class HeldAnswer {
        final Gallery gallery;
        final AnswerPlan split;
        final String publishedTrackId;
        final TrackRelease section;
        final Instant capturedAt;
        final Consumer<String> origin;
        /** The linking segment the grant was charged to; null where linking is off. */
        final String budgetTrack;
        final List<double[]> directions = new ArrayList<>();
        /** A face the gallery could not decode: the answer is not made (as for a single face). */
        boolean unanswerable;

        HeldAnswer(Gallery gallery, AnswerPlan split, String publishedTrackId, TrackRelease section, Instant capturedAt,
                   Consumer<String> origin, String budgetTrack) {
            this.gallery = gallery;
            this.split = split;
            this.publishedTrackId = publishedTrackId;
            this.section = section;
            this.capturedAt = capturedAt;
            this.origin = origin;
            this.budgetTrack = budgetTrack;
        }

        void add(Optional<double[]> direction) {
            direction.ifPresentOrElse(directions::add, () -> unanswerable = true);
        }

        boolean full(int faces) {
            return unanswerable || directions.size() >= faces;
        }
    }

    /**
     * Releases a held answer at the ε its split gave it. The answer spends at most what the ledgers
     * charged for its grant (less the vector's stated ε where both go out), and its record states
     * what it spent: that is counted. Its capture time is its first face's.
     */
    private void answer(HeldAnswer h) {
        if (h.unanswerable || h.directions.isEmpty()) {
            return; // QueryAnswerer logged why; the grant was spent, nothing goes out
        }
        FaceAnswer sent = answers.answer(h.gallery, h.directions, h.split.answerEpsilon(), camera, h.publishedTrackId,
                h.capturedAt, answerTrack(h.section));
        // Like a vector's: which image and face the answer came from (its first face), for offline scoring.
        h.origin.accept(sent.getEventId());
        counts.released(sent.getMechanism().getEpsilonPerFace());
    }

    /** A sent record: the release it carries and whether the spool took it. */
    public record Sent(Release release, PerturbedFace record, boolean spooled) {
    }

    /**
     * Perturbs one input, builds its record and hands it to the uplink.
     *
     * @param label  the enrollment label, or null for a query face
     * @param key    the record's key (enrollment: the person's pseudonym, image tag and index), or null for the camera's
     * @param origin told the record's event id before it goes out, or null
     */
    public Sent send(FaceMechanism m, double[] input, String trackId, Instant capturedAt, String label,
                     TrackRelease section, String key, Consumer<String> origin) {
        Release rel = m.perturb(input);
        PerturbedFace rec = records.of(rel, camera, trackId, capturedAt, label, section);
        if (origin != null) {
            origin.accept(rec.getEventId());
        }
        boolean spooled = key == null ? uplink.submit(rec) : uplink.submit(rec, key);
        return new Sent(rel, rec, spooled);
    }

    /** Releases the answers the ended tracks hold, then forgets the tracks, after recording how many releases each made. */
    public void ended(List<String> ids, Instant now) {
        for (String id : ids) {
            HeldAnswer h = held.remove(id);
            if (h != null) {
                answer(h);
            }
            long[] state = tracks.remove(id);
            if (state != null) {
                counts.trackEnded(state[0]);
            }
            gate.ended(camera, id, now).forEach(budget::forget);
        }
    }

    /** The ids of the live tracks (unrelated stills end all of theirs after each frame). */
    public List<String> liveTracks() {
        return List.copyOf(tracks.keySet());
    }

    /** The answer plan of the current policy and gallery, worked out once per change of either. */
    private AnswerPlan answerPlan(Gallery g) {
        if (plan == null || planBudgetVersion != budgetVersion || planGallery != g) {
            plan = AnswerPlan.of(mechanisms, policy, budget, answers.vectors(), Optional.of(g), answers.sampler());
            planBudgetVersion = budgetVersion;
            planGallery = g;
            if (!plan.ok()) {
                LOG.error("camera {}: query faces are withheld uncharged: {}", camera, plan.refusal());
            }
        }
        return plan;
    }

    /**
     * The record's track section: the grant (a function of the policy and of this track's own
     * releases) and the gateway's linking setting with the policy's per-person cap. Nothing from the
     * person ledger: its spend, count and window start would link one person's records (issue 33).
     */
    private TrackRelease trackSection(TrackBudget.Grant g) {
        return TrackRelease.newBuilder().setReleaseIndex(g.releaseIndex())
                .setEpsilonSpentInWindow(g.epsilonSpentInWindow()).setEpsilonBudget(g.epsilonBudget())
                .setBudgetPolicy(g.policy()).setWindowStartMillis(g.windowStart())
                .setLinking(linking != null).setPersonEpsilonBudget(linking == null ? null : g.epsilonBudget())
                .build();
    }

    /** The same policy fields for an answer record (its track has no window start: the record's capture time serves). */
    private static AnswerTrack answerTrack(TrackRelease t) {
        return AnswerTrack.newBuilder().setReleaseIndex(t.getReleaseIndex())
                .setEpsilonSpentInWindow(t.getEpsilonSpentInWindow()).setEpsilonBudget(t.getEpsilonBudget())
                .setBudgetPolicy(t.getBudgetPolicy()).setLinking(Boolean.TRUE.equals(t.getLinking()))
                .setPersonEpsilonBudget(t.getPersonEpsilonBudget()).build();
    }

    /**
     * The camera's section of the status topic's report: what the face topics show anyway (releases and
     * the ε they state, the spool's losses) and the policy, and, noised and counted per person (per track
     * where linking is off) at most once a day, the persons seen and held ({@link StatusCounts}).
     */
    public Map<String, Object> report() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("releases", counts.releases.get());
        m.put("droppedBySpool", counts.spoolDropped.get());
        // The released records' stated ε: a grant the person ledger then refused is not in it.
        m.put("epsilonSpent", counts.releasedEpsilon());
        if (budget != null) {
            m.put("budgetPolicy", budget.stats().policy());
        }
        m.put("noised", gate.counts().section(Instant.now()));
        return m;
    }

    /** This camera's noised counts, for the gateway's total. */
    public StatusCounts counts() {
        return gate.counts();
    }

    /** The exact counts, for the gateway's authenticated REST status only. */
    public Map<String, Object> localReport() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("facesDetected", counts.faces.get());
        m.put("withheld", counts.withheld.get());
        m.put("withheldUntracked", counts.untracked.get());
        m.put("withheldHeldByPerson", counts.heldByPerson.get());
        m.put("framesProcessed", counts.frames.get());
        m.put("liveTracks", tracks.size());
        m.put("counted", gate.counts().exact());
        return m;
    }
}
