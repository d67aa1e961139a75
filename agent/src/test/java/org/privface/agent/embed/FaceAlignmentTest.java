package org.privface.agent.embed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.opencv.core.Core;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.Point;
import org.opencv.core.Scalar;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.image.OpenCv;

class FaceAlignmentTest {
    @BeforeAll
    static void load() {
        OpenCv.load();
    }

    /** The template moved by a known similarity: rotated 25°, scaled 2.3×, shifted into a 640×480 frame. */
    private static float[] moved() {
        double a = Math.toRadians(25);
        double s = 2.3;
        float[] l = new float[10];
        for (int i = 0; i < 5; i++) {
            double x = FaceAlignment.TEMPLATE[2 * i];
            double y = FaceAlignment.TEMPLATE[2 * i + 1];
            l[2 * i] = (float) (s * (Math.cos(a) * x - Math.sin(a) * y) + 300);
            l[2 * i + 1] = (float) (s * (Math.sin(a) * x + Math.cos(a) * y) + 120);
        }
        return l;
    }

    @Test
    void theTransformTakesLandmarksOntoTheTemplate() {
        float[] l = moved();
        Mat m = FaceAlignment.transform(l, FaceAlignment.SIDE);
        for (int i = 0; i < 5; i++) {
            double x = m.get(0, 0)[0] * l[2 * i] + m.get(0, 1)[0] * l[2 * i + 1] + m.get(0, 2)[0];
            double y = m.get(1, 0)[0] * l[2 * i] + m.get(1, 1)[0] * l[2 * i + 1] + m.get(1, 2)[0];
            assertEquals(FaceAlignment.TEMPLATE[2 * i], x, 0.01, "point " + i + " x");
            assertEquals(FaceAlignment.TEMPLATE[2 * i + 1], y, 0.01, "point " + i + " y");
        }
    }

    @Test
    void theWarpPutsTheEyesWhereTheTemplateSays() {
        float[] l = moved();
        Mat frame = new Mat(480, 640, CvType.CV_8UC3, new Scalar(0, 0, 0));
        // A bright disc on each eye, nothing else: after the warp the discs' centres are the template's eyes.
        Imgproc.circle(frame, new Point(l[0], l[1]), 7, new Scalar(255, 255, 255), -1);
        Imgproc.circle(frame, new Point(l[2], l[3]), 7, new Scalar(255, 255, 255), -1);
        Mat aligned = FaceAlignment.align(frame, l, FaceAlignment.SIDE);
        assertEquals(FaceAlignment.SIDE, aligned.rows());
        assertEquals(FaceAlignment.SIDE, aligned.cols());
        Mat grey = new Mat();
        Imgproc.cvtColor(aligned, grey, Imgproc.COLOR_BGR2GRAY);
        for (int eye = 0; eye < 2; eye++) {
            double cx = FaceAlignment.TEMPLATE[2 * eye];
            double cy = FaceAlignment.TEMPLATE[2 * eye + 1];
            double sx = 0, sy = 0, w = 0;
            for (int y = 0; y < grey.rows(); y++) {
                for (int x = 0; x < grey.cols(); x++) {
                    double v = grey.get(y, x)[0];
                    if (v > 0 && Math.abs(x - cx) < 12 && Math.abs(y - cy) < 12) {
                        sx += v * x;
                        sy += v * y;
                        w += v;
                    }
                }
            }
            assertTrue(w > 0, "eye " + eye + " not in the crop");
            // Pixel centres: a disc centred at c covers pixels whose indices average c (±0.5 px of sampling).
            assertEquals(cx, sx / w, 0.6, "eye " + eye + " x");
            assertEquals(cy, sy / w, 0.6, "eye " + eye + " y");
        }
        assertEquals(0, Core.countNonZero(grey.submat(90, 112, 0, 112)), "nothing but the eyes was drawn");
    }

    @Test
    void noLandmarksIsAClearError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FaceAlignment.transform(null, FaceAlignment.SIDE));
        assertTrue(e.getMessage().contains("landmarks"));
    }
}
