package org.privface.benchmarks;

import static org.privface.benchmarks.EdgeBenchmark.CAMERA;
import static org.privface.benchmarks.EdgeBenchmark.SITE;
import static org.privface.benchmarks.EdgePasses.detectorInput;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import org.opencv.core.Mat;
import org.privface.agent.AgentSettings;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.publish.DiskSpool;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.publish.SpoolEntry;
import org.privface.agent.publish.Uplink;
import org.privface.agent.track.BudgetPolicy;
import org.privface.agent.track.Box;
import org.privface.agent.track.IouTracker;
import org.privface.agent.track.TrackBudget;
import org.privface.benchmarks.EdgePasses.Config;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.policy.SitePolicy;
import org.privface.privacy.FaceMechanism;
import org.privface.privacy.PeepMechanism;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.privacy.Release;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.TrackRelease;
import org.privface.wire.topics.Topics;

/**
 * CameraWorker.accept for one camera under one policy version: grey, detect, track, budget,
 * crop, perturb, record, spool (directly, or through the uplink when there is one). With an
 * embedder, each released face is also aligned and embedded, as the EMBEDDING input step does
 * once a release is granted; when the agent's default policy is EMBEDDING (the shipped default),
 * that vector is what is released, by the same preset the agent builds (Mechanisms), instead of
 * PEEP on the crop.
 */
final class EdgePipeline {
    private final FaceFinder detector;
    private final FaceEmbedder embedder;
    private final PeepMechanism mechanism;
    /** The default policy's EMBEDDING release, with an embedder; null otherwise (PEEP on the crop). */
    private final FaceMechanism embeddingRelease;
    private final FacePublisher publisher;
    private final DiskSpool spool;
    private final Uplink uplink;
    private final IouTracker tracker = new IouTracker();
    private final TrackBudget budget;
    private final String topic = Topics.query(SITE);
    private long frames;
    private long faces;
    private long unfit;
    private long released;
    private long withheld;
    private long untracked;
    private long dropped;

    private long embedded;

    EdgePipeline(Config c, PeepMechanism mechanism, BudgetPolicy policy, AgentSettings s,
             FacePublisher publisher, DiskSpool spool, Uplink uplink) {
        this.detector = c.factory().get();
        this.embedder = c.embedder() == null ? null : c.embedder().get();
        this.mechanism = mechanism;
        this.publisher = publisher;
        this.spool = spool;
        this.uplink = uplink;
        this.budget = new TrackBudget(policy, s.getEpsilon(), s.getWindow());
        SitePolicy shipped = s.defaultPolicy();
        // As Mechanisms builds it. The release's cost does not depend on ε, so the preset is the shipped ε's.
        this.embeddingRelease = embedder == null || shipped.mechanism() != Mechanism.EMBEDDING ? null
                : EmbeddingMechanism.publicPreset(s.getEmbedder().getNetwork(), EmbeddingMechanism.Noise.parse(shipped.mode()),
                        shipped.epsilon());
    }

    void accept(Mat image, long sequence, Instant capturedAt) {
        frames++;
        Mat grey = FaceCrops.grey(image);
        try {
            List<DetectedFace> found = detector.detect(detectorInput(detector, image, grey));
            List<Box> b = new ArrayList<>(found.size());
            for (DetectedFace f : found) {
                b.add(new Box(f.box().x, f.box().y, f.box().width, f.box().height));
            }
            List<IouTracker.Tracked> tracked = tracker.update(b, sequence, capturedAt);
            for (int i = 0; i < found.size(); i++) {
                IouTracker.Tracked t = tracked.get(i);
                Optional<double[]> face = FaceCrops.crop(grey, found.get(i).box(), FaceCrops.Shape.PEEP);
                if (face.isEmpty()) {
                    unfit++;
                    continue;
                }
                faces++;
                if (t.untracked()) { // the tracker is full, as CameraWorker withholds it
                    withheld++;
                    untracked++;
                    continue;
                }
                Optional<TrackBudget.Grant> grant = budget.request(t.trackId(), t.framesSeen(), capturedAt);
                if (grant.isEmpty()) {
                    withheld++;
                    continue;
                }
                TrackBudget.Grant g = grant.get();
                double[] vector = null;
                if (embedder != null) {
                    vector = embedder.embed(image, found.get(i));
                    embedded++;
                }
                Release rel = embeddingRelease != null ? embeddingRelease.perturb(vector) : mechanism.perturb(face.get());
                PerturbedFace rec = new org.privface.agent.publish.PerturbedRecords(SITE).of(rel, CAMERA, t.trackId(), capturedAt, null,
                        TrackRelease.newBuilder().setReleaseIndex(g.releaseIndex())
                                .setEpsilonSpentInWindow(g.epsilonSpentInWindow()).setEpsilonBudget(g.epsilonBudget())
                                .setBudgetPolicy(g.policy()).setWindowStartMillis(g.windowStart()).build());
                boolean stored = uplink != null ? uplink.submit(rec)
                        // What Uplink.submit does, without waking a sender.
                        : spool.append(new SpoolEntry(topic, CAMERA, FaceRecords.encode(rec), rec.getEventId(),
                                capturedAt.toEpochMilli()));
                if (!stored) {
                    dropped++;
                }
                released++;
            }
        } finally {
            if (grey != image) {
                grey.release();
            }
        }
        for (String id : tracker.ended()) {
            budget.forget(id);
        }
    }

    PipelineCounts counts() {
        return new PipelineCounts(frames, faces, unfit, released, withheld, untracked, dropped);
    }

    long embedded() {
        return embedded;
    }

    record PipelineCounts(long frames, long faces, long unfit, long released, long withheld, long untracked, long spoolDropped) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%d frames, %d faces cropped, %d boxes too near the edge to crop, %d released,"
                    + " %d withheld (%d of them because the tracker was full), %d dropped by the spool", frames, faces, unfit, released,
                    withheld, untracked, spoolDropped);
        }
    }
}
