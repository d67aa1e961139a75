package org.privface.agent.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import org.privface.agent.detect.OpenCv;

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
}
