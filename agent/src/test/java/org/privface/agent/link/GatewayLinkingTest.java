package org.privface.agent.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.image.OpenCv;

class GatewayLinkingTest {
    static final float[] FIVE_POINTS = {10, 10, 30, 10, 20, 20, 12, 30, 28, 30};

    @BeforeAll
    static void opencv() {
        OpenCv.load();
    }

    @Test
    void onlyFacesThatPassTheQualityChecksAreEmbedded() {
        GatewayLinking l = new GatewayLinking(PersonLedger.inMemory(0.2, Duration.ofMinutes(10)), 40, 0.8);
        Mat frame = new Mat(240, 320, CvType.CV_8UC3);
        try {
            assertTrue(l.passes(frame, new DetectedFace(new Rect(100, 50, 60, 70), FIVE_POINTS, 0.95f)));
            assertFalse(l.passes(frame, new DetectedFace(new Rect(100, 50, 60, 70), null, 0.95f)), "no landmarks (Haar)");
            assertFalse(l.passes(frame, new DetectedFace(new Rect(100, 50, 30, 35), FIVE_POINTS, 0.95f)), "too small");
            assertFalse(l.passes(frame, new DetectedFace(new Rect(100, 50, 60, 70), FIVE_POINTS, 0.5f)), "unsure detection");
            assertFalse(l.passes(frame, new DetectedFace(new Rect(290, 50, 60, 70), FIVE_POINTS, 0.95f)), "cut by the edge");
            // A track none of whose faces passed has no person, and nothing is embedded for it.
            java.util.function.Supplier<double[]> never = () -> {
                throw new AssertionError("embedded");
            };
            assertTrue(l.personOf("cam-1", "trk-1", frame, new DetectedFace(new Rect(100, 50, 30, 35), FIVE_POINTS,
                    0.95f), never, Instant.now()).isEmpty());
            assertEquals(0, l.ledger().persons());
            String p = l.personOf("cam-1", "trk-2", frame, new DetectedFace(new Rect(100, 50, 60, 70), FIVE_POINTS, 0.95f),
                    () -> PersonLedgerTest.face(0, 1, 0), Instant.now()).orElseThrow().personId();
            assertEquals(p, l.personOf("cam-1", "trk-2", frame,
                    new DetectedFace(new Rect(100, 50, 60, 70), FIVE_POINTS, 0.95f), never, Instant.now()).orElseThrow().personId(),
                    "a linked track keeps its person without a new embedding until its next check");
        } finally {
            frame.release();
        }
    }

    @Test
    void linkingIsOffWithoutANetworkOrLandmarksAndSaysWhy(@TempDir Path dir) throws Exception {
        Duration w = Duration.ofMinutes(10);
        GatewayLinking.Decision noModel = GatewayLinking.open(true, 0.2, 40, 0.8, java.util.Optional.of("no embedding network at absent.onnx"), true,
                dir.resolve("persons"), w);
        assertTrue(noModel.on().isEmpty());
        assertTrue(noModel.reason().contains("no embedding network"), noModel.reason());
        GatewayLinking.Decision haar = GatewayLinking.open(true, 0.2, 40, 0.8, java.util.Optional.empty(), false,
                dir.resolve("persons"), w);
        assertTrue(haar.on().isEmpty());
        assertTrue(haar.reason().contains("landmarks"), haar.reason());
        assertTrue(GatewayLinking.open(false, 0.2, 40, 0.8, java.util.Optional.empty(), true, dir.resolve("persons"), w)
                .on().isEmpty());
        assertFalse(java.nio.file.Files.exists(dir.resolve("persons")), "no person ledger is opened where linking is off");
        assertEquals("track", GatewayLinking.offReport(haar.reason()).get("budgetScope"));
        GatewayLinking.Decision custom = GatewayLinking.open(true, Double.NaN, 40, 0.8, java.util.Optional.empty(), true,
                dir.resolve("persons"), w);
        assertTrue(custom.on().isEmpty(), "an uncalibrated custom network does not link");
        assertTrue(custom.reason().contains("agent.link.threshold"), custom.reason());
        assertTrue(GatewayLinking.open(true, 0.2, 40, 0.8, java.util.Optional.empty(), true, dir.resolve("persons"), w)
                .on().isPresent());
    }

    static final Instant T0 = Instant.parse("2026-01-01T10:00:00Z");

    private static Instant at(double seconds) {
        return T0.plusMillis((long) (seconds * 1000));
    }

    @Test
    void aTrackIsLinkedOnTheAverageOfItsFirstGoodFacesAndNotBefore() {
        GatewayLinking l = new GatewayLinking(PersonLedger.inMemory(0.9, Duration.ofMinutes(10)), 40, 0.8, 3, 5, true);
        assertTrue(l.observe("cam-1", "trk-1", true, PersonLedgerTest.face(0, 1, 0.3), at(0)).isEmpty());
        assertTrue(l.observe("cam-1", "trk-1", false, null, at(0.1)).isEmpty(), "a face that failed the checks counts for nothing");
        assertTrue(l.observe("cam-1", "trk-1", true, PersonLedgerTest.face(0, 2, 0.3), at(0.2)).isEmpty());
        assertEquals(0, l.ledger().persons(), "nothing is linked, so nothing can be released, before the third face");
        GatewayLinking.Segment s = l.observe("cam-1", "trk-1", true, PersonLedgerTest.face(0, 3, 0.3), at(0.3)).orElseThrow();
        assertEquals("trk-1", s.budgetTrack());
        // Each face alone is at cosine 0.96 to the axis; their average is closer (0.99) and is what is held.
        assertEquals(1, l.ledger().persons());
        assertTrue(l.ledger().similarity(s.personId(), PersonLedgerTest.face(0, 1, 0)) > 0.98);
    }

    /** One person is not on two cameras at once: a track under way on another camera rules its person out. */
    @Test
    void aPersonInATrackUnderWayElsewhereIsSomeoneElse() {
        for (boolean disjoint : new boolean[] {true, false}) {
            GatewayLinking l = new GatewayLinking(PersonLedger.inMemory(0.5, Duration.ofMinutes(10)), 40, 0.8, 1, 5, disjoint);
            String p = l.observe("cam-1", "trk-1", true, PersonLedgerTest.face(0, 1, 0), at(0)).orElseThrow().personId();
            assertTrue(l.observe("cam-2", "trk-9", false, null, at(2)).isEmpty(), "cam-2's track starts at 2 s");
            l.observe("cam-1", "trk-1", false, null, at(3));
            String q = l.observe("cam-2", "trk-9", true, PersonLedgerTest.face(0, 1, 0.1), at(4)).orElseThrow().personId();
            assertEquals(!disjoint, p.equals(q), "disjoint views " + disjoint);
            // Seen after the first track ended: the same person again.
            l.ended("cam-1", "trk-1", at(5));
            String r = l.observe("cam-2", "trk-10", true, PersonLedgerTest.face(0, 1, 0), at(20)).orElseThrow().personId();
            assertEquals(p, r);
        }
    }

    /** The tracker followed another face: the paid part stays charged to the first person, the rest links afresh. */
    @Test
    void aTrackWhoseLaterFacesDisagreeIsSplit() {
        PersonLedger ledger = PersonLedger.inMemory(0.8, Duration.ofMinutes(10));
        GatewayLinking l = new GatewayLinking(ledger, 40, 0.8, 1, 1, true);
        org.privface.agent.track.TrackBudget budget = new org.privface.agent.track.TrackBudget(
                org.privface.agent.track.BudgetPolicy.once(), 2.0, Duration.ofMinutes(10));
        GatewayLinking.Segment a = l.observe("cam-1", "trk-1", true, PersonLedgerTest.face(0, 1, 0), at(0)).orElseThrow();
        assertTrue(budget.request(a.budgetTrack(), 1, at(0)).isPresent());
        assertTrue(ledger.charge(a.personId(), budget, at(0)).isPresent());
        assertEquals(a, l.observe("cam-1", "trk-1", true, PersonLedgerTest.face(0, 1, 0.1), at(0.1)).orElseThrow());
        assertEquals(a, l.observe("cam-1", "trk-1", true, PersonLedgerTest.face(5, 6, 0), at(0.2)).orElseThrow(),
                "one disagreeing face is not a swap");
        assertTrue(l.observe("cam-1", "trk-1", true, PersonLedgerTest.face(5, 6, 0), at(0.3)).isEmpty(), "split");
        GatewayLinking.Segment b = l.observe("cam-1", "trk-1", true, PersonLedgerTest.face(5, 6, 0.05), at(0.4)).orElseThrow();
        assertNotEquals(a.personId(), b.personId());
        assertEquals("trk-1~1", b.budgetTrack());
        assertTrue(budget.request(b.budgetTrack(), 5, at(0.4)).isPresent(), "the rest has its own track allowance");
        assertTrue(ledger.charge(b.personId(), budget, at(0.4)).isPresent());
        assertFalse(ledger.hasRoom(a.personId(), budget, at(0.5)), "what was paid stays charged to the first person");
        assertEquals(java.util.List.of("trk-1", "trk-1~1"), l.ended("cam-1", "trk-1", at(1)));
        assertEquals(1L, l.localReport().get("splitTracks"), "a decision-dependent count: the local REST report only (issue 33)");
    }
}
