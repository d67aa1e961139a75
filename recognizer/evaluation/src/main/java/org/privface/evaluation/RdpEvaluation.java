package org.privface.evaluation;

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
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.rdp.RdpBasis;
import org.privface.privacy.rdp.RdpMechanism;
import org.privface.privacy.rdp.RdpMode;
import org.privface.privacy.rdp.RdpRelease;
import org.privface.privacy.rdp.RdpScales;

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
    static final int NC = 32;
    static final int LEVELS = 3;
    static final int SIDE = 64;
    static final int PIXELS = SIDE * SIDE;
    /** M_P: every coefficient is ranked and K is truncated to [1, M_P]; nothing is dropped. */
    static final int KEEP = PIXELS;
    static final List<String> METHODS = List.of("pixel-dp", "pixel-dp-geo", "dct-dp", "rdp-uniform", "rdp-na",
            "rdp-na-rescaled", "rdp-lmgd", "rdp-strict");
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

    private final String name;
    private final LabelledFaces data;
    private final Path out;
    private final Path examples;
    private final int seeds;
    private final int limit;
    private final DctDp dct = new DctDp();
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
                "--sets", "lfw5,orl", "--examples", "recognizer/evaluation/target",
                "--synthetic", "test-data/synthetic/enroll", "--doc", "docs/privacy-rdp.md"), args);
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
            eval.updateDoc(Path.of(opt.get("--doc")));
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
                    // One stream per method, so that changing one method never moves another's draws.
                    Method method = method(m, basis, e, laplace(100_000 * (METHODS.indexOf(m) + 1) + 1000 * (int) Math.round(e * 10) + s), dct);
                    Cell cell = cells.get(key(m, e));
                    for (int j = 0; j < test.length; j++) {
                        double[] face = data.faces()[test[j]];
                        long t0 = System.nanoTime();
                        Sanitized r = method.apply(face);
                        cell.nanos += System.nanoTime() - t0;
                        cell.ssim.add(Ssim.of(face, r.image(), SIDE, SIDE));
                        double db = psnr(face, r.image());
                        // A release identical to the face (every noised pixel clipped back) has PSNR ∞; left out of the mean.
                        if (Double.isFinite(db)) {
                            cell.psnr.add(db);
                        }
                        cell.varTheory += r.varTheory();
                        cell.varReal += r.varReal();
                        cell.epsilonNoised += r.epsilonNoised();
                        cell.epsilonEq3 += r.epsilonEq3();
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
                readings(train, test, laplace);
            }
        }
        writeCsv();
        charts();
    }

    /** Δ_i readings tried: the paper never states Δ_i, so it is swept as multiples of the feature ranges. */
    static final double[] DELTA_FACTORS = {1, 1e-2, 1e-4, 1e-5, 1e-6};
    static final int[] READING_LEVELS = {3, 6};
    static final int READING_FACES = 20;
    /** Levels-3 readings as "delta|mode" → mean SSIM, for the generated doc table. */
    private final Map<String, Double> readingSsim = new LinkedHashMap<>();
    static final RdpMode[] READING_MODES = {RdpMode.UNIFORM, RdpMode.NA, RdpMode.NA_RESCALED, RdpMode.LMGD};

    /**
     * The readings the paper leaves open, at ε0 = 0.2 on seed 0's first test faces: Δ_i as the
     * L1 bound of each eigenface (worst case over all [0, 1] images) or as the feature's range over
     * the fitting faces times a factor, and 3 or 6 Haar levels (6 is the most a 64-pixel side allows).
     */
    private void readings(double[][] train, int[] test, SecureLaplace laplace) throws IOException {
        int n = Math.min(READING_FACES, test.length);
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("rdp-readings-" + name + ".csv")))) {
            w.println("levels,delta,mode,epsilon0,ssim_mean,psnr_mean,log10_var_real_255,epsilon_eq3_mean,n_faces");
            for (int levels : READING_LEVELS) {
                RdpBasis basis = RdpBasis.fit(train, NC, SIDE, SIDE, levels);
                List<String> deltas = new ArrayList<>(List.of("bound"));
                for (double f : DELTA_FACTORS) {
                    deltas.add("range x " + fmt(f));
                }
                for (String d : deltas) {
                    double[] delta = d.equals("bound") ? basis.featureBounds() : basis.featureRanges();
                    if (!d.equals("bound")) {
                        double f = Double.parseDouble(d.substring("range x ".length()));
                        for (int i = 0; i < delta.length; i++) {
                            delta[i] *= f;
                        }
                    }
                    for (RdpMode mode : READING_MODES) {
                        RdpMechanism m = new RdpMechanism(basis, mode, EXAMPLE_EPSILON, P, KEEP, laplace,
                                RdpMechanism.LmgdSettings.DEFAULT, delta);
                        double ssim = 0;
                        double psnr = 0;
                        double var = 0;
                        double eq3 = 0;
                        for (int j = 0; j < n; j++) {
                            double[] face = data.faces()[test[j]];
                            RdpRelease r = m.sanitize(face, true);
                            ssim += Ssim.of(face, r.image(), SIDE, SIDE) / n;
                            psnr += psnr(face, r.image()) / n;
                            var += r.realNoiseEnergy() / n;
                            eq3 += r.epsilonEq3() / n;
                        }
                        if (levels == 3) {
                            readingSsim.put(d + "|" + mode.wireName(), ssim);
                        }
                        w.printf(Locale.ROOT, "%d,%s,%s,%s,%.4f,%.3f,%.3f,%.4g,%d%n", levels, d, mode.wireName(),
                                fmt(EXAMPLE_EPSILON), ssim, psnr, Math.log10(var * 255 * 255), eq3, n);
                    }
                }
            }
        }
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
            case "pixel-dp" -> face -> pixelDp(face, basis.featureRanges(), eps0, laplace);
            case "pixel-dp-geo" -> {
                double[][] w = eigenfaces(basis);
                double[] delta = basis.featureRanges();
                yield face -> ranked(face.clone(), w, delta, ONES, eps0, laplace, f -> f);
            }
            case "dct-dp" -> dct.method(basis, eps0, laplace);
            case "rdp-uniform" -> rdp(basis, RdpMode.UNIFORM, eps0, KEEP, laplace);
            case "rdp-na" -> rdp(basis, RdpMode.NA, eps0, KEEP, laplace);
            case "rdp-na-rescaled" -> rdp(basis, RdpMode.NA_RESCALED, eps0, KEEP, laplace);
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
                    r.epsilonNoised(), r.lmgdIterations(), r.epsilonEq3());
        };
    }

    private static final double[] ONES = filled(PIXELS, 1.0);

    /** The eigenfaces as rows: the weights ∂F_i/∂x_k in the pixel domain. */
    static double[][] eigenfaces(RdpBasis basis) {
        double[][] u = new double[basis.eigen().dimension()][];
        for (int i = 0; i < u.length; i++) {
            u[i] = basis.eigen().component(i).clone();
        }
        return u;
    }

    /**
     * Plain RDP's rule in another orthonormal domain (pixels or DCT): rank the face's own
     * coefficients, one scale from Eq. 3 with that domain's weights, noise the top K, copy the rest.
     */
    private static Sanitized ranked(double[] c, double[][] weights, double[] featureDelta, double[] range,
                                      double eps0, SecureLaplace laplace, java.util.function.UnaryOperator<double[]> inverse) {
        RdpMechanism.Ranked r = RdpMechanism.ranked(c, weights, featureDelta, range, RdpMode.UNIFORM, eps0, P, KEEP,
                laplace, RdpMechanism.LmgdSettings.DEFAULT);
        double[] image = inverse.apply(r.coefficients());
        for (int j = 0; j < image.length; j++) {
            image[j] = Math.max(0, Math.min(1, image[j]));
        }
        return new Sanitized(image, r.expectedNoiseEnergy(), r.realNoiseEnergy(), Double.POSITIVE_INFINITY,
                r.epsilonNoised(), 0, r.epsilonEq3());
    }

    /**
     * Pixel-DP read as "noise on all pixels" (L470): every pixel gets Laplace(b̄_P), and with
     * every pixel noised Eq. 3 has c_k = 1 and unit eigenfaces, so ε0 = Σ_i Δ_i / b̄_P. Each pixel
     * has range 1, so this reading does have a finite per-face ε: 4096 / b̄_P.
     */
    static Sanitized pixelDp(double[] face, double[] featureDelta, double eps0, SecureLaplace laplace) {
        double b = java.util.Arrays.stream(featureDelta).sum() / eps0;
        double[] noisy = laplace.addNoiseScaled(face, ONES, filled(PIXELS, b));
        double real = 0;
        for (int j = 0; j < noisy.length; j++) {
            double n = noisy[j] - face[j];
            real += n * n;
            noisy[j] = Math.max(0, Math.min(1, noisy[j]));
        }
        return new Sanitized(noisy, face.length * 2 * b * b, real, face.length / b, face.length / b, 0, eps0);
    }

    /**
     * DCT-DP (L468 cites it only): plain RDP's rule in the orthonormal 2D DCT. The weights are the
     * eigenfaces' DCT; Δ_k, the L1 norm of DCT basis image k, only sets the sampler's grid. Like
     * the paper modes, the exact coefficients below rank K leave the per-face ε unbounded.
     */
    static final class DctDp {
        private final DoubleDCT_2D dct = new DoubleDCT_2D(SIDE, SIDE);
        private final double[] delta = new double[PIXELS];
        private final Map<RdpBasis, double[][]> weights = new java.util.IdentityHashMap<>();

        DctDp() {
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

        Method method(RdpBasis basis, double eps0, SecureLaplace laplace) {
            double[][] w = weights.computeIfAbsent(basis, b -> {
                double[][] rows = eigenfaces(b);
                for (double[] row : rows) {
                    dct.forward(row, true);
                }
                return rows;
            });
            double[] featureDelta = basis.featureRanges();
            return face -> {
                double[] c = face.clone();
                dct.forward(c, true);
                return ranked(c, w, featureDelta, delta, eps0, laplace, x -> {
                    dct.inverse(x, true);
                    return x;
                });
            };
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
                    + "epsilon_noised_mean,epsilon_eq3_mean,lmgd_iterations_mean,n_faces");
            w.printf(Locale.ROOT, "none,inf,1.0000,0.0000,inf,0,0,0,%.4f,inf,,,0,%d%n", clean.fnr(), clean.n());
            for (Cell c : cells.values()) {
                int n = c.n();
                w.printf(Locale.ROOT, "%s,%s,%.4f,%.4f,%.3f,%.3f,%.6g,%.6g,%.4f,%s,%.6g,%.6g,%.1f,%d%n", c.method,
                        fmt(c.epsilon0), mean(c.ssim), sd(c.ssim), mean(c.psnr), sd(c.psnr), c.varTheory / n,
                        c.varReal / n, c.fnr(), fmt(c.epsilonPerFace), c.epsilonNoised / n, c.epsilonEq3 / n,
                        c.iterations / (double) n, n);
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
        List<Charts.Series> deviation = new ArrayList<>();
        for (String m : PAPER_METHODS) {
            List<Cell> line = Arrays.stream(EPSILONS).mapToObj(e -> cells.get(key(m, e))).toList();
            variance.add(new Charts.Series(m + " real", EPSILONS,
                    line.stream().mapToDouble(c -> Math.log10(c.varReal / c.n() * 255 * 255)).toArray(), null, false,
                    color(m)));
            deviation.add(new Charts.Series(m, EPSILONS, line.stream()
                    .mapToDouble(c -> Math.abs(c.varReal - c.varTheory) / c.varTheory).toArray(), null, false, color(m)));
        }
        Charts.line(out.resolve("rdp-variance-" + name + ".png"), "RDP on " + name
                + " (Figure 3): log10 of the real noise variance, pixels on 0..255" + facts, x,
                "log10 sum over pixels of (P' - P)^2, before clipping", false, Charts.YAxis.AUTO, legend, 900, 640,
                variance);
        Charts.line(out.resolve("rdp-variance-diff-" + name + ".png"), "RDP on " + name
                + " (Figure 2): |real - theoretical| / theoretical variance" + facts, x,
                "normalised difference, pooled over faces", false, Charts.YAxis.AUTO, legend, 900, 640, deviation);
    }

    /** Table II of the paper, ε0 = 0.2 .. 1.0: LFW, and PubFig83 (which ORL stands in for). */
    static final Map<String, double[]> TABLE_II_LFW = Map.of(
            "dct-dp", new double[] {0.9767, 0.9908, 0.9937, 0.9956, 0.9965},
            "pixel-dp", new double[] {0.9826, 0.9918, 0.9953, 0.9962, 0.9972},
            "rdp-uniform", new double[] {0.9844, 0.9926, 0.9953, 0.9963, 0.9973},
            "rdp-na", new double[] {0.9954, 0.9980, 0.9988, 0.9992, 0.9994},
            "rdp-lmgd", new double[] {0.9955, 0.9983, 0.9991, 0.9993, 0.9994});
    static final Map<String, double[]> TABLE_II_PUBFIG = Map.of(
            "dct-dp", new double[] {0.9728, 0.9882, 0.9931, 0.9947, 0.9958},
            "pixel-dp", new double[] {0.9836, 0.9923, 0.9951, 0.9964, 0.9971},
            "rdp-uniform", new double[] {0.9815, 0.9905, 0.9940, 0.9960, 0.9969},
            "rdp-na", new double[] {0.9968, 0.9985, 0.9989, 0.9992, 0.9994},
            "rdp-lmgd", new double[] {0.9967, 0.9986, 0.9991, 0.9993, 0.9994});
    /** Table III (LFW only): FNR in percent; the paper does not say at which ε0. */
    static final Map<String, Double> TABLE_III = Map.of("dct-dp", 37.75, "pixel-dp", 39.44, "rdp-uniform", 40.05,
            "rdp-na", 77.18, "rdp-lmgd", 81.38);
    /** Table II's tolerance, stated in docs/privacy-rdp.md before the first run. */
    static final double SSIM_TOLERANCE = 0.01;

    /** Which paper row a method of ours is compared with. */
    static String paperRow(String method) {
        return switch (method) {
            case "pixel-dp-geo" -> "pixel-dp";
            case "rdp-na-rescaled" -> "rdp-na";
            default -> method;
        };
    }

    /** Why a method's value can differ from the paper's, beyond the unstated Δ_i common to all. */
    static String why(String method) {
        return switch (method) {
            case "pixel-dp" -> "reading \"noise on all pixels\" (L470): 4096 noised pixels";
            case "pixel-dp-geo" -> "reading \"a geometric number of pixels\" (L470): top-K pixels by value";
            case "dct-dp" -> "[19] is only cited: plain RDP's rule in the DCT is our reading";
            case "rdp-uniform" -> "one scale from Eq. 3; its size is proportional to the unstated Δ_i";
            case "rdp-na" -> "printed NA divides Δ_i by \\|w_ik\\|: near-zero weights give huge scales";
            case "rdp-na-rescaled" -> "NA's shape rescaled to spend exactly ε0 under Eq. 3";
            case "rdp-lmgd" -> "gradient descent on Eq. 4's cost; its size is proportional to the unstated Δ_i";
            default -> "";
        };
    }

    /** The "paper | ours | difference | why" table for this dataset, in markdown. */
    String paperTable() {
        boolean lfw = name.startsWith("lfw");
        Map<String, double[]> table2 = lfw ? TABLE_II_LFW : TABLE_II_PUBFIG;
        String paperSet = lfw ? "LFW" : "PubFig83 (ORL stands in)";
        StringBuilder sb = new StringBuilder();
        sb.append("Generated by `RdpEvaluation` on ").append(name).append(" (")
                .append(cells.values().iterator().next().n()).append(" test faces, ").append(seeds)
                .append(" seed(s)) against the paper's ").append(paperSet)
                .append(". Tolerance for Table II: ±").append(SSIM_TOLERANCE).append(" SSIM.\n\n");
        sb.append("| figure | method | ε0 | paper | ours | difference | why |\n|---|---|---|---|---|---|---|\n");
        for (double e : new double[] {0.2, 1.0}) {
            int col = e == 0.2 ? 0 : EPSILONS.length - 1;
            for (String m : PAPER_METHODS) {
                double paper = table2.get(paperRow(m))[col];
                double ours = mean(cells.get(key(m, e)).ssim);
                double diff = ours - paper;
                sb.append(String.format(Locale.ROOT, "| Table II SSIM | %s | %s | %.4f | %.4f | %+.4f (%s) | %s |%n", m,
                        fmt(e), paper, ours, diff, Math.abs(diff) <= SSIM_TOLERANCE ? "within" : "outside",
                        why(m)));
            }
        }
        for (String m : PAPER_METHODS) {
            double ours = mean(cells.get(key(m, 0.2)).psnr);
            boolean ours2 = m.equals("rdp-na") || m.equals("rdp-na-rescaled") || m.equals("rdp-lmgd");
            double paper = ours2 ? 50 : 42;
            sb.append(String.format(Locale.ROOT, "| Fig. 4 PSNR (dB) | %s | 0.2 | %s | %.1f | %+.1f | %s |%n", m,
                    ours2 ? "> 50" : "≈ 42 (best baseline)", ours, ours - paper, why(m)));
        }
        for (String m : PAPER_METHODS) {
            Cell c = cells.get(key(m, 0.2));
            double ours = Math.log10(c.varReal / c.n() * 255 * 255);
            String paper = switch (paperRow(m)) {
                case "rdp-na", "rdp-lmgd" -> "< 4.0";
                case "dct-dp" -> "≈ 4.75";
                default -> "> 4.75";
            };
            sb.append(String.format(Locale.ROOT, "| Fig. 3 log σr² | %s | 0.2 | %s | %.2f | | log10, pixels on 0..255 (the paper states neither) |%n",
                    m, paper, ours));
        }
        for (String m : PAPER_METHODS) {
            double worst = 0;
            for (double e : EPSILONS) {
                Cell c = cells.get(key(m, e));
                worst = Math.max(worst, Math.abs(c.varReal - c.varTheory) / c.varTheory);
            }
            String paper = switch (paperRow(m)) {
                case "rdp-na", "rdp-lmgd" -> "≤ 0.05";
                case "rdp-uniform" -> "≤ 0.15";
                default -> "0.05 .. 0.15";
            };
            sb.append(String.format(Locale.ROOT, "| Fig. 2 abs(σr²−σt²)/σt² | %s | max over 0.2..1 | %s | %.3f | | pooled over %d faces; the theory is Σ q_k 2 b_k² |%n",
                    m, paper, worst, cells.get(key(m, 0.2)).n()));
        }
        for (String m : PAPER_METHODS) {
            Double paper = lfw ? TABLE_III.get(paperRow(m)) : null;
            double ours = 100 * cells.get(key(m, 0.2)).fnr();
            sb.append(String.format(Locale.ROOT, "| Table III FNR (%%) | %s | 0.2 | %s | %.1f | %s | clean-trained eigenface matcher stands in for dlib at 0.975; the paper's ε0 is not stated |%n",
                    m, paper == null ? "—" : String.format(Locale.ROOT, "%.2f", paper), ours,
                    paper == null ? "" : String.format(Locale.ROOT, "%+.1f", ours - paper)));
        }
        if (!readingSsim.isEmpty()) {
            sb.append("\nSSIM at ε0 = 0.2 under each reading of Δ_i (3 Haar levels, ").append(READING_FACES)
                    .append(" test faces of seed 0; `rdp-readings-").append(name).append(".csv` has PSNR, variance and 6 levels):\n\n");
            List<String> deltas = readingSsim.keySet().stream().map(k -> k.substring(0, k.indexOf('|'))).distinct().toList();
            sb.append("| mode | paper |");
            deltas.forEach(d -> sb.append(" Δ = ").append(d).append(" |"));
            sb.append("\n|---|---|").append("---|".repeat(deltas.size())).append("\n");
            for (RdpMode mode : READING_MODES) {
                String row = mode == RdpMode.UNIFORM ? "rdp-uniform" : "rdp-" + mode.wireName();
                sb.append("| ").append(mode.wireName()).append(String.format(Locale.ROOT, " | %.4f |",
                        table2.get(paperRow(row))[0]));
                for (String d : deltas) {
                    sb.append(String.format(Locale.ROOT, " %.4f |", readingSsim.get(d + "|" + mode.wireName())));
                }
                sb.append("\n");
            }
        }
        return sb.toString();
    }

    /** Replaces this dataset's generated table in the doc, between its two marker comments. */
    void updateDoc(Path doc) throws IOException {
        String begin = "<!-- rdp-paper-table:" + name + ":begin -->";
        String end = "<!-- rdp-paper-table:" + name + ":end -->";
        if (!Files.isRegularFile(doc)) {
            System.err.println("not updating " + doc + ": not found");
            return;
        }
        String text = Files.readString(doc);
        int a = text.indexOf(begin);
        int b = text.indexOf(end);
        if (a < 0 || b < a) {
            System.err.println("not updating " + doc + ": markers for " + name + " not found");
            return;
        }
        Files.writeString(doc, text.substring(0, a + begin.length()) + "\n" + paperTable() + text.substring(b));
    }

    /** One colour per method in every chart. */
    static Color color(String method) {
        return switch (method) {
            case "pixel-dp" -> new Color(31, 119, 180);
            case "dct-dp" -> new Color(255, 127, 14);
            case "rdp-uniform" -> new Color(148, 103, 189);
            case "rdp-na" -> new Color(44, 160, 44);
            case "rdp-na-rescaled" -> new Color(23, 190, 207);
            case "pixel-dp-geo" -> new Color(140, 86, 75);
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
                + fmt(EXAMPLE_EPSILON) + ", basis fitted on them", basis, shown, laplace(999), new DctDp());
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
            case "pixel-dp" -> PIXELS + " eps0 / sum(Delta_i)";
            case "rdp-strict" -> "eps0";
            default -> "inf";
        };
    }

    /** The same bound as a number at one ε0. */
    static String perFace(String method, double eps0) {
        return switch (method) {
            case "pixel-dp" -> PIXELS + "/b";
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
