package org.privface.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.micronaut.context.ApplicationContext;
import io.micronaut.serde.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.agent.detect.FaceDetector;
import org.privface.agent.enroll.EnrollmentLedger;
import org.privface.agent.policy.AuditLog;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.policy.PolicyOverride;
import org.privface.agent.policy.PolicyStore;
import org.privface.agent.policy.PrivacyFloor;
import org.privface.agent.policy.SitePolicy;
import org.privface.agent.publish.DiskSpool;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;

/**
 * The enrollment folder (test-data/synthetic/enroll) published through the enrollment ledger, to
 * a spool whose broker never answers, so every record can be read back.
 */
class EnrollmentTest {
    static ApplicationContext ctx;
    static FaceDetector detector;

    @BeforeAll
    static void start() {
        ctx = ApplicationContext.run(Map.of("kafka.health.enabled", "false"));
        AgentSettings s = new AgentSettings();
        detector = new FaceDetector(s.getCascade(), s.getScaleFactor(), s.getMinNeighbors(), s.getMinFaceSize());
    }

    @AfterAll
    static void stop() {
        ctx.close();
    }

    static SitePolicy peep(double epsilon) {
        return new SitePolicy(Mechanism.PEEP, "l1-clip", epsilon, "once", Duration.ofMinutes(10), false);
    }

    /** One agent run's enrollment: a fresh ledger object on the data directory's file, as after a restart. */
    static final class Run implements AutoCloseable {
        final CameraWorkerTest.SpoolingPublisher out;
        final EnrollmentLedger ledger;
        final Enrollment enrollment;

        Run(Path dir, double cap) throws Exception {
            AgentSettings s = new AgentSettings();
            s.setEnrollFolder(AgentPipelineTest.synthetic().resolve("enroll"));
            s.setComponents(8);
            s.setDataDir(dir);
            out = new CameraWorkerTest.SpoolingPublisher(dir);
            ledger = EnrollmentLedger.open(dir.resolve(AgentPipeline.ENROLLMENT_LEDGER), cap);
            enrollment = new Enrollment(s.getEnrollFolder(), 1, new Mechanisms(s, detector), out.publisher, out.uplink, ledger);
        }

        List<PerturbedFace> spooled() throws Exception {
            List<PerturbedFace> faces = new ArrayList<>();
            for (DiskSpool.Spooled e : out.spool.peek(100_000)) {
                faces.add(FaceRecords.decodeFace(e.entry().value()));
            }
            return faces;
        }

        @Override
        public void close() throws Exception {
            out.close();
        }
    }

    @Test
    void aRestartWithTheSamePolicyReleasesNothing(@TempDir Path dir) throws Exception {
        long first;
        try (Run r = new Run(dir, 100)) {
            first = r.enrollment.publish(peep(16));
            assertTrue(first >= 30, "the synthetic folder holds dozens of detectable faces: " + first);
            List<PerturbedFace> records = r.spooled();
            assertEquals(first, records.size());
            for (PerturbedFace f : records) {
                assertEquals(RecordKind.ENROLLMENT, f.getKind());
                assertEquals(16.0, f.getTrack().getEpsilonSpentInWindow(), "the image's composed epsilon so far");
                assertEquals(100.0, f.getTrack().getEpsilonBudget(), "the image's cap");
            }
        }
        try (Run restarted = new Run(dir, 100)) {
            assertEquals(0, restarted.enrollment.publish(peep(16)), "the recognizer already has these");
            assertEquals(first, restarted.spooled().size(), "nothing new on the spool");
            assertEquals(16.0, restarted.ledger.stats().maxComposedEpsilon());
            assertEquals((int) first, restarted.enrollment.report().get("images"));
        }
    }

    @Test
    void policyChangesABAReleaseThreeTimesAndEachIsCharged(@TempDir Path dir) throws Exception {
        try (Run r = new Run(dir, 100)) {
            long n = r.enrollment.publish(peep(16));
            assertEquals(n, r.enrollment.publish(peep(8)), "a new epsilon per release is a new form");
            PolicyOverride budgetOnly = new PolicyOverride();
            budgetOnly.setWindow(Duration.ofHours(1));
            assertEquals(0, r.enrollment.publish(budgetOnly.applyTo(peep(8))), "a longer window releases nothing new");
            assertEquals(n, r.enrollment.publish(peep(16)), "back to A: compared with B, the previous form, not the start");
            EnrollmentLedger.Stats s = r.ledger.stats();
            assertEquals(3 * n, s.releases());
            assertEquals(40.0, s.maxComposedEpsilon(), 1e-12, "16 + 8 + 16 for every image");
            assertEquals(40.0 * n, s.totalComposedEpsilon(), 1e-9);
            List<PerturbedFace> last = r.spooled().subList((int) (2 * n), (int) (3 * n));
            assertTrue(last.stream().allMatch(f -> f.getTrack().getEpsilonSpentInWindow() == 40.0), "records state it");
        }
    }

    @Test
    void theCapRefusesAndNoRemoteChangeRaisesIt(@TempDir Path dir) throws Exception {
        ObjectMapper json = ctx.getBean(ObjectMapper.class);
        PolicyStore store = new PolicyStore("north", peep(8), new PrivacyFloor(0.1, 32), Map.of(),
                new AuditLog(dir.resolve("audit.jsonl"), json));
        try (Run r = new Run(dir, 40)) {
            long n = r.enrollment.publish(store.current().policy());
            PolicyOverride huge = new PolicyOverride();
            huge.setEpsilon(1e9);
            assertEquals(PolicyStore.Outcome.CLAMPED, store.applyRemote(huge, "control-topic@1", "mallory").outcome());
            assertEquals(n, r.enrollment.publish(store.current().policy()), "8 + 32 reaches the cap of 40 exactly");
            // A control record naming the cap carries nothing a policy can hold: it changes no policy and no cap.
            byte[] raise = "{\"enrollmentEpsilonCap\": 1e9, \"epsilonCap\": 1e9}".getBytes();
            PolicyOverride parsed;
            try {
                parsed = json.readValue(raise, PolicyOverride.class);
            } catch (java.io.IOException e) {
                parsed = null; // unreadable: the control topic audits it as rejected
            }
            assertEquals(PolicyStore.Outcome.REJECTED, store.applyRemote(parsed, "control-topic@2", "mallory").outcome());
            PolicyOverride other = new PolicyOverride();
            other.setEpsilon(16.0);
            assertEquals(PolicyStore.Outcome.ACCEPTED, store.applyRemote(other, "rest", "mallory").outcome());
            assertEquals(0, r.enrollment.publish(store.current().policy()), "40 + 16 would pass the cap: refused");
            assertEquals(0, r.enrollment.publish(store.current().policy()), "asked again, still refused, not counted again");
            assertEquals(40.0, r.ledger.cap());
            EnrollmentLedger.Stats s = r.ledger.stats();
            assertEquals(n, s.refused());
            assertEquals(40.0, s.maxComposedEpsilon(), 1e-12);
            assertEquals(n, r.enrollment.report().get("refusedReleases"));
            assertEquals(2 * n, r.spooled().size(), "a refused release is not made");
        }
    }
}
