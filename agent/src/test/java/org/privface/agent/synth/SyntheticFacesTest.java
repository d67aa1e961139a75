package org.privface.agent.synth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.opencv.core.Core;
import org.opencv.core.Mat;
import org.opencv.core.MatOfRect;
import org.opencv.core.Rect;
import org.opencv.core.Size;
import org.opencv.imgproc.Imgproc;
import org.opencv.objdetect.CascadeClassifier;
import org.privface.agent.synth.SyntheticFaces.Identity;
import org.privface.agent.synth.SyntheticFaces.ImageSet;
import org.privface.agent.synth.SyntheticFaces.Placement;
import org.privface.agent.synth.SyntheticFaces.Variation;

/** Renders synthetic faces in memory (nothing is written to disk) and checks them with the Haar cascade. */
class SyntheticFacesTest {

    private static final long SEED = 7L;
    private static CascadeClassifier cascade;

    @BeforeAll
    static void loadCascade() {
        SyntheticFaces.loadNatives();
        cascade = SyntheticFaces.frontalFaceCascade();
    }

    private static Rect[] detect(Mat grey) {
        MatOfRect found = new MatOfRect();
        cascade.detectMultiScale(grey, found, 1.1, 4, 0, new Size(60, 60), new Size());
        Rect[] r = found.toArray();
        found.release();
        return r;
    }

    /** The detection must sit on the drawn face, not merely somewhere in the frame. */
    private static boolean onFace(Rect det, Rect face) {
        double cx = det.x + det.width / 2.0;
        double cy = det.y + det.height / 2.0;
        return cx >= face.x && cx <= face.x + face.width && cy >= face.y && cy <= face.y + face.height;
    }

    private static double maxAbsDiff(Mat a, Mat b) {
        return Core.norm(a, b, Core.NORM_INF);
    }

    @Test
    void cascadeFindsExactlyOneFaceInAtLeastNineOfTenFrames() {
        int hits = 0;
        StringBuilder misses = new StringBuilder();
        for (int i = 0; i < 10; i++) {
            Identity id = SyntheticFaces.identity(SEED, i);
            Variation v = SyntheticFaces.variation(SEED, id, ImageSet.TEST, i);
            Mat grey = SyntheticFaces.renderGray(id, v);
            assertEquals(SyntheticFaces.WIDTH, grey.cols());
            assertEquals(SyntheticFaces.HEIGHT, grey.rows());
            Rect[] found = detect(grey);
            if (found.length == 1 && onFace(found[0], SyntheticFaces.faceBox(id, v))) {
                hits++;
            } else {
                misses.append(' ').append(id.name()).append(':').append(found.length);
            }
            grey.release();
        }
        assertTrue(hits >= 9, "exactly-one-face frames: " + hits + "/10, misses:" + misses);
    }

    @Test
    void renderingIsDeterministicForASeed() {
        Identity id = SyntheticFaces.identity(SEED, 3);
        assertEquals(id, SyntheticFaces.identity(SEED, 3));
        Variation v = SyntheticFaces.variation(SEED, id, ImageSet.QUERY, 5);
        assertEquals(v, SyntheticFaces.variation(SEED, id, ImageSet.QUERY, 5));
        Mat first = SyntheticFaces.renderFrame(id, v);
        Mat second = SyntheticFaces.renderFrame(id, v);
        assertEquals(0.0, maxAbsDiff(first, second), "same identity and variation must render identically");
        first.release();
        second.release();
    }

    @Test
    void imagesOfOneIdentityDifferAndIdentitiesDiffer() {
        Identity a = SyntheticFaces.identity(SEED, 0);
        Identity b = SyntheticFaces.identity(SEED, 1);
        assertNotEquals(a, b);
        assertNotEquals(a, SyntheticFaces.identity(SEED + 1, 0), "another seed gives another population");
        Mat a0 = SyntheticFaces.renderGray(a, SyntheticFaces.variation(SEED, a, ImageSet.ENROLL, 0));
        Mat a1 = SyntheticFaces.renderGray(a, SyntheticFaces.variation(SEED, a, ImageSet.ENROLL, 1));
        assertTrue(maxAbsDiff(a0, a1) > 0, "two photos of one identity must not be identical");
        a0.release();
        a1.release();
    }

    @Test
    void emptySceneHasNoFace() {
        Mat frame = SyntheticFaces.renderFrame(SyntheticFaces.neutral(11L), List.<Placement>of());
        Mat grey = new Mat();
        Imgproc.cvtColor(frame, grey, Imgproc.COLOR_BGR2GRAY);
        assertEquals(0, detect(grey).length);
        frame.release();
        grey.release();
    }
}
