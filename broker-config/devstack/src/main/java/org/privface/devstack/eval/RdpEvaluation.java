package org.privface.devstack.eval;

import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

import javax.imageio.ImageIO;

import org.jtransforms.dct.DoubleDCT_2D;
import org.knowm.xchart.style.Styler;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceDetector;
import org.privface.agent.detect.OpenCv;
import org.privface.agent.privacy.SecureLaplace;
import org.privface.agent.privacy.rdp.RdpBasis;
import org.privface.agent.privacy.rdp.RdpMechanism;
import org.privface.agent.privacy.rdp.RdpMode;
import org.privface.agent.privacy.rdp.RdpRelease;
import org.privface.agent.privacy.rdp.RdpScales;

/**
 * Reproduces the RDP paper's evaluation (Ou et al., arXiv 2408.00294) with the agent's own RDP
 * code: Table II (SSIM per method and ε0), Figure 4 (PSNR), Figures 2 and 3 (theoretical against
 * real noise variance for NA and LMGD) and a false-negative rate of an eigenface matcher trained
 * on clean faces, on lfw5 and ORL at 64×64. Baselines measured in the same run: Pixel-DP (Laplace
 * on every pixel) and DCT-DP (the DCT analogue of RDP's uniform mode); RDP in its paper modes
 * (uniform, NA, LMGD; unbounded per-face ε) and in STRICT (ε0 per face).
 *
 * <p>Per dataset and seed: stratified 70/30 split, RdpBasis (32 eigenfaces, 3 Haar levels) fitted
 * on the training part, one release per test face per method and ε0. Writes CSV and PNG into
 * docs/results/; grids of example images of the real datasets go to the build directory only
 * (real faces are never committed), the committed grid uses the project's synthetic faces.
 */
public final class RdpEvaluation {
    static final double[] EPSILONS = {0.2, 0.4, 0.6, 0.8, 1.0};
    /** ε0 of the example grids: the paper's headline budget. */
    static final double EXAMPLE_EPSILON = 0.2;
    static final double P = RdpMechanism.DEFAULT_P;
    static final int KEEP = RdpMechanism.DEFAULT_KEEP;
    static final int NC = 32;
    static final int LEVELS = 3;
    static final int SIDE = 64;
    static final int PIXELS = SIDE * SIDE;
    static final List<String> METHODS = List.of("pixel-dp", "dct-dp", "rdp-uniform", "rdp-na", "rdp-lmgd", "rdp-strict");
    /** The matcher's threshold: this percentile of clean test faces' distances, so clean FNR ≈ 5%. */
    static final double THRESHOLD_PERCENTILE = 95;

    /** One sanitized face and what the release cost. */
    record Sanitized(double[] image, double varTheory, double varReal, double epsilonPerFace, double epsilonNoised,
                     int iterations) {
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

    private final String name;
    private final LabelledFaces data;
    private final Path out;
    private final Path examples;
    private final int seeds;
    private final int limit;
    private final DctDp dct = new DctDp(KEEP, P);
    private final Map<String, Cell> cells = new LinkedHashMap<>();
    private final Cell clean;
    private double cleanThreshold;

    RdpEvaluation(String name, LabelledFaces data, Path out, Path examples, int seeds, int limit) {
        this.name = name;
        this.data = data;
        this.out = out;
        this.examples = examples;
        this.seeds = seeds;
        this.limit = limit;
        for (String m : METHODS) {
            for (double e : EPSILONS) {
                cells.put(key(m, e), new Cell(m, e));
            }
        }
        clean = new Cell("none", Double.POSITIVE_INFINITY);
        clean.epsilonPerFace = Double.POSITIVE_INFINITY;
        clean.epsilonNoised = Double.NaN;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = EvalOptions.parse(Map.of("--datasets", FaceDatasets.root().map(Path::toString)
                .orElse("../shared/datasets"), "--out", "docs/results", "--seeds", "3", "--limit", "0",
                "--sets", "lfw5,orl", "--examples", "broker-config/devstack/target",
                "--synthetic", "test-data/synthetic/enroll"), args);
        System.setProperty("java.awt.headless", "true");
        OpenCv.load();
        Path datasets = Path.of(opt.get("--datasets"));
        Path out = Files.createDirectories(Path.of(opt.get("--out")));
        Path examples = Files.createDirectories(Path.of(opt.get("--examples")));
        int seeds = Integer.parseInt(opt.get("--seeds"));
        int limit = Integer.parseInt(opt.get("--limit"));
        long start = System.nanoTime();
        List<String> tables = new ArrayList<>();
        for (String set : opt.get("--sets").split(",")) {
            if (set.isBlank() || set.equals("none")) {
                continue;
            }
            Path dir = datasets.resolve(set);
            if (!Files.isDirectory(dir)) {
                System.err.println("skipping " + set + ": " + dir + " not found (set FACE_DATASETS or --datasets)");
                continue;
            }
            long t0 = System.nanoTime();
            LabelledFaces data = set.startsWith("orl") ? FaceDatasets.orl(dir, FaceCrops.Shape.RDP)
                    : FaceDatasets.lfw(dir, FaceCrops.Shape.RDP);
            System.err.printf(Locale.ROOT, "%s: %d faces of %d people at %dx%d, %d seed(s), %s test faces%n", set,
                    data.size(), data.names().size(), SIDE, SIDE, seeds, limit > 0 ? "at most " + limit : "all");
            RdpEvaluation eval = new RdpEvaluation(set, data, out, examples, seeds, limit);
            eval.run();
            tables.add(eval.table((System.nanoTime() - t0) / 1e9));
        }
        String synthetic = opt.get("--synthetic");
        if (!synthetic.equals("none")) {
            syntheticExamples(Path.of(synthetic), out);
        }
        tables.forEach(System.out::print);
        System.out.printf(Locale.ROOT, "total %.0f s%n", (System.nanoTime() - start) / 1e9);
    }

    void run() throws IOException {
        int classes = data.names().size();
        Progress progress = new Progress(System.err, seeds * METHODS.size() * EPSILONS.length);
        for (int s = 0; s < seeds; s++) {
            StratifiedSplit split = StratifiedSplit.of(data.labels(), classes, 0.7, -1, 1000L + s);
            int[] test = capped(split.test(), limit, 1000L + s);
            double[][] train = StratifiedSplit.select(data.faces(), split.train());
            RdpBasis basis = RdpBasis.fit(train, NC, SIDE, SIDE, LEVELS);
            Matcher matcher = new Matcher(basis, train, Arrays.stream(split.train()).map(i -> data.labels()[i]).toArray());
            double[] cleanDistance = new double[test.length];
            for (int j = 0; j < test.length; j++) {
                cleanDistance[j] = matcher.distance(data.faces()[test[j]], data.labels()[test[j]]);
            }
            double tau = percentile(cleanDistance, THRESHOLD_PERCENTILE);
            cleanThreshold += tau / seeds;
            for (double d : cleanDistance) {
                clean.ssim.add(1.0);
                clean.psnr.add(Double.POSITIVE_INFINITY);
                clean.misses += d > tau ? 1 : 0;
            }
            SecureLaplace laplace = laplace(s);
            if (s == 0) {
                warmUp(basis, test, laplace);
            }
            for (String m : METHODS) {
                for (double e : EPSILONS) {
                    Method method = method(m, basis, e, laplace, dct);
                    Cell cell = cells.get(key(m, e));
                    for (int j = 0; j < test.length; j++) {
                        double[] face = data.faces()[test[j]];
                        long t0 = System.nanoTime();
                        Sanitized r = method.apply(face);
                        cell.nanos += System.nanoTime() - t0;
                        cell.ssim.add(Ssim.of(face, r.image(), SIDE, SIDE));
                        cell.psnr.add(psnr(face, r.image()));
                        cell.varTheory += r.varTheory();
                        cell.varReal += r.varReal();
                        cell.epsilonNoised += r.epsilonNoised();
                        cell.epsilonPerFace = r.epsilonPerFace();
                        cell.iterations += r.iterations();
                        cell.misses += matcher.distance(r.image(), data.labels()[test[j]]) > tau ? 1 : 0;
                    }
                    progress.step(name + " seed " + s + " " + m + " eps0=" + fmt(e));
                }
            }
            if (s == 0) {
                int[] shown = onePerPerson(test, 4);
                writeGrid(examples.resolve("rdp-examples-" + name + ".png"), name + ": test faces, eps0 = "
                        + fmt(EXAMPLE_EPSILON) + " (real faces: never commit)", basis,
                        Arrays.stream(shown).mapToObj(i -> data.faces()[i]).toList(), laplace, dct);
            }
        }
        writeCsv();
        charts();
    }

    /** A few releases per method before timing, so the first method does not pay for the JIT alone. */
    private void warmUp(RdpBasis basis, int[] test, SecureLaplace laplace) {
        for (String m : METHODS) {
            Method method = method(m, basis, 1.0, laplace, dct);
            for (int j = 0; j < Math.min(20, test.length); j++) {
                method.apply(data.faces()[test[j]]);
            }
        }
    }

    static Method method(String name, RdpBasis basis, double eps0, SecureLaplace laplace, DctDp dct) {
        return switch (name) {
            case "pixel-dp" -> face -> pixelDp(face, eps0, laplace);
            case "dct-dp" -> face -> dct.apply(face, eps0, laplace);
            case "rdp-uniform" -> rdp(basis, RdpMode.UNIFORM, eps0, KEEP, laplace);
            case "rdp-na" -> rdp(basis, RdpMode.NA, eps0, KEEP, laplace);
            case "rdp-lmgd" -> rdp(basis, RdpMode.LMGD, eps0, KEEP, laplace);
            case "rdp-strict" -> rdp(basis, RdpMode.STRICT, eps0, RdpMechanism.DEFAULT_STRICT_KEEP, laplace);
            default -> throw new IllegalArgumentException("unknown method " + name);
        };
    }

    private static Method rdp(RdpBasis basis, RdpMode mode, double eps0, int keep, SecureLaplace laplace) {
        RdpMechanism mechanism = new RdpMechanism(basis, mode, eps0, P, keep, laplace, RdpMechanism.LmgdSettings.DEFAULT);
        return face -> {
            RdpRelease r = mechanism.sanitize(face, true);
            return new Sanitized(r.image(), r.expectedNoiseEnergy(), r.realNoiseEnergy(), r.epsilonPerFace(),
                    r.epsilonNoised(), r.lmgdIterations());
        };
    }

    /** Pixel-DP: every pixel its own Laplace release with sensitivity 1 and ε0; the face spends 4096·ε0. */
    static Sanitized pixelDp(double[] face, double eps0, SecureLaplace laplace) {
        double[] noisy = laplace.addNoisePerCoordinate(face, 1, eps0);
        double real = 0;
        for (int j = 0; j < noisy.length; j++) {
            double n = noisy[j] - face[j];
            real += n * n;
            noisy[j] = Math.max(0, Math.min(1, noisy[j]));
        }
        double b = 1 / eps0;
        return new Sanitized(noisy, face.length * 2 * b * b, real, face.length * eps0, face.length * eps0, 0);
    }

    /**
     * DCT-DP, the DCT analogue of RDP's uniform mode: orthonormal 2D DCT, keep the M_P largest
     * coefficients (the rest zero), noise the top K ~ Geometric(p) truncated to [1, M_P] with one
     * scale b = Σ q_r Δ_r / ε0, where Δ_k is the L1 norm of the k-th DCT basis image (the range
     * of coefficient k over images in [0, 1]), inverse DCT and clip. Like the paper modes, the
     * un-noised kept coefficients and the data-dependent ranking leave the per-face ε unbounded.
     */
    static final class DctDp {
        private final DoubleDCT_2D dct = new DoubleDCT_2D(SIDE, SIDE);
        private final int keep;
        private final double p;
        private final double[] q;
        private final double[] delta = new double[PIXELS];

        DctDp(int keep, double p) {
            this.keep = keep;
            this.p = p;
            this.q = RdpScales.inclusion(p, keep);
            for (int k = 0; k < PIXELS; k++) {
                double[] unit = new double[PIXELS];
                unit[k] = 1;
                dct.inverse(unit, true);
                double l1 = 0;
                for (double v : unit) {
                    l1 += Math.abs(v);
                }
                delta[k] = l1;
            }
        }

        double sensitivity(int k) {
            return delta[k];
        }

        Sanitized apply(double[] face, double eps0, SecureLaplace laplace) {
            double[] c = face.clone();
            dct.forward(c, true);
            int[] rank = RdpMechanism.rankByMagnitude(c);
            double[] sparse = new double[PIXELS];
            double[] d = new double[keep];
            for (int r = 0; r < keep; r++) {
                sparse[rank[r]] = c[rank[r]];
                d[r] = delta[rank[r]];
            }
            double b = RdpScales.uniform(q, d, eps0);
            int k = RdpScales.drawK(p, keep, laplace.uniform());
            double[] values = new double[k];
            double[] sens = new double[k];
            double[] scales = new double[k];
            double spent = 0;
            for (int r = 0; r < k; r++) {
                values[r] = sparse[rank[r]];
                sens[r] = d[r];
                scales[r] = b;
                spent += d[r] / b;
            }
            double[] noisy = laplace.addNoiseScaled(values, sens, scales);
            double real = 0;
            for (int r = 0; r < k; r++) {
                double n = noisy[r] - values[r];
                real += n * n;
                sparse[rank[r]] = noisy[r];
            }
            double qSum = 0;
            for (double v : q) {
                qSum += v;
            }
            dct.inverse(sparse, true);
            for (int j = 0; j < PIXELS; j++) {
                sparse[j] = Math.max(0, Math.min(1, sparse[j]));
            }
            return new Sanitized(sparse, qSum * 2 * b * b, real, Double.POSITIVE_INFINITY, spent, 0);
        }
    }

    /**
     * A matcher trained on clean faces: eigenface features of the fitted basis, a gallery of the
     * clean training faces, and the distance of a probe to the nearest gallery face of its person.
     */
    static final class Matcher {
        private final RdpBasis basis;
        private final Map<Integer, List<double[]>> gallery = new HashMap<>();

        Matcher(RdpBasis basis, double[][] faces, int[] labels) {
            this.basis = basis;
            for (int i = 0; i < faces.length; i++) {
                gallery.computeIfAbsent(labels[i], l -> new ArrayList<>()).add(basis.eigen().project(faces[i]));
            }
        }

        double distance(double[] image, int label) {
            double[] f = basis.eigen().project(image);
            double best = Double.POSITIVE_INFINITY;
            for (double[] g : gallery.getOrDefault(label, List.of())) {
                double s = 0;
                for (int i = 0; i < f.length; i++) {
                    s += (f[i] - g[i]) * (f[i] - g[i]);
                }
                best = Math.min(best, s);
            }
            return Math.sqrt(best);
        }
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

    /** The first test face of each of the first n people that have one. */
    private int[] onePerPerson(int[] test, int n) {
        List<Integer> shown = new ArrayList<>();
        List<Integer> people = new ArrayList<>();
        for (int i : test) {
            if (!people.contains(data.labels()[i]) && shown.size() < n) {
                people.add(data.labels()[i]);
                shown.add(i);
            }
        }
        return shown.stream().mapToInt(Integer::intValue).toArray();
    }

    private void writeCsv() throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("rdp-ssim-" + name + ".csv")))) {
            w.println("method,epsilon0,ssim_mean,ssim_sd,psnr_mean,psnr_sd,var_theory,var_real,fnr,epsilon_per_face,"
                    + "epsilon_noised_mean,lmgd_iterations_mean,n_faces");
            w.printf(Locale.ROOT, "none,inf,1.0000,0.0000,inf,0,0,0,%.4f,inf,,0,%d%n", clean.fnr(), clean.n());
            for (Cell c : cells.values()) {
                int n = c.n();
                w.printf(Locale.ROOT, "%s,%s,%.4f,%.4f,%.3f,%.3f,%.6g,%.6g,%.4f,%s,%.6g,%.1f,%d%n", c.method,
                        fmt(c.epsilon0), mean(c.ssim), sd(c.ssim), mean(c.psnr), sd(c.psnr), c.varTheory / n,
                        c.varReal / n, c.fnr(), fmt(c.epsilonPerFace), c.epsilonNoised / n, c.iterations / (double) n, n);
            }
        }
    }

    private void charts() throws IOException {
        String facts = " (" + cells.values().iterator().next().n() + " faces)";
        List<Charts.Series> ssim = new ArrayList<>();
        List<Charts.Series> psnr = new ArrayList<>();
        List<Charts.Series> fnr = new ArrayList<>();
        for (String m : METHODS) {
            List<Cell> line = Arrays.stream(EPSILONS).mapToObj(e -> cells.get(key(m, e))).toList();
            String label = m + " (eps/face " + perFaceLabel(m) + ")";
            ssim.add(new Charts.Series(label, EPSILONS, line.stream().mapToDouble(c -> mean(c.ssim)).toArray(),
                    line.stream().mapToDouble(c -> sd(c.ssim)).toArray(), false, color(m)));
            psnr.add(new Charts.Series(label, EPSILONS, line.stream().mapToDouble(c -> mean(c.psnr)).toArray(),
                    line.stream().mapToDouble(c -> sd(c.psnr)).toArray(), false, color(m)));
            fnr.add(new Charts.Series(label, EPSILONS, line.stream().mapToDouble(Cell::fnr).toArray(), null, false,
                    color(m)));
        }
        fnr.add(new Charts.Series("clean faces (threshold = 95th percentile of their distances)", EPSILONS,
                filled(EPSILONS.length, clean.fnr()), null, true, Color.GRAY));
        String x = "epsilon0 (M_P = " + KEEP + ", p = " + P + ", " + NC + " eigenfaces, " + LEVELS + " Haar levels)";
        Styler.LegendPosition legend = Styler.LegendPosition.OutsideS;
        Charts.line(out.resolve("rdp-ssim-" + name + ".png"), "RDP on " + name + " (Table II): SSIM vs epsilon0" + facts,
                x, "SSIM (mean +- sd over faces)", false, Charts.YAxis.UNIT, legend, ssim);
        Charts.line(out.resolve("rdp-psnr-" + name + ".png"), "RDP on " + name + " (Figure 4): PSNR vs epsilon0" + facts,
                x, "PSNR in dB (mean +- sd; MAX = 1 on [0,1] pixels)", false, Charts.YAxis.AUTO, legend, psnr);
        Charts.line(out.resolve("rdp-fnr-" + name + ".png"), "RDP on " + name + ": FNR of a clean-trained eigenface matcher"
                + facts, x, "false-negative rate (higher = more privacy)", false, Charts.YAxis.UNIT, legend, fnr);
        List<Charts.Series> variance = new ArrayList<>();
        for (String m : List.of("rdp-na", "rdp-lmgd")) {
            List<Cell> line = Arrays.stream(EPSILONS).mapToObj(e -> cells.get(key(m, e))).toList();
            variance.add(new Charts.Series(m + " theoretical (sum q_r 2 b_r^2)", EPSILONS,
                    line.stream().mapToDouble(c -> c.varTheory / c.n()).toArray(), null, true, color(m)));
            variance.add(new Charts.Series(m + " real (measured noise energy)", EPSILONS,
                    line.stream().mapToDouble(c -> c.varReal / c.n()).toArray(), null, false, color(m)));
        }
        Charts.line(out.resolve("rdp-variance-" + name + ".png"), "RDP on " + name
                + " (Figures 2, 3): noise variance, theory vs real" + facts, x,
                "noise energy per face, sum over coefficients (log)", false, Charts.YAxis.LOG, legend, variance);
    }

    /** One colour per method in every chart. */
    static Color color(String method) {
        return switch (method) {
            case "pixel-dp" -> new Color(31, 119, 180);
            case "dct-dp" -> new Color(255, 127, 14);
            case "rdp-uniform" -> new Color(148, 103, 189);
            case "rdp-na" -> new Color(44, 160, 44);
            case "rdp-lmgd" -> new Color(214, 39, 40);
            case "rdp-strict" -> Color.BLACK;
            default -> Color.GRAY;
        };
    }

    String table(double seconds) {
        StringBuilder sb = new StringBuilder();
        Cell first = cells.values().iterator().next();
        sb.append(String.format(Locale.ROOT, "%n== %s: %d test faces (%d seed(s)), clean FNR %.3f at tau %.3f, %.0f s ==%n",
                name, first.n(), seeds, clean.fnr(), cleanThreshold, seconds));
        sb.append(String.format(Locale.ROOT, "%-11s %5s %7s %6s %7s %6s %6s %11s %11s %9s %8s%n", "method", "eps0",
                "SSIM", "sd", "PSNR", "sd", "FNR", "var theory", "var real", "eps/face", "LMGD it"));
        for (Cell c : cells.values()) {
            int n = c.n();
            sb.append(String.format(Locale.ROOT, "%-11s %5.1f %7.4f %6.4f %7.2f %6.2f %6.3f %11.4g %11.4g %9s %8.1f%n",
                    c.method, c.epsilon0, mean(c.ssim), sd(c.ssim), mean(c.psnr), sd(c.psnr), c.fnr(),
                    c.varTheory / n, c.varReal / n, fmt(c.epsilonPerFace), c.iterations / (double) n));
        }
        sb.append("mean time per face (all eps0):");
        for (String m : METHODS) {
            long nanos = 0;
            int n = 0;
            for (double e : EPSILONS) {
                nanos += cells.get(key(m, e)).nanos;
                n += cells.get(key(m, e)).n();
            }
            sb.append(String.format(Locale.ROOT, "  %s %.0f us", m, nanos / 1e3 / n));
        }
        return sb.append(System.lineSeparator()).toString();
    }

    /** The committed example grid: the project's synthetic faces, basis fitted on them. */
    static void syntheticExamples(Path enroll, Path out) throws IOException {
        if (!Files.isDirectory(enroll)) {
            System.err.println("skipping the synthetic example grid: " + enroll + " not found");
            return;
        }
        LabelledFaces faces = FaceDatasets.detected(enroll, FaceDetector.defaults(), FaceCrops.Shape.RDP);
        RdpBasis basis = RdpBasis.fit(faces.faces(), Math.min(NC, faces.size() - 1), SIDE, SIDE, LEVELS);
        List<double[]> shown = new ArrayList<>();
        List<Integer> people = new ArrayList<>();
        for (int i = 0; i < faces.size() && shown.size() < 4; i++) {
            if (!people.contains(faces.labels()[i])) {
                people.add(faces.labels()[i]);
                shown.add(faces.faces()[i]);
            }
        }
        System.err.printf("synthetic: %d faces of %d people detected in %s%n", faces.size(), faces.names().size(), enroll);
        writeGrid(out.resolve("rdp-examples-synthetic.png"), "synthetic faces (test-data/synthetic/enroll), eps0 = "
                + fmt(EXAMPLE_EPSILON) + ", basis fitted on them", basis, shown, laplace(999), new DctDp(KEEP, P));
    }

    /** Rows = faces, columns = original then each method at ε0 = 0.2, with a title and a label row. */
    static void writeGrid(Path png, String title, RdpBasis basis, List<double[]> faces, SecureLaplace laplace, DctDp dct)
            throws IOException {
        int scale = 2;
        int tile = SIDE * scale;
        int gap = 4;
        int titleHeight = 26;
        int labelHeight = 40;
        int cols = METHODS.size() + 1;
        int width = cols * tile + (cols + 1) * gap;
        int height = titleHeight + labelHeight + faces.size() * (tile + gap) + gap;
        BufferedImage img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, width, height);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
        g.drawString(title, gap, 18);
        List<Method> methods = METHODS.stream().map(m -> method(m, basis, EXAMPLE_EPSILON, laplace, dct)).toList();
        for (int c = 0; c < cols; c++) {
            String head = c == 0 ? "original" : METHODS.get(c - 1);
            String sub = c == 0 ? "" : "eps/face " + perFace(METHODS.get(c - 1), EXAMPLE_EPSILON);
            int x = gap + c * (tile + gap);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
            centred(g, head, x, tile, titleHeight + 16);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
            centred(g, sub, x, tile, titleHeight + 32);
        }
        for (int r = 0; r < faces.size(); r++) {
            int y = titleHeight + labelHeight + r * (tile + gap);
            double[] face = faces.get(r);
            draw(img, face, gap, y, scale);
            for (int c = 0; c < methods.size(); c++) {
                draw(img, methods.get(c).apply(face).image(), gap + (c + 1) * (tile + gap), y, scale);
            }
        }
        g.dispose();
        ImageIO.write(img, "png", png.toFile());
    }

    private static void centred(Graphics2D g, String s, int x, int w, int baseline) {
        FontMetrics fm = g.getFontMetrics();
        g.drawString(s, x + Math.max(0, (w - fm.stringWidth(s)) / 2), baseline);
    }

    private static void draw(BufferedImage img, double[] px, int x0, int y0, int scale) {
        for (int y = 0; y < SIDE; y++) {
            for (int x = 0; x < SIDE; x++) {
                int v = (int) Math.round(255 * Math.max(0, Math.min(1, px[y * SIDE + x])));
                int rgb = (v << 16) | (v << 8) | v;
                for (int dy = 0; dy < scale; dy++) {
                    for (int dx = 0; dx < scale; dx++) {
                        img.setRGB(x0 + x * scale + dx, y0 + y * scale + dy, rgb);
                    }
                }
            }
        }
    }

    /** The worst-case per-face ε as a label: 4096·ε0 for Pixel-DP, ∞ for the paper modes, ε0 for STRICT. */
    static String perFaceLabel(String method) {
        return switch (method) {
            case "pixel-dp" -> PIXELS + " x eps0";
            case "rdp-strict" -> "eps0";
            default -> "inf";
        };
    }

    /** The same bound as a number at one ε0. */
    static String perFace(String method, double eps0) {
        return switch (method) {
            case "pixel-dp" -> fmt(PIXELS * eps0);
            case "rdp-strict" -> fmt(eps0);
            default -> "inf";
        };
    }

    /** A reproducible stream per seed, so a rerun gives the same CSV; production uses a DRBG. */
    static SecureLaplace laplace(int seed) {
        try {
            SecureRandom r = SecureRandom.getInstance("SHA1PRNG");
            r.setSeed(0x4d9L + seed);
            return new SecureLaplace(r);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String key(String method, double eps) {
        return method + "@" + eps;
    }


    private static double[] filled(int n, double v) {
        double[] a = new double[n];
        Arrays.fill(a, v);
        return a;
    }

    /** inf, or the shortest plain decimal: 0.2, 819.2, 4096. */
    static String fmt(double v) {
        if (Double.isInfinite(v)) {
            return "inf";
        }
        return java.math.BigDecimal.valueOf(v).stripTrailingZeros().toPlainString();
    }

    private static double mean(List<Double> x) {
        return x.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
    }

    private static double sd(List<Double> x) {
        double m = mean(x);
        return x.size() < 2 ? 0 : Math.sqrt(x.stream().mapToDouble(v -> (v - m) * (v - m)).sum() / (x.size() - 1));
    }
}
