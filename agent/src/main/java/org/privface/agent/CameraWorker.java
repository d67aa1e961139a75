package org.privface.agent;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import io.micrometer.core.instrument.MeterRegistry;
import org.opencv.core.Mat;
import org.privface.agent.answer.QueryAnswerer;
import org.privface.agent.capture.Frame;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.detect.LabelledFace;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.embed.FaceEmbedders;
import org.privface.agent.link.GatewayLinking;
import org.privface.agent.policy.PolicyStore;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.publish.PerturbedRecords;
import org.privface.agent.publish.Uplink;
import org.privface.agent.release.FaceInput;
import org.privface.agent.release.Mechanisms;
import org.privface.agent.release.ReleaseCounts;
import org.privface.agent.release.ReleaseDesk;
import org.privface.agent.track.Box;
import org.privface.agent.track.IouTracker;
import org.privface.privacy.StatusCounts;

/**
 * One camera's frames: detect, track, take the mechanism's input (pixel crop or embedding,
 * {@link FaceInput}) and hand each face to the camera's {@link ReleaseDesk}, which links it to a
 * person (where the gateway links appearances), asks the person's and the track's budget,
 * perturbs and spools. Runs on the camera's own thread, so its detector, embedder and tracker need
 * no locking.
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
    private final OriginLog origins;
    /** The gateway's appearance linking; null where off, and then the budget scope is the track. */
    private final GatewayLinking linking;
    private final IouTracker tracker = new IouTracker();
    private final ReleaseCounts counts;
    private final ReleaseDesk desk;
    /** The policy needs landmarks this camera's detector does not give. */
    private boolean inputless;

    final AtomicLong faces;
    final AtomicLong releases;

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
        this.camera = camera;
        this.independentFrames = independentFrames;
        this.detector = detector;
        this.policies = policies;
        this.mechanisms = mechanisms;
        this.origins = origins;
        this.counts = new ReleaseCounts(policies.site(), camera, metrics, exactMetrics);
        this.desk = new ReleaseDesk(camera, mechanisms, new PerturbedRecords(publisher.site()), uplink, linking, counts);
        this.faces = counts.faces;
        this.releases = counts.releases;
    }

    /** Query faces answer by randomized response against the site's gallery (docs/wire.md, "Answers instead of vectors"). */
    void answers(QueryAnswerer answerer) {
        desk.answers(answerer);
    }

    synchronized void accept(Frame frame) {
        counts.frame();
        followPolicy();
        // Deep detectors and the embedding read colour; the cascade and the pixel crops read grey.
        boolean pixels = !FaceInput.needsEmbedding(desk.policy());
        Mat grey = pixels || !detector.readsColour() ? FaceCrops.grey(frame.image()) : null;
        try {
            List<DetectedFace> found = detector.detect(detector.readsColour() ? frame.image() : grey);
            List<IouTracker.Tracked> tracked = track(found, frame);
            int labelled = LabelledFace.index(found.stream().map(DetectedFace::box).toList(), frame.image().cols(),
                    frame.image().rows());
            for (int i = 0; i < found.size(); i++) {
                offer(frame, grey, found.get(i), tracked.get(i), i == labelled);
            }
        } finally {
            if (grey != null && grey != frame.image()) {
                grey.release();
            }
        }
        desk.ended(independentFrames ? desk.liveTracks() : tracker.ended(), frame.capturedAtOrNow());
    }

    /**
     * Ends every live track, as at the end of a stream or at stop: answers they hold go out. Only
     * once no frame runs on this camera.
     */
    synchronized void finish() {
        desk.ended(desk.liveTracks(), java.time.Instant.now());
    }

    /** Takes up a new policy version: merging the camera's overrides validates a whole policy, once per change. */
    private void followPolicy() {
        PolicyStore.Versioned v = policies.current();
        if (v.version() != desk.policyVersion()) {
            desk.policy(policies.forCamera(camera, v.policy()), v.version());
            inputless = FaceInput.needsEmbedding(desk.policy()) && !detector.landmarks();
            if (inputless) {
                LOG.error("camera {}: the {} mechanism needs a detector with landmarks, not {}; its faces are withheld",
                        camera, desk.policy().mechanism(), detector.describe());
            }
        }
    }

    /** One detected face: counted, then offered to the desk where it gives an input and its track counts. */
    private void offer(Frame frame, Mat grey, DetectedFace face, IouTracker.Tracked t, boolean labelled) {
        if (inputless) {
            counts.face();
            counts.withheld();
            return;
        }
        Supplier<double[]> embedding = FaceInput.embedding(frame.image(), face, this::embedder);
        Optional<Supplier<double[]>> input = FaceInput.of(desk.policy(), grey, face, embedding);
        if (input.isEmpty()) {
            return; // does not fit in the frame: dropped, never published as garbage
        }
        counts.face();
        if (t.untracked()) {
            // The tracker is full: a fresh track here could be a face already released, so none is made.
            counts.untracked();
            return;
        }
        Supplier<double[]> linkInput = linking == null || linking.network() == null ? embedding
                : FaceInput.embedding(frame.image(), face, this::linkEmbedder);
        desk.offer(new ReleaseDesk.Offer(t.trackId(), t.framesSeen(), frame.image(), face, input.get(), embedding,
                linkInput, frame.capturedAt(), frame.capturedAtOrNow(), id -> origins.write(id, frame.origin(), labelled)));
    }

    /** The gateway's shared models (issue 44); null: this camera builds its own. */
    private org.privface.agent.infer.SharedModels shared;

    void shared(org.privface.agent.infer.SharedModels models) {
        this.shared = models;
    }

    /** This camera's embedder, made on the first face an EMBEDDING policy releases. */
    private FaceEmbedder embedder() {
        if (embedder == null) {
            embedder = shared == null ? mechanisms.newEmbedder() : shared.embedder("release", camera, mechanisms::newEmbedder);
        }
        return embedder;
    }

    /** This camera's embedder for linking, made on the first face linking needs. */
    private FaceEmbedder linkEmbedder() {
        if (linkEmbedder == null) {
            linkEmbedder = shared == null ? FaceEmbedders.create(linking.network())
                    : shared.embedder("link:" + linking.network(), camera,
                            () -> FaceEmbedders.create(linking.network()));
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

    /** The camera's section of the status topic's report ({@link ReleaseDesk#report}). */
    Map<String, Object> report() {
        return desk.report();
    }

    /** This camera's noised counts, for the gateway's total. */
    StatusCounts counts() {
        return desk.counts();
    }

    /** The exact counts, for the gateway's authenticated REST status only. */
    Map<String, Object> localReport() {
        return desk.localReport();
    }
}
