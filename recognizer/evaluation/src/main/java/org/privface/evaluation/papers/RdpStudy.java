package org.privface.evaluation.papers;

import static org.privface.evaluation.Figures.fmt;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.SeededRandom;
import org.privface.privacy.rdp.RdpMechanism;

/**
 * The RDP study's shared definitions: the grid (ε0, methods, reading defaults), what a method
 * returns and what a cell pools, and the helpers that {@link RdpEvaluation} and its parts
 * ({@link RdpBaselines}, {@link RdpExamples}, {@link RdpPaper}, {@link RdpReadings}) all read, so
 * that no part imports the harness.
 */
final class RdpStudy {
    static final double[] EPSILONS = {0.2, 0.4, 0.6, 0.8, 1.0};
    /** ε0 of the example grids: the paper's headline budget. */
    static final double EXAMPLE_EPSILON = 0.2;
    static final double P = RdpMechanism.DEFAULT_P;
    static final int NC = 32;
    /** LFW's side in the paper's reading: the data set's 150×150 funneled frame (docs/privacy-rdp.md). */
    static final int LFW_SIDE = 150;
    /** The side the default reading takes LFW at: the paper's 250×250, upsampled from the 150×150 frames. */
    static final int DEFAULT_SIDE = 250;
    /** The paper-mode default: the reading closest to Table II and Figures 2-4 (docs/privacy-rdp.md). */
    static final int DEFAULT_LEVELS = 1;
    static final RdpReading.Pixels DEFAULT_PIXELS = RdpReading.Pixels.UNIT;
    static final RdpReading.Delta DEFAULT_DELTA = RdpReading.Delta.RANGE;
    static final List<String> METHODS = List.of("pixel-dp", "pixel-dp-geo", "dct-dp-all", "dct-dp", "rdp-uniform",
            "rdp-na", "rdp-na-rescaled", "rdp-lmgd", "rdp-strict");
    /**
     * Test faces per seed for the baselines that noise every pixel or DCT coefficient: tens of
     * thousands of exact Laplace draws per face for an image of noise (SSIM near 0) every time.
     */
    static final int ALL_FACES = 10;
    /** The paper modes and baselines; STRICT is the product's own and has no paper value. */
    static final List<String> PAPER_METHODS = METHODS.subList(0, METHODS.size() - 1);
    /** The matcher's threshold: this percentile of clean test faces' distances, so clean FNR ≈ 5%. */
    static final double THRESHOLD_PERCENTILE = 95;

    /** One sanitized face and what the release cost. */
    record Sanitized(double[] image, double varTheory, double varReal, double epsilonPerFace, double epsilonNoised,
                     int iterations, double epsilonEq3) {
    }

    /** One method at one ε0, ready to sanitize faces. */
    interface Method {
        Sanitized apply(double[] face);
    }

    /** Everything measured for one method at one ε0, pooled over seeds. */
    static final class Cell {
        final String method;
        final double epsilon0;
        final List<Double> ssim = new ArrayList<>();
        final List<Double> psnr = new ArrayList<>();
        double varTheory;
        double varReal;
        double epsilonNoised;
        double epsilonEq3;
        double epsilonPerFace;
        long iterations;
        long nanos;
        int misses;

        Cell(String method, double epsilon0) {
            this.method = method;
            this.epsilon0 = epsilon0;
        }

        int n() {
            return ssim.size();
        }

        double fnr() {
            return misses / (double) n();
        }
    }

    /**
     * The reading for one data set: LFW as its whole funneled frame at side × side (150 as stored,
     * 250 upsampled), ORL as its whole 92×112 image (already a face crop).
     */
    static RdpReading reading(String set, int side, int levels, RdpReading.Pixels pixels, RdpReading.Delta delta) {
        if (set.startsWith("orl")) {
            return new RdpReading("ORL", 92, 112, levels, pixels, delta);
        }
        return new RdpReading(side == LFW_SIDE ? String.valueOf(side) : side > LFW_SIDE ? "upsampled from 150"
                : "downsampled from 150", side, side, levels, pixels, delta);
    }

    static LabelledFaces load(Path dir, RdpReading reading) throws IOException {
        return FaceDatasets.frames(dir, reading.width(), reading.height());
    }

    /** One stream per method, ε0 and seed, so that changing one method never moves another's draws. */
    static int stream(String method, double eps0, int seed) {
        return 100_000 * (METHODS.indexOf(method) + 1) + 1000 * (int) Math.round(eps0 * 10) + seed;
    }

    /** Eq. 8: 10·log10(MAX² / MSE) with MAX = 1 for pixels in [0, 1] (the same as 255 on 8-bit). */
    static double psnr(double[] a, double[] b) {
        double mse = 0;
        for (int j = 0; j < a.length; j++) {
            mse += (a[j] - b[j]) * (a[j] - b[j]);
        }
        mse /= a.length;
        return mse == 0 ? Double.POSITIVE_INFINITY : 10 * Math.log10(1 / mse);
    }

    /** Linear interpolation between order statistics (numpy's default). */
    static double percentile(double[] x, double pct) {
        double[] s = x.clone();
        Arrays.sort(s);
        double pos = (s.length - 1) * pct / 100;
        int lo = (int) Math.floor(pos);
        int hi = Math.min(s.length - 1, lo + 1);
        return s[lo] + (pos - lo) * (s[hi] - s[lo]);
    }

    /** The test faces, or a seeded random subset of --limit of them (all people keep a share on average). */
    static int[] capped(int[] test, int limit, long seed) {
        if (limit <= 0 || limit >= test.length) {
            return test;
        }
        int[] t = test.clone();
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = t.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int v = t[i];
            t[i] = t[j];
            t[j] = v;
        }
        int[] c = Arrays.copyOf(t, limit);
        Arrays.sort(c);
        return c;
    }

    /** One colour per method in every chart. */
    static Color color(String method) {
        return switch (method) {
            case "pixel-dp" -> new Color(31, 119, 180);
            case "dct-dp" -> new Color(255, 127, 14);
            case "dct-dp-all" -> new Color(188, 189, 34);
            case "rdp-uniform" -> new Color(148, 103, 189);
            case "rdp-na" -> new Color(44, 160, 44);
            case "rdp-na-rescaled" -> new Color(23, 190, 207);
            case "pixel-dp-geo" -> new Color(140, 86, 75);
            case "rdp-lmgd" -> new Color(214, 39, 40);
            case "rdp-strict" -> Color.BLACK;
            default -> Color.GRAY;
        };
    }

    /** The worst-case per-face ε as a label: finite for the "all" baselines, ∞ for the paper modes, ε0 for STRICT. */
    static String perFaceLabel(String method) {
        return switch (method) {
            case "pixel-dp" -> "pixels / b";
            case "dct-dp-all" -> "sum |psi_k|_1 / b";
            case "rdp-strict" -> "eps0";
            default -> "inf";
        };
    }

    /** The same bound at one ε0, for the example grids. */
    static String perFace(String method, double eps0) {
        return method.equals("rdp-strict") ? fmt(eps0) : perFaceLabel(method);
    }

    /** A reproducible stream per seed, so a rerun gives the same CSV; production uses a DRBG. */
    static SecureLaplace laplace(int seed) {
        return new SecureLaplace(SeededRandom.of(0x4d9L + seed));
    }

    static String key(String method, double eps) {
        return method + "@" + eps;
    }

    static double[] filled(int n, double v) {
        double[] a = new double[n];
        Arrays.fill(a, v);
        return a;
    }

    /** inf, or the shortest plain decimal: 0.2, 819.2, 4096. */
    static double mean(List<Double> x) {
        return x.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
    }

    static double sd(List<Double> x) {
        double m = mean(x);
        return x.size() < 2 ? 0 : Math.sqrt(x.stream().mapToDouble(v -> (v - m) * (v - m)).sum() / (x.size() - 1));
    }

    /** What the paper's table reads from one data set's run. */
    record Measured(String name, int faces, int seeds, RdpReading reading, Map<String, Cell> cells) {
    }

    private RdpStudy() {
    }
}
