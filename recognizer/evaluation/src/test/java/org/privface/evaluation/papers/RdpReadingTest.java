package org.privface.evaluation.papers;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

import org.jtransforms.dct.DoubleDCT_2D;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.imgcodecs.Imgcodecs;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.image.OpenCv;
import org.privface.evaluation.papers.RdpStudy.Sanitized;
import org.privface.privacy.rdp.RdpBasis;

/** The readings' geometry options (padding, 8-bit release, Δ_i per scale), the frame loader and the DCT baselines. */
class RdpReadingTest {
    private static final RdpReading.Pixels UNIT = RdpReading.Pixels.UNIT;
    private static final RdpReading.Pixels BYTE = RdpReading.Pixels.BYTE;
    private static final RdpReading.Delta RANGE = RdpReading.Delta.RANGE;
    private static final RdpReading.Delta L1 = RdpReading.Delta.UNIT_L1;

    private static double[] face(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        double[] f = new double[n];
        for (int j = 0; j < n; j++) {
            f[j] = r.nextInt(256) / 255.0;
        }
        return f;
    }

    /** n random 16×16 faces, seeds from seed on. */
    private static double[][] faces(int n, long seed) {
        double[][] faces = new double[n][];
        for (int i = 0; i < n; i++) {
            faces[i] = face(16 * 16, seed + i);
        }
        return faces;
    }

    @Test
    void sidesThatTheLevelsDivideAreNotPaddedAndOthersRepeatTheirLastRowAndColumn() {
        RdpReading one = new RdpReading("150", 150, 150, 1, UNIT, RANGE);
        assertEquals(150, one.paddedWidth());
        double[] f = face(150 * 150, 1);
        assertArrayEquals(f, one.pad(f));
        RdpReading three = one.withLevels(3);
        assertEquals(152, three.paddedWidth());
        assertEquals(152, three.paddedHeight());
        assertEquals(256, new RdpReading("250", 250, 250, 3, UNIT, RANGE).paddedWidth());
        assertEquals(252, new RdpReading("250", 250, 250, 2, UNIT, RANGE).paddedWidth());
        double[] p = three.pad(f);
        for (int y = 0; y < 152; y++) {
            int sy = Math.min(y, 149);
            assertEquals(f[sy * 150 + 149], p[y * 152 + 150]);
            assertEquals(f[sy * 150 + 149], p[y * 152 + 151]);
            assertEquals(f[sy * 150], p[y * 152]);
        }
        assertArrayEquals(f, three.release(p));
        RdpReading orl = new RdpReading("ORL", 92, 112, 3, UNIT, RANGE);
        assertEquals(96, orl.paddedWidth());
        assertEquals(112, orl.paddedHeight());
        assertThrows(IllegalArgumentException.class, () -> three.pad(new double[10]));
        assertThrows(IllegalArgumentException.class, () -> new RdpReading("150", 150, 150, 0, UNIT, RANGE));
    }

    @Test
    void anEightBitReleaseRoundsToWholeGreyLevelsAndAFloatReleaseDoesNot() {
        RdpReading unit = new RdpReading("150", 4, 2, 1, UNIT, RANGE);
        RdpReading bytes = unit.with(BYTE, RANGE);
        double[] noisy = {0, 0.4 / 255, 0.6 / 255, 1, 100.49 / 255, 100.51 / 255, 254.6 / 255, 0.5};
        assertArrayEquals(noisy, unit.release(noisy));
        assertArrayEquals(new double[] {0, 0, 1 / 255.0, 1, 100 / 255.0, 101 / 255.0, 1, 128 / 255.0},
                bytes.release(noisy), 1e-15);
    }

    @Test
    void theDataRangeScalesWithThePixelsAndTheUnitBoundDoesNot() {
        RdpBasis basis = RdpBasis.fit(faces(12, 10), 4, 16, 16, 2);
        RdpReading r = new RdpReading("test", 16, 16, 2, UNIT, RANGE);
        assertArrayEquals(basis.featureRanges(), r.delta(basis));
        assertArrayEquals(basis.featureRanges(), r.with(BYTE, RANGE).delta(basis));
        assertArrayEquals(basis.featureBounds(), r.with(UNIT, L1).delta(basis));
        double[] bound = basis.featureBounds();
        double[] scaled = r.with(BYTE, L1).delta(basis);
        for (int i = 0; i < bound.length; i++) {
            assertEquals(bound[i] / 255, scaled[i], 1e-15);
        }
    }

    @Test
    void theSeparableDctNormsMatchTheInverseTransformOfEveryBasisImage() {
        int w = 6;
        int h = 5;
        double[] ranges = new RdpBaselines.DctDp().ranges(w, h);
        DoubleDCT_2D dct = new DoubleDCT_2D(h, w);
        for (int k = 0; k < w * h; k++) {
            double[] unit = new double[w * h];
            unit[k] = 1;
            dct.inverse(unit, true);
            double l1 = 0;
            for (double v : unit) {
                l1 += Math.abs(v);
            }
            assertEquals(l1, ranges[k], 1e-12);
        }
    }

    @Test
    void theAllReadingsNoiseEveryCoefficientWithEqThreesScaleAndStateAFinitePerFaceEpsilon() {
        double[][] faces = faces(12, 30);
        RdpBasis basis = RdpBasis.fit(faces, 4, 16, 16, 1);
        double[] delta = basis.featureRanges();
        double b = java.util.Arrays.stream(delta).sum() / 0.5;
        RdpBaselines.DctDp dct = new RdpBaselines.DctDp();
        Sanitized all = RdpBaselines.method("dct-dp-all", basis, delta, 0.5, RdpStudy.laplace(1), dct)
                .apply(faces[0]);
        double sumRanges = java.util.Arrays.stream(dct.ranges(16, 16)).sum();
        assertEquals(sumRanges / b, all.epsilonPerFace(), 1e-9 * sumRanges / b);
        assertEquals(256 * 2 * b * b, all.varTheory(), 1e-9 * all.varTheory());
        assertEquals(0.5, all.epsilonEq3());
        Sanitized pixels = RdpBaselines.method("pixel-dp", basis, delta, 0.5, RdpStudy.laplace(2), dct)
                .apply(faces[0]);
        assertEquals(256 / b, pixels.epsilonPerFace(), 1e-9 * 256 / b);
        Sanitized geo = RdpBaselines.method("dct-dp", basis, delta, 0.5, RdpStudy.laplace(3), dct).apply(faces[0]);
        assertEquals(Double.POSITIVE_INFINITY, geo.epsilonPerFace());
        for (double v : all.image()) {
            assertTrue(v >= 0 && v <= 1);
        }
    }

    @Test
    void framesAreWholeGreyImagesAtTheAskedSizeNeitherCroppedNorEqualized(@TempDir Path root) throws Exception {
        OpenCv.load();
        Path person = Files.createDirectories(root.resolve("Some_One"));
        Mat img = new Mat(150, 150, CvType.CV_8UC1);
        byte[] raw = new byte[150 * 150];
        for (int y = 0; y < 150; y++) {
            for (int x = 0; x < 150; x++) {
                raw[y * 150 + x] = (byte) (40 + x / 2);
            }
        }
        img.put(0, 0, raw);
        assertTrue(Imgcodecs.imwrite(person.resolve("Some_One_0001.png").toString(), img));
        LabelledFaces same = FaceDatasets.frames(root, 150, 150);
        assertEquals(1, same.size());
        for (int j = 0; j < raw.length; j++) {
            assertEquals((raw[j] & 0xff) / 255.0, same.faces()[0][j]);
        }
        LabelledFaces up = FaceDatasets.frames(root, 250, 250);
        double[] f = up.faces()[0];
        assertEquals(250 * 250, f.length);
        for (double v : f) {
            assertEquals(Math.round(v * 255), v * 255, 1e-9);
        }
        // A horizontal ramp stays a ramp from 40 to about 114 grey levels: no equalization stretched it.
        assertEquals(40, Math.round(f[125 * 250] * 255), 1);
        assertEquals(114, Math.round(f[125 * 250 + 249] * 255), 1);
    }

    @Test
    void theClosestReadingIsTheOneWhoseWorstTableTwoRowIsNearestAndBaselinesComeFromLevelOne() {
        RdpReading one = new RdpReading("250", 250, 250, 1, UNIT, RANGE);
        RdpReading three = one.withLevels(3);
        java.util.List<RdpReadings.Row> rows = new java.util.ArrayList<>();
        for (double e : RdpReadings.EPSILONS) {
            int col = e == RdpReadings.EPSILONS[0] ? 0 : 4;
            for (String m : RdpReadings.BASELINES) {
                // Pixel-DP on K pixels 0.015 off the paper, on all pixels far off: the K reading is chosen.
                double ssim = m.equals("pixel-dp-geo") ? RdpPaper.TABLE_II_LFW.get("pixel-dp")[col] + 0.015 : 0.01;
                rows.add(new RdpReadings.Row(one, m, e, ssim, 30, 17, 0.1, e, 4));
            }
            for (String m : RdpReadings.HAAR) {
                double paper = RdpPaper.TABLE_II_LFW.get(RdpPaper.paperRow(m))[col];
                // Printed NA 0.03 off, rescaled NA 0.005 off; at 3 levels every mode 0.1 off.
                double off = m.equals("rdp-na") ? 0.03 : 0.005;
                rows.add(new RdpReadings.Row(one, m, e, paper - off, 30, 17, 0.1, e, 24));
                rows.add(new RdpReadings.Row(three, m, e, paper - 0.1, 30, 17, 0.1, e, 24));
            }
        }
        java.util.List<RdpReadings.Fit> fits = RdpReadings.fits(rows);
        assertEquals(2, fits.size());
        assertEquals(one, fits.get(0).reading());
        assertEquals(0.015, fits.get(0).worst(), 1e-9);
        assertEquals("rdp-na-rescaled", fits.get(0).chosen().get("rdp-na"));
        assertEquals("pixel-dp-geo", fits.get(0).chosen().get("pixel-dp"));
        assertEquals(0.1, fits.get(1).worst(), 1e-9);
        assertEquals(RdpReadings.find(rows, one, "pixel-dp-geo", 0.2), RdpReadings.find(rows, three, "pixel-dp-geo", 0.2));
        String table = RdpReadings.table("lfw5", rows, fits);
        assertTrue(table.contains("Closest reading: **" + one.describe() + "**"), table);
    }
}
