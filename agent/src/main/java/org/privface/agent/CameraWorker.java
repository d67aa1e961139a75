package org.privface.agent;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import org.opencv.core.Mat;
import org.privface.agent.capture.Frame;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.LabelledFace;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.link.GatewayLinking;
import org.privface.agent.link.ReleaseGate;
import org.privface.agent.policy.PolicyStore;
import org.privface.agent.policy.SitePolicy;
import org.privface.privacy.FaceMechanism;
import org.privface.privacy.Release;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.publish.Uplink;
import org.privface.agent.track.Box;
import org.privface.agent.track.IouTracker;
import org.privface.agent.track.TrackBudget;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.TrackRelease;

/**
 * One camera's frames: detect, track, link the track to a person (where the gateway links
 * appearances), ask the person's and the track's budget, take the mechanism's input (pixel
 * crop or embedding, {@link FaceInput}), perturb, spool. Runs on the camera's own thread, so its
 * detector, embedder and tracker need no locking.
 *
 * <p>A policy change applies to tracks that start after it. Tracks already under way release
 * nothing more, so no change, remote or local, can raise what an appearance in progress spends.
 */
final class CameraWorker {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(CameraWorker.class);
    private final String camera;
    private final boolean independentFrames;
    private final FaceFinder detector;
    private FaceEmbedder embedder;
    /** This camera's embedder of the linking network, where linking does not reuse the release's. */
    private FaceEmbedder linkEmbedder;
    private final PolicyStore policies;
    private final Mechanisms mechanisms;
    private final FacePublisher publisher;
    private final Uplink uplink;
    private final OriginLog origins;
    /** The gateway's appearance linking; null where off, and then the budget scope is the track. */
    private final GatewayLinking linking;
    private final IouTracker tracker = new IouTracker();
    /** The person's and the track's budget asked in order, and the id each release goes out under. */
    private final ReleaseGate gate;
    /** Releases of each live track, for the releases-per-track summary. */
    private final Map<String, long[]> tracks = new HashMap<>();
    private TrackBudget budget;
    private SitePolicy policy;
    private long budgetVersion = -1;
    /** The policy needs landmarks this camera's detector does not give. */
    private boolean inputless;
    /** The site's answer release; null where query faces release vectors only. */
    private org.privface.agent.answer.AnswerMode answers;

    final AtomicLong frames = new AtomicLong();
    final AtomicLong faces = new AtomicLong();
    final AtomicLong releases = new AtomicLong();
    final AtomicLong withheld = new AtomicLong();
    /** Faces withheld because the tracker was full (a subset of {@link #withheld}). */
    final AtomicLong untracked = new AtomicLong();
    /** Faces withheld because their person had no room: the segment releases nothing more. */
    final AtomicLong heldByPerson = new AtomicLong();
    final AtomicLong spoolDropped = new AtomicLong();
    /** Sum of the stated ε of the releases (records and answers): what the face topics show, not the grants. */
    private final java.util.concurrent.atomic.DoubleAdder releasedEpsilon = new java.util.concurrent.atomic.DoubleAdder();
    private final Counter framesCounter;
    private final Counter facesCounter;
    private final Counter releasesCounter;
    private final Counter withheldCounter;
    private final DistributionSummary epsilonPerRelease;
    private final DistributionSummary releasesPerTrack;
    private final Counter epsilonSpent;
    /**
     * @param metrics      what a scraper of /prometheus reads: only what the face topics show anyway (releases
     *                     and their ε)
     * @param exactMetrics the exact face counts (faces, withheld, frames processed, releases per track): served
     *                     only behind the control token ({@code /control/metrics})
     */
    CameraWorker(String camera, boolean independentFrames, FaceFinder detector, PolicyStore policies,
                 Mechanisms mechanisms, FacePublisher publisher, Uplink uplink, OriginLog origins, MeterRegistry metrics,
                 MeterRegistry exactMetrics, GatewayLinking linking) {
        this.linking = linking;
        this.gate = new ReleaseGate(linking);
        this.camera = camera;
        this.independentFrames = independentFrames;
        this.detector = detector;
        this.policies = policies;
        this.mechanisms = mechanisms;
        this.publisher = publisher;
        this.uplink = uplink;
        this.origins = origins;
        String site = policies.site();
        // Processed frames depend on the faces in view (each costs detection and embedding time): exact only.
        framesCounter = Counter.builder("privface.agent.frames.processed").tag("site", site).tag("camera", camera)
                .description("frames the pipeline processed").register(exactMetrics);
        facesCounter = Counter.builder("privface.agent.faces.detected").tag("site", site).tag("camera", camera)
                .register(exactMetrics);
        releasesCounter = Counter.builder("privface.agent.releases").tag("site", site).tag("camera", camera)
                .description("perturbed faces released (spooled for the broker)").register(metrics);
        withheldCounter = Counter.builder("privface.agent.releases.withheld").tag("site", site).tag("camera", camera)
                .description("faces not released: their track's or person's budget was spent, or the tracker was full")
                .register(exactMetrics);
        epsilonPerRelease = DistributionSummary.builder("privface.agent.epsilon.per.face").tag("site", site)
                .tag("camera", camera).description("epsilon each released face spent").register(metrics);
        releasesPerTrack = DistributionSummary.builder("privface.agent.releases.per.track").tag("site", site)
                .tag("camera", camera).description("releases of each ended track").register(exactMetrics);
        epsilonSpent = Counter.builder("privface.agent.epsilon.spent").tag("site", site).tag("camera", camera)
                .description("sum of epsilon over all releases").register(metrics);
    }

    /** Query faces answer by randomized response against the site's gallery (docs/wire.md, "Answers instead of vectors"). */
    void answers(org.privface.agent.answer.AnswerMode mode) {
        this.answers = mode;
    }

    private AnswerPlan plan;
    private long planBudgetVersion = Long.MIN_VALUE;
    private org.privface.privacy.answer.Gallery planGallery;

    /** The answer plan of the current policy and gallery, worked out once per change of either. */
    private AnswerPlan answerPlan(org.privface.privacy.answer.Gallery g) {
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

    void accept(Frame frame) {
        frames.incrementAndGet();
        framesCounter.increment();
        PolicyStore.Versioned v = policies.current();
        if (v.version() != budgetVersion) {
            // Merging the camera's overrides validates a whole policy: done once per change, not per frame.
            policy = policies.forCamera(camera, v.policy());
            budget = mechanisms.chargedBudget(policy);
            budgetVersion = v.version();
            inputless = FaceInput.needsEmbedding(policy) && !detector.landmarks();
            if (inputless) {
                LOG.error("camera {}: the {} mechanism needs a detector with landmarks, not {}; its faces are withheld",
                        camera, policy.mechanism(), detector.describe());
            }
        }
        // Deep detectors and the embedding read colour; the cascade and the pixel crops read grey.
        boolean pixels = !FaceInput.needsEmbedding(policy);
        Mat grey = pixels || !detector.readsColour() ? FaceCrops.grey(frame.image()) : null;
        try {
            List<DetectedFace> found = detector.detect(detector.readsColour() ? frame.image() : grey);
            List<IouTracker.Tracked> tracked = track(found, frame);
            int labelled = LabelledFace.index(found.stream().map(DetectedFace::box).toList(), frame.image().cols(),
                    frame.image().rows());
            for (int i = 0; i < found.size(); i++) {
                IouTracker.Tracked t = tracked.get(i);
                if (inputless) {
                    faces.incrementAndGet();
                    facesCounter.increment();
                    withheld.incrementAndGet();
                    withheldCounter.increment();
                    continue;
                }
                Supplier<double[]> embedding = FaceInput.embedding(frame.image(), found.get(i), this::embedder);
                Optional<Supplier<double[]>> face = FaceInput.of(policy, grey, found.get(i), embedding);
                if (face.isEmpty()) {
                    continue; // does not fit in the frame: dropped, never published as garbage
                }
                faces.incrementAndGet();
                facesCounter.increment();
                if (t.untracked()) {
                    // The tracker is full: a fresh track here could be a face already released, so none is made.
                    withheld.incrementAndGet();
                    withheldCounter.increment();
                    untracked.incrementAndGet();
                    continue;
                }
                Optional<org.privface.privacy.answer.Gallery> gallery = answers == null ? Optional.empty() : answers.gallery();
                if (answers != null && !answers.vectors() && gallery.isEmpty()) {
                    // Answer-only with no valid gallery: nothing to answer with, and no vector may go out.
                    answers.withheldForNoGallery();
                    withheld.incrementAndGet();
                    withheldCounter.increment();
                    continue;
                }
                AnswerPlan plan = null;
                if (answers != null && gallery.isPresent()) {
                    plan = answerPlan(gallery.get());
                    if (!plan.ok()) {
                        // Refused before the grant: a face that cannot be answered is not charged.
                        answers.withheldForPlan(plan.refusal());
                        withheld.incrementAndGet();
                        withheldCounter.increment();
                        continue;
                    }
                }
                long[] state = tracks.computeIfAbsent(t.trackId(), id -> new long[] {0});
                // The person is linked before any grant, and must have room before the track asks.
                Optional<GatewayLinking.Segment> segment = linking == null ? Optional.empty() : linking.personOf(camera,
                        t.trackId(), frame.image(), found.get(i), linking.network() == null ? embedding
                                : FaceInput.embedding(frame.image(), found.get(i), this::linkEmbedder), frame.capturedAt());
                ReleaseGate.Decision d = gate.decide(t.trackId(), t.framesSeen(), segment, budget, budgetVersion,
                        frame.capturedAtOrNow());
                if (!d.granted()) {
                    if (d.outcome() == ReleaseGate.Outcome.HELD_BY_PERSON) {
                        heldByPerson.incrementAndGet();
                    }
                    withheld.incrementAndGet();
                    withheldCounter.increment();
                    continue;
                }
                // A split's later segment goes out under its own fresh id (ReleaseGate).
                String trackId = d.publishedTrackId();
                TrackBudget.Grant g = d.grant();
                // With both forms, the vector asks half the charge and the answer spends the rest (AnswerPlan).
                boolean answering = plan != null;
                boolean both = answering && answers.vectors();
                FaceMechanism m = answering ? plan.mechanism()
                        : mechanisms.forRelease(policy, g.epsilonForThisRelease(), g.muForThisRelease());
                if (answering) {
                    // The answer spends at most what the ledgers charged for this grant (less the vector's
                    // stated ε where both go out), and its record states what it spent: that is counted.
                    Optional<org.privface.wire.avro.FaceAnswer> sent = answers.answer(gallery.get(), plan.mechanism(),
                            embedding.get(), plan.answerEpsilon(), camera, trackId, frame.capturedAt(),
                            answerTrack(trackSection(g)));
                    if (sent.isPresent()) {
                        double stated = sent.get().getMechanism().getEpsilonPerFace();
                        // Like a vector's: which image and face the answer came from, for offline scoring.
                        origins.write(sent.get().getEventId(), frame.origin(), i == labelled);
                        releases.incrementAndGet();
                        releasesCounter.increment();
                        epsilonPerRelease.record(stated);
                        epsilonSpent.increment(stated);
                        releasedEpsilon.add(stated);
                    }
                    if (!both) {
                        state[0]++;
                        continue;
                    }
                }
                Release rel = m.perturb(face.get().get());
                PerturbedFace rec = publisher.record(rel, camera, trackId, frame.capturedAt(), null, trackSection(g));
                origins.write(rec.getEventId(), frame.origin(), i == labelled);
                if (!uplink.submit(rec)) {
                    spoolDropped.incrementAndGet();
                }
                state[0]++;
                releases.incrementAndGet();
                releasesCounter.increment();
                epsilonPerRelease.record(rel.epsilonPerFace());
                epsilonSpent.increment(rel.epsilonPerFace());
                releasedEpsilon.add(rel.epsilonPerFace());
            }
        } finally {
            if (grey != null && grey != frame.image()) {
                grey.release();
            }
        }
        List<String> ended = independentFrames ? new ArrayList<>(tracks.keySet()) : tracker.ended();
        for (String id : ended) {
            long[] state = tracks.remove(id);
            if (state != null) {
                releasesPerTrack.record(state[0]);
            }
            gate.ended(camera, id, frame.capturedAtOrNow()).forEach(budget::forget);
        }
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
    private static org.privface.wire.avro.AnswerTrack answerTrack(TrackRelease t) {
        return org.privface.wire.avro.AnswerTrack.newBuilder().setReleaseIndex(t.getReleaseIndex())
                .setEpsilonSpentInWindow(t.getEpsilonSpentInWindow()).setEpsilonBudget(t.getEpsilonBudget())
                .setBudgetPolicy(t.getBudgetPolicy()).setLinking(Boolean.TRUE.equals(t.getLinking()))
                .setPersonEpsilonBudget(t.getPersonEpsilonBudget()).build();
    }

    /** This camera's embedder, made on the first face an EMBEDDING policy releases. */
    private FaceEmbedder embedder() {
        if (embedder == null) {
            embedder = mechanisms.newEmbedder();
        }
        return embedder;
    }

    /** This camera's embedder for linking, made on the first face linking needs. */
    private FaceEmbedder linkEmbedder() {
        if (linkEmbedder == null) {
            linkEmbedder = org.privface.agent.embed.FaceEmbedders.create(linking.network());
        }
        return linkEmbedder;
    }

    private List<IouTracker.Tracked> track(List<DetectedFace> faces, Frame frame) {
        List<Box> b = new ArrayList<>(faces.size());
        for (DetectedFace f : faces) {
            b.add(new Box(f.box().x, f.box().y, f.box().width, f.box().height));
        }
        if (independentFrames) {
            // Unrelated stills (an image folder): every face is its own appearance.
            List<IouTracker.Tracked> out = new ArrayList<>(b.size());
            for (Box box : b) {
                out.add(new IouTracker.Tracked("trk-" + UUID.randomUUID(), box, true, 1));
            }
            return out;
        }
        return tracker.update(b, frame.sequence(), frame.capturedAtOrNow());
    }

    /**
     * The camera's section of the status topic's report: what the face topics show anyway (releases and
     * the ε they state, the spool's losses) and the policy, and, noised and counted per person (per track
     * where linking is off) at most once a day, the persons seen and held ({@link org.privface.privacy.StatusCounts}). No
     * frame or face count: frames processed depend on the faces in view (the pipeline's report adds the
     * frames read, which for a live camera depend on the camera alone).
     */
    Map<String, Object> report() {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("releases", releases.get());
        m.put("droppedBySpool", spoolDropped.get());
        // The released records' stated ε: a grant the person ledger then refused is not in it.
        m.put("epsilonSpent", releasedEpsilon.sum());
        if (budget != null) {
            m.put("budgetPolicy", budget.stats().policy());
        }
        m.put("noised", gate.counts().section(Instant.now()));
        return m;
    }

    /** This camera's noised counts, for the gateway's total. */
    org.privface.privacy.StatusCounts counts() {
        return gate.counts();
    }

    /** The exact counts, for the gateway's authenticated REST status only. */
    Map<String, Object> localReport() {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("facesDetected", faces.get());
        m.put("withheld", withheld.get());
        m.put("withheldUntracked", untracked.get());
        m.put("withheldHeldByPerson", heldByPerson.get());
        m.put("framesProcessed", frames.get());
        m.put("liveTracks", tracks.size());
        m.put("counted", gate.counts().exact());
        return m;
    }
}
