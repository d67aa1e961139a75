package org.privface.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micronaut.context.ApplicationContext;
import io.micronaut.serde.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.agent.capture.Frame;
import org.privface.agent.capture.FrameSource;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceDetector;
import org.privface.agent.enroll.EnrollmentLedger;
import org.privface.agent.policy.AuditLog;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.policy.PolicyOverride;
import org.privface.agent.policy.PolicyStore;
import org.privface.agent.policy.PrivacyFloor;
import org.privface.agent.policy.SitePolicy;
import org.privface.agent.publish.DiskSpool;
import org.privface.agent.publish.DropPolicy;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.publish.Uplink;
import org.privface.kafka.testkit.RealKafka;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.PerturbedFace;
import org.privface.agent.release.Mechanisms;

/**
 * Two people walk past the camera in walkby.avi (test-data/synthetic/walkby.csv: person-a in
 * frames 2-19, person-b after). Each appearance must be one track, and the budget policy must
 * bound what each track spends, whatever the number of frames it is seen in.
 */
class CameraWorkerTest {

    record Run(int faces, Map<String, List<PerturbedFace>> byTrack) {
    }

    Run run(String budget, double epsilon, Path dir) throws Exception {
        return run(Mechanism.PEEP, "l1-clip", budget, epsilon, dir);
    }

    Run run(Mechanism mechanism, String mode, String budget, double epsilon, Path dir) throws Exception {
        AgentSettings s = new AgentSettings();
        s.setSiteId("workertest");
        s.setEnrollFolder(AgentPipelineTest.synthetic().resolve("enroll"));
        s.setComponents(8);
        s.setDataDir(dir);
        SitePolicy policy = new SitePolicy(mechanism, mode, epsilon, budget, Duration.ofMinutes(10), false);
        try (ApplicationContext ctx = ApplicationContext.run(Map.of("kafka.health.enabled", "false"))) {
            PolicyStore store = new PolicyStore("workertest", policy, new PrivacyFloor(0.1, 100), Map.of(),
                    new AuditLog(dir.resolve("audit.jsonl"), ctx.getBean(ObjectMapper.class)));
            FaceDetector detector = new FaceDetector(s.getCascade(), s.getScaleFactor(), s.getMinNeighbors(), s.getMinFaceSize());
            Mechanisms mechanisms = new Mechanisms(s, detector,
                    EnrollmentLedger.open(dir.resolve(AgentPipeline.ENROLLMENT_LEDGER), 1000));
            SpoolingPublisher out = new SpoolingPublisher(dir);
            CameraWorker w = new CameraWorker("walkby", false, detector, store, mechanisms, out.publisher, out.uplink,
                    new OriginLog(null), new SimpleMeterRegistry(), new SimpleMeterRegistry(), null);
            try (FrameSource src = FrameSource.open(AgentPipelineTest.synthetic().resolve("walkby.avi").toString())) {
                Optional<Frame> f;
                while ((f = src.next()).isPresent()) {
                    try (Frame frame = f.get()) {
                        w.accept(frame);
                    }
                }
            }
            Map<String, List<PerturbedFace>> byTrack = new HashMap<>();
            for (DiskSpool.Spooled e : out.spool.peek(10_000)) {
                PerturbedFace face = FaceRecords.decodeFace(e.entry().value());
                byTrack.computeIfAbsent(face.getTrackId(), k -> new java.util.ArrayList<>()).add(face);
            }
            out.close();
            return new Run((int) w.faces.get(), byTrack);
        }
    }

    /** A publisher and an uplink whose broker never answers, so every record stays on the spool to be read back. */
    static final class SpoolingPublisher implements AutoCloseable {
        final FacePublisher publisher;
        final DiskSpool spool;
        final Uplink uplink;

        SpoolingPublisher(Path dir) throws Exception {
            Properties p = new Properties();
            p.put("max.block.ms", "100");
            publisher = new FacePublisher("127.0.0.1:1", "workertest", p);
            spool = DiskSpool.open(dir.resolve("spool"), 64L << 20, DropPolicy.DROP_NEWEST);
            uplink = new Uplink(publisher, spool, new SimpleMeterRegistry(), "workertest");
        }

        @Override
        public void close() throws Exception {
            uplink.close();
            spool.close();
            publisher.close();
        }
    }

    @Test
    void anEmbeddingPolicyOnACascadeWithoutLandmarksWithholdsEveryFace(@TempDir Path dir) throws Exception {
        Run r = run(Mechanism.EMBEDDING, PolicyOverride.defaultMode(Mechanism.EMBEDDING), "once", 8, dir);
        assertTrue(r.faces() >= 20, "the cascade still sees the walkers: " + r.faces());
        assertTrue(r.byTrack().isEmpty(), "nothing released without landmarks to align by: " + r.byTrack().keySet());
    }

    @Test
    void oncePerTrackReleasesEachAppearanceOnce(@TempDir Path dir) throws Exception {
        Run r = run("once", 8, dir);
        assertTrue(r.faces() >= 20, "the cascade sees the walkers in most frames: " + r.faces());
        // person-b enters exactly where person-a left, one frame later: geometry alone cannot tell
        // them apart, so the IoU tracker may join them into one track. That errs on the side of
        // fewer releases; a split track (missed detections) would give at most a few more.
        assertTrue(r.byTrack().size() >= 1 && r.byTrack().size() <= 4, "tracks: " + r.byTrack().keySet());
        assertTrue(r.byTrack().size() < r.faces() / 4, "far fewer tracks than detections");
        for (List<PerturbedFace> releases : r.byTrack().values()) {
            assertEquals(1, releases.size());
            assertEquals(8.0, releases.get(0).getMechanism().getEpsilonPerFace());
        }
    }

    @Test
    void maxKSplitsTheTrackBudget(@TempDir Path dir) throws Exception {
        Run r = run("max-k:k=3,every=2", 6, dir);
        int total = 0;
        for (List<PerturbedFace> releases : r.byTrack().values()) {
            assertTrue(releases.size() <= 3);
            double spent = 0;
            for (PerturbedFace f : releases) {
                spent += f.getMechanism().getEpsilonPerFace();
                assertEquals(2.0, f.getMechanism().getEpsilonPerFace(), 1e-12);
                assertEquals(6.0, f.getTrack().getEpsilonBudget());
                assertEquals(spent, f.getTrack().getEpsilonSpentInWindow(), 1e-9, "each record states the track's spend so far");
            }
            assertTrue(spent <= 6.0 + 1e-9);
            total += releases.size();
        }
        assertTrue(total < r.faces(), "most detections of a tracked person are withheld: " + total + " of " + r.faces());
        assertTrue(Files.exists(dir.resolve("audit.jsonl")));
    }

    @Test
    void gaussianTracksStateMuAndComposeInQuadrature(@TempDir Path dir) throws Exception {
        Run r = run(Mechanism.GAUSSIAN, "gdp", "max-k:k=4,every=2", 8, dir);
        assertTrue(!r.byTrack().isEmpty());
        for (List<PerturbedFace> releases : r.byTrack().values()) {
            double muSquares = 0;
            for (PerturbedFace f : releases) {
                assertEquals("GAUSSIAN", f.getMechanism().getName());
                assertEquals(1e-5, f.getMechanism().getDelta());
                muSquares += f.getMechanism().getMu() * f.getMechanism().getMu();
                assertTrue(f.getTrack().getEpsilonSpentInWindow() <= 8.0 + 1e-9);
                assertTrue(f.getMechanism().getEpsilonPerFace() > 8.0 / 4, "each release gets more than a quarter");
            }
            double muTrack = org.privface.privacy.gdp.MuGdp.muFor(8, 1e-5);
            assertTrue(Math.sqrt(muSquares) <= muTrack * (1 + 1e-9), "sqrt(sum mu^2) within the track's mu");
        }
    }

    /**
     * FISHER picks its basis by ε band. With a budget that splits the track's ε, enrollment (at the
     * track's ε) and queries (at the per-release ε) must still share one basis, or no query is ever
     * answered: ε 40 per track with max-k:k=2 releases at 20, another band (k = 3, not 4).
     */
    @Test
    void fisherEnrollmentAndQueriesShareOneBasisWhenTheBudgetSplitsEpsilon(@TempDir Path dir) throws Exception {
        AgentSettings s = new AgentSettings();
        s.setSiteId("workertest");
        s.setEnrollFolder(AgentPipelineTest.synthetic().resolve("enroll"));
        s.setDataDir(dir);
        FaceDetector detector = new FaceDetector(s.getCascade(), s.getScaleFactor(), s.getMinNeighbors(), s.getMinFaceSize());
        Mechanisms mechanisms = new Mechanisms(s, detector, null);
        SitePolicy policy = new SitePolicy(Mechanism.FISHER, "l1-clip", 40, "max-k:k=2,every=1", Duration.ofMinutes(10), false);
        double perRelease = policy.budgetPolicy().epsilonPerRelease(policy.epsilon());
        assertEquals(20, perRelease, 1e-12);
        double[] face = new double[FaceCrops.Shape.PEEP.width() * FaceCrops.Shape.PEEP.height()];
        java.util.Arrays.fill(face, 0.5);
        String enrollBasis = mechanisms.forRelease(policy, policy.epsilon()).perturb(face).basisId();
        String queryBasis = mechanisms.forRelease(policy, perRelease).perturb(face).basisId();
        assertEquals(enrollBasis, queryBasis);
        assertTrue(enrollBasis.endsWith(Mechanisms.QUERY_FACES_ONLY), "FISHER is fitted on the enrolled identities: " + enrollBasis);
    }
}
