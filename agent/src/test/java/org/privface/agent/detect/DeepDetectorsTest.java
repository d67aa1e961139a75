package org.privface.agent.detect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import org.junit.jupiter.api.Test;
import org.opencv.core.Core;
import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.opencv.imgcodecs.Imgcodecs;

/**
 * YuNet and UltraFace on real faces: 200 lfw5 images (150×150, one centred face) and 200 ORL
 * images (92×112 grey crops). A hit is a face whose box holds the image centre and whose five
 * landmarks lie in their box in anatomical order. Skipped where a model or data set is absent.
 */
class DeepDetectorsTest {
    private static final int IMAGES = 200;

    /** Hits, extra boxes, and the hits' mean box (x, y, width, height in image pixels). */
    record Recall(int images, int hits, int extra, double[] meanBox) {
        double rate() {
            return hits / (double) images;
        }
    }

    static Recall recall(FaceFinder finder, List<Path> files) {
        int hits = 0;
        int extra = 0;
        double[] box = new double[4];
        for (Path f : files) {
            Mat img = Imgcodecs.imread(f.toString(), Imgcodecs.IMREAD_COLOR);
            List<DetectedFace> faces = finder.detect(img);
            if (!faces.isEmpty() && plausible(faces.get(0), img.cols(), img.rows())) {
                hits++;
                Rect b = faces.get(0).box();
                box[0] += b.x;
                box[1] += b.y;
                box[2] += b.width;
                box[3] += b.height;
            }
            extra += Math.max(0, faces.size() - 1);
            img.release();
        }
        for (int i = 0; i < 4; i++) {
            box[i] /= Math.max(1, hits);
        }
        return new Recall(files.size(), hits, extra, box);
    }

    /** The largest face covers the image centre; its eyes are above its mouth, image-left eye first. */
    static boolean plausible(DetectedFace f, int cols, int rows) {
        Rect b = f.box();
        if (!(b.contains(new org.opencv.core.Point(cols / 2.0, rows / 2.0)))) {
            return false;
        }
        float[] l = f.landmarks();
        if (l == null) {
            return true;
        }
        for (int i = 0; i < 10; i += 2) {
            if (l[i] < b.x - 0.1 * b.width || l[i] > b.x + 1.1 * b.width || l[i + 1] < b.y - 0.1 * b.height
                    || l[i + 1] > b.y + 1.1 * b.height) {
                return false;
            }
        }
        boolean eyesLeftToRight = l[0] < l[2];
        boolean mouthLeftToRight = l[6] < l[8];
        boolean eyesAboveNoseAboveMouth = Math.max(l[1], l[3]) < l[5] && l[5] < Math.min(l[7], l[9]);
        return eyesLeftToRight && mouthLeftToRight && eyesAboveNoseAboveMouth;
    }

    private static void check(String name, FaceFinder finder, String set, double minRecall) throws Exception {
        List<Path> files = DeepModels.images(DeepModels.datasetOrSkip(set), IMAGES);
        int threads = Core.getNumThreads();
        Recall r = recall(finder, files);
        System.out.printf(Locale.ROOT, "%s on %s: %d / %d faces found with plausible landmarks (%.1f%%), %d extra boxes;"
                        + " mean box x %.0f y %.0f w %.0f h %.0f%n", name, set, r.hits(), r.images(), 100 * r.rate(), r.extra(),
                r.meanBox()[0], r.meanBox()[1], r.meanBox()[2], r.meanBox()[3]);
        assertEquals(IMAGES, files.size());
        assertTrue(r.rate() >= minRecall, name + " found " + r.hits() + " of " + r.images() + " faces in " + set);
        assertEquals(threads, Core.getNumThreads());
    }

    @Test
    void yunetFindsRealFacesWithLandmarks() throws Exception {
        YuNetDetector yunet = DeepModels.yunetOrSkip();
        check("yunet", yunet, "lfw5", 0.97);
        check("yunet", yunet, "orl", 0.95);
    }

    @Test
    void ultrafaceFindsRealFacesWithLandmarks() throws Exception {
        UltraFaceDetector ultra = DeepModels.ultrafaceOrSkip();
        check("ultraface", ultra, "lfw5", 0.97);
        check("ultraface", ultra, "orl", 0.95);
    }

    @Test
    void yunetAndUltrafaceAgreeOnWhereTheFaceIs() throws Exception {
        YuNetDetector yunet = DeepModels.yunetOrSkip();
        UltraFaceDetector ultra = DeepModels.ultrafaceOrSkip();
        List<Path> files = DeepModels.images(DeepModels.datasetOrSkip("lfw5"), 20);
        for (Path f : files) {
            Mat img = Imgcodecs.imread(f.toString(), Imgcodecs.IMREAD_COLOR);
            float[] a = yunet.detect(img).get(0).landmarks();
            float[] b = ultra.detect(img).get(0).landmarks();
            double eyes = Math.hypot(a[2] - a[0], a[3] - a[1]);
            for (int i = 0; i < 10; i += 2) {
                double d = Math.hypot(a[i] - b[i], a[i + 1] - b[i + 1]);
                assertTrue(d < 0.35 * eyes, f.getFileName() + ": point " + i / 2 + " differs by " + d + " px, eyes " + eyes + " apart");
            }
            img.release();
        }
    }
}
