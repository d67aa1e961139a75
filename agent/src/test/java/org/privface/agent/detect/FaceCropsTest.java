package org.privface.agent.detect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.opencv.core.Scalar;
import org.opencv.core.Size;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.image.ImageDecoder;
import org.privface.agent.image.OpenCv;

/** Faces at and beyond the edge of a frame: dropped, never clipped into a different face, never a crash. */
class FaceCropsTest {
    private static Mat frame;

    @BeforeAll
    static void load() throws Exception {
        OpenCv.load();
        Path png = Path.of(System.getProperty("privface.root", "..")).resolve("test-data/synthetic/enroll/person-a/000.png");
        assertTrue(Files.isRegularFile(png), "test-data/synthetic is part of the repository");
        Mat small = ImageDecoder.read(png);
        frame = new Mat();
        Imgproc.resize(small, frame, new Size(640, 480), 0, 0, Imgproc.INTER_LINEAR);
        small.release();
    }

    /** The box FaceCrops actually cuts: the detection stretched to 47:62 about its centre. */
    private static boolean stretchedInside(Rect r, Mat m) {
        long h = Math.round(r.width * 62.0 / 47);
        long y = (long) r.y + r.height / 2 - h / 2;
        return r.width > 0 && r.x >= 0 && y >= 0 && (long) r.x + r.width <= m.cols() && y + h <= m.rows();
    }

    @Test
    void boxesOverAnEdgeAreDroppedAndBoxesTouchingItAreKept() {
        int w = 94;
        int h = 124; // stretched height of a 94-wide box
        List<Rect> outside = List.of(new Rect(-1, 100, w, h), new Rect(640 - w + 1, 100, w, h),
                new Rect(100, -1, w, h), new Rect(100, 480 - h + 1, w, h), new Rect(-50, -50, w, h),
                new Rect(600, 440, w, h), new Rect(700, 100, w, h), new Rect(100, 100, 0, 0), new Rect(100, 100, -5, 20),
                new Rect(Integer.MAX_VALUE - 10, 10, 100, 100), new Rect(10, Integer.MAX_VALUE - 10, 100, 100),
                new Rect(Integer.MIN_VALUE, 10, 100, 100));
        for (Rect r : outside) {
            assertTrue(FaceCrops.crop(frame, r).isEmpty(), "box " + r + " is not inside the 640x480 frame");
        }
        for (Rect r : List.of(new Rect(0, 0, w, h), new Rect(640 - w, 480 - h, w, h), new Rect(0, 480 - h, w, h),
                new Rect(640 - w, 0, w, h), new Rect(0, 0, 1, 1))) {
            double[] v = FaceCrops.crop(frame, r).orElseThrow(() -> new AssertionError("box " + r + " fits and is cropped"));
            assertEquals(FaceCrops.WIDTH * FaceCrops.HEIGHT, v.length);
        }
    }

    @Test
    void aFaceHalfOutOfTheFrameIsNotPublishedButTheWholeOneIs() {
        FaceDetector detector = FaceDetector.defaults();
        List<Rect> whole = detector.boxes(frame);
        assertEquals(1, whole.size(), "the synthetic face is found when it is whole");
        Rect face = whole.get(0);
        assertTrue(FaceCrops.crop(frame, face).isPresent());

        // The same frame moved left until the face's centre sits on the left edge.
        int shift = face.x + face.width / 2;
        Mat cut = new Mat(frame.rows(), frame.cols(), CvType.CV_8UC3, new Scalar(0, 0, 0));
        frame.colRange(shift, frame.cols()).copyTo(cut.colRange(0, frame.cols() - shift));
        int halfFace = face.width - face.width / 2; // what is left of it: columns [0, halfFace)
        for (Rect r : detector.boxes(cut)) {
            boolean published = FaceCrops.crop(cut, r).isPresent();
            assertEquals(stretchedInside(r, cut), published, "detection " + r);
            int overlap = Math.max(0, Math.min(r.x + r.width, halfFace) - r.x);
            assertFalse(published && overlap > r.width / 2, "the half face was cropped as a face: " + r);
        }
        cut.release();
    }
}
