package org.privface.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceDetector;
import org.privface.agent.enroll.EnrollmentLedger;
import org.privface.agent.policy.AuditLog;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.policy.PolicyOverride;
import org.privface.agent.policy.PolicyStore;
import org.privface.agent.policy.PrivacyFloor;
import org.privface.agent.policy.SitePolicy;
import org.privface.privacy.EigenBasis;
import org.privface.privacy.gdp.MuGdp;
import org.privface.agent.publish.DiskSpool;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;
import org.privface.agent.release.Mechanisms;

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

    /** ε of the default private basis fit (μ 2), which each enrolled image pays once before its first release. */
    static final double FIT = MuGdp.epsilonFor(new AgentSettings().getBasisFitMu(), MuGdp.DEFAULT_DELTA);

    static SitePolicy peep(double epsilon) {
        return new SitePolicy(Mechanism.PEEP, "l1-clip", epsilon, "once", Duration.ofMinutes(10), false);
    }

    /** One agent run's enrollment: a fresh ledger object on the data directory's file, as after a restart. */
    static final class Run implements AutoCloseable {
        final CameraWorkerTest.SpoolingPublisher out;
        final EnrollmentLedger ledger;
        final Enrollment enrollment;

        Run(Path dir, double cap) throws Exception {
            this(dir, cap, s -> { });
        }

        Run(Path dir, double cap, java.util.function.Consumer<AgentSettings> configure) throws Exception {
            AgentSettings s = new AgentSettings();
            s.setEnrollFolder(AgentPipelineTest.synthetic().resolve("enroll"));
            s.setComponents(8);
            s.setDataDir(dir);
            configure.accept(s);
            out = new CameraWorkerTest.SpoolingPublisher(dir);
            ledger = EnrollmentLedger.open(dir.resolve(AgentPipeline.ENROLLMENT_LEDGER), cap);
            enrollment = new Enrollment(s.getEnrollFolder(), new Mechanisms(s, detector, ledger), out.publisher, out.uplink, ledger,
                    "workertest", org.privface.wire.erasure.PersonKeys.of(new byte[32]));
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
                assertEquals(16 + FIT, f.getTrack().getEpsilonSpentInWindow(), 1e-9,
                        "the image's composed epsilon so far: the private basis fit and this release");
                assertEquals(100.0, f.getTrack().getEpsilonBudget(), "the image's cap");
            }
            // Each record is keyed by its person's pseudonym (#43), so the person's records can be tombstoned.
            var keys = org.privface.wire.erasure.PersonKeys.of(new byte[32]);
            for (DiskSpool.Spooled e : r.out.spool.peek(100_000)) {
                PerturbedFace f = FaceRecords.decodeFace(e.entry().value());
                assertEquals(java.util.Optional.of(keys.pseudonym("workertest", f.getEnrollmentLabel())),
                        org.privface.wire.erasure.PersonKeys.pseudonymOf(e.entry().key()), e.entry().key());
            }
        }
        try (Run restarted = new Run(dir, 100)) {
            assertEquals(0, restarted.enrollment.publish(peep(16)), "the recognizer already has these");
            assertEquals(first, restarted.spooled().size(), "nothing new on the spool");
            assertEquals(16 + FIT, restarted.ledger.stats().maxComposedEpsilon(), 1e-9, "the kept fit is not charged again");
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
            assertEquals(40 + FIT, s.maxComposedEpsilon(), 1e-9, "the fit + 16 + 8 + 16 for every image");
            assertEquals((40 + FIT) * n, s.totalComposedEpsilon(), 1e-6);
            List<PerturbedFace> last = r.spooled().subList((int) (2 * n), (int) (3 * n));
            assertTrue(last.stream().allMatch(f -> Math.abs(f.getTrack().getEpsilonSpentInWindow() - (40 + FIT)) < 1e-9),
                    "records state it");
        }
    }

    @Test
    void theCapRefusesAndNoRemoteChangeRaisesIt(@TempDir Path dir) throws Exception {
        ObjectMapper json = ctx.getBean(ObjectMapper.class);
        PolicyStore store = new PolicyStore("north", peep(8), new PrivacyFloor(0.1, 32), Map.of(),
                new AuditLog(dir.resolve("audit.jsonl"), json));
        try (Run r = new Run(dir, 40 + FIT)) {
            long n = r.enrollment.publish(store.current().policy());
            PolicyOverride huge = new PolicyOverride();
            huge.setEpsilon(1e9);
            assertEquals(PolicyStore.Outcome.CLAMPED, store.applyRemote(huge, "control-topic@1", "mallory").outcome());
            assertEquals(n, r.enrollment.publish(store.current().policy()), "the fit + 8 + 32 reaches the cap exactly");
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
            assertEquals(0, r.enrollment.publish(store.current().policy()), "the fit + 40 + 16 would pass the cap: refused");
            assertEquals(0, r.enrollment.publish(store.current().policy()), "asked again, still refused, not counted again");
            assertEquals(40 + FIT, r.ledger.cap());
            EnrollmentLedger.Stats s = r.ledger.stats();
            assertEquals(n, s.refused());
            assertEquals(40 + FIT, s.maxComposedEpsilon(), 1e-9);
            assertEquals(n, r.enrollment.report().get("refusedReleases"));
            assertEquals(2 * n, r.spooled().size(), "a refused release is not made");
        }
    }

    /**
     * Issue 17 item 4: with the default configuration the basis is a private fit, charged once to
     * every enrolled image before its first release, kept so a restart charges nothing, and every
     * record's basisId says that its ε covers every face. RDP's fit is another fit, charged again.
     * Before this change (f773d1b) the basis was fitted on the enrolled faces for free: the records
     * said 16 and their basisId named no one.
     */
    @Test
    void everyEnrolledImagePaysThePrivateFitOnceAndRecordsSayWhomTheirEpsilonCovers(@TempDir Path dir) throws Exception {
        long n;
        try (Run r = new Run(dir, 100)) {
            n = r.enrollment.publish(peep(16));
            for (PerturbedFace f : r.spooled()) {
                assertTrue(f.getMechanism().getBasisId().endsWith(Mechanisms.PRIVATE_FIT), f.getMechanism().getBasisId());
            }
            EnrollmentLedger.Stats s = r.ledger.stats();
            assertEquals(n, s.images());
            assertEquals(16 + FIT, s.maxComposedEpsilon(), 1e-9);
            assertEquals((16 + FIT) * n, s.totalComposedEpsilon(), 1e-6, "every image paid the fit, none twice");
        }
        try (Run restarted = new Run(dir, 100)) {
            assertEquals(0, restarted.enrollment.publish(peep(16)));
            assertEquals((16 + FIT) * n, restarted.ledger.stats().totalComposedEpsilon(), 1e-6, "the kept fit is reused");
            SitePolicy rdp = new SitePolicy(Mechanism.RDP, "strict", 16, "once", Duration.ofMinutes(10), false);
            long m = restarted.enrollment.publish(rdp);
            assertTrue(m > 0);
            for (PerturbedFace f : restarted.spooled().subList((int) n, (int) (n + m))) {
                String id = f.getMechanism().getBasisId();
                assertTrue(id.startsWith("rdp-3-pca-") && id.endsWith(Mechanisms.PRIVATE_FIT), id);
            }
            double mu = new AgentSettings().getBasisFitMu();
            assertEquals(32 + MuGdp.epsilonFor(Math.sqrt(2) * mu, MuGdp.DEFAULT_DELTA),
                    restarted.ledger.stats().maxComposedEpsilon(), 1e-9, "two fits compose in mu, two releases add");
        }
    }

    /** A fit on the enrolled faces without privacy is refused; a public basis file charges them nothing. */
    @Test
    void anUnpaidEnrollmentFitIsRefusedAndAPublicFileChargesNothing(@TempDir Path dir) throws Exception {
        AgentSettings s = new AgentSettings();
        s.setBasisFit("enrollment");
        assertThrows(IllegalArgumentException.class, () -> new Mechanisms(s, detector, null));
        AgentSettings defaults = new AgentSettings();
        assertEquals(100 + FIT, Mechanisms.defaultEnrollmentCap(defaults, 100), 1e-12, "room for one enrollment and the fit");
        defaults.setBasisFit("public-file");
        assertEquals(100.0, Mechanisms.defaultEnrollmentCap(defaults, 100), 1e-12, "no fit to pay for");
        // An answering site's templates are released at their own ε, template-releases times, whatever the floor.
        defaults.getAnswer().setRelease("answer");
        assertEquals(2 * 20.0, Mechanisms.defaultEnrollmentCap(defaults, 100), 1e-12, "two template releases at ε 20");
        defaults.getAnswer().setRelease("both");
        assertEquals(100 + 2 * 20.0, Mechanisms.defaultEnrollmentCap(defaults, 100), 1e-12, "the vector's and the templates'");

        Path file = dir.resolve("public.eigf");
        java.util.Random rnd = new java.util.Random(3);
        double[][] strangers = new double[30][FaceCrops.WIDTH * FaceCrops.HEIGHT];
        for (double[] f : strangers) {
            for (int p = 0; p < f.length; p++) {
                f[p] = rnd.nextDouble();
            }
        }
        EigenBasis.fit(strangers, 8, FaceCrops.WIDTH, FaceCrops.HEIGHT).save(file);
        Path data = dir.resolve("data");
        try (Run r = new Run(data, 100, c -> {
            c.setBasisFit("public-file");
            c.setBasisFile(file);
        })) {
            long n = r.enrollment.publish(peep(16));
            assertTrue(n > 0);
            for (PerturbedFace f : r.spooled()) {
                assertTrue(f.getMechanism().getBasisId().endsWith(Mechanisms.PUBLIC_FILE), f.getMechanism().getBasisId());
            }
            assertEquals(16.0, r.ledger.stats().maxComposedEpsilon(), 1e-12, "only the release is charged");
            SitePolicy rdp = new SitePolicy(Mechanism.RDP, "strict", 16, "once", Duration.ofMinutes(10), false);
            assertThrows(IllegalStateException.class, () -> r.enrollment.publish(rdp), "RDP has no public basis file");
        }
    }
}
