package org.privface.agent.detect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.opencv.core.Size;
import org.opencv.imgcodecs.Imgcodecs;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.image.OpenCv;

/** maxDetectWidth: the cascade scans a shrunk copy, and boxes still come back in frame pixels. */
class FaceDetectorTest {
    private static Mat frame;

    @BeforeAll
    static void load() {
        OpenCv.load();
        Path png = Path.of(System.getProperty("privface.root", "..")).resolve("test-data/synthetic/enroll/person-a/000.png");
        Mat small = Imgcodecs.imread(png.toString(), Imgcodecs.IMREAD_COLOR);
        assertTrue(!small.empty(), "test-data/synthetic is part of the repository");
        frame = new Mat();
        Imgproc.resize(small, frame, new Size(640, 480), 0, 0, Imgproc.INTER_LINEAR);
        small.release();
    }

    @Test
    void shrunkScanFindsTheSameFaceInFrameCoordinates() {
        List<Rect> full = new FaceDetector(FaceDetector.DEFAULT_CASCADE, 1.1, 4, 40).boxes(frame);
        List<Rect> shrunk = new FaceDetector(FaceDetector.DEFAULT_CASCADE, 1.1, 4, 40, 320).boxes(frame);
        assertEquals(1, full.size(), "full-resolution scan");
        assertEquals(1, shrunk.size(), "scan of the 320-wide copy");
        Rect a = full.get(0);
        Rect b = shrunk.get(0);
        assertTrue(b.x >= 0 && b.y >= 0 && b.x + b.width <= 640 && b.y + b.height <= 480, "inside the frame: " + b);
        assertTrue(iou(a, b) > 0.6, "same face: " + a + " vs " + b);
    }

    @Test
    void framesNoWiderThanTheLimitAreScannedAsTheyAre() {
        FaceDetector d = new FaceDetector(FaceDetector.DEFAULT_CASCADE, 1.1, 4, 40, 640);
        assertEquals(new FaceDetector(FaceDetector.DEFAULT_CASCADE, 1.1, 4, 40).boxes(frame), d.boxes(frame));
        assertEquals(640, d.maxDetectWidth());
    }

    @Test
    void rejectsUselessWidths() {
        assertThrows(IllegalArgumentException.class, () -> new FaceDetector(FaceDetector.DEFAULT_CASCADE, 1.1, 4, 40, 10));
        assertThrows(IllegalArgumentException.class, () -> new FaceDetector(FaceDetector.DEFAULT_CASCADE, 1.1, 4, 40, -1));
    }

    private static double iou(Rect a, Rect b) {
        int ix = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x));
        int iy = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
        double inter = (double) ix * iy;
        return inter / ((double) a.width * a.height + (double) b.width * b.height - inter);
    }
}
