package org.privface.evaluation;

import static org.privface.evaluation.Figures.fmt;
import static org.privface.evaluation.RdpBaselines.method;
import static org.privface.evaluation.RdpExamples.syntheticExamples;
import static org.privface.evaluation.RdpExamples.writeGrid;

import java.awt.Color;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

import org.knowm.xchart.style.Styler;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.image.OpenCv;
import org.privface.evaluation.RdpBaselines.DctDp;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.SeededRandom;
import org.privface.privacy.rdp.RdpBasis;
import org.privface.privacy.rdp.RdpMechanism;

/**
 * Reproduces the RDP paper's evaluation (Ou et al., arXiv 2408.00294) with the agent's own RDP
 * code: Table II (SSIM per method and ε0), Figure 4 (PSNR), Figures 2 and 3 (theoretical against
 * real noise variance for NA and LMGD) and a false-negative rate of an eigenface matcher trained
 * on clean faces, on lfw5 and ORL. Baselines measured in the same run: Pixel-DP and DCT-DP, each
 * with every pixel or coefficient noised or a geometric number of them; RDP in its paper modes
 * (uniform, NA, LMGD; unbounded per-face ε) and in STRICT (ε0 per face).
 *
 * <p>The geometry, Haar levels, pixel scale and Δ_i are a {@link RdpReading}; the default is the
 * reading closest to the paper ({@link RdpReadings} sweeps them). Per dataset and seed: stratified
 * 70/30 split, RdpBasis (32 eigenfaces) fitted on the training part, one release per test face
 * (at most --limit per seed) per method and ε0. Writes CSV and PNG into
 * docs/results/; grids of example images of the real datasets go to the build directory only
 * (real faces are never committed), the committed grid uses the project's synthetic faces.
 */
public final class RdpEvaluation {
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

    final String name;
    final RdpReading reading;
    private final LabelledFaces data;
    /** The faces at the padded size the transforms need. */
    private final double[][] padded;
    private final Path out;
    private final Path examples;
    final int seeds;
    private final int limit;
    /** Training faces the eigenfaces are fitted on (a seeded subset; the matcher's gallery keeps them all). */
    final int fit;
    private final DctDp dct = new DctDp();
    final Map<String, Cell> cells = new LinkedHashMap<>();
    private final Cell clean;
    private double cleanThreshold;

    RdpEvaluation(String name, RdpReading reading, LabelledFaces data, Path out, Path examples, int seeds, int limit,
                  int fit) {
        this.fit = fit;
        this.name = name;
        this.reading = reading;
        this.data = data;
        boolean pads = reading.paddedWidth() != reading.width() || reading.paddedHeight() != reading.height();
        // Nothing mutates the faces, so an unpadded reading shares them (1140 faces at 250×250 are 570 MB).
        this.padded = pads ? Arrays.stream(data.faces()).map(reading::pad).toArray(double[][]::new) : data.faces();
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
        org.privface.agent.dataset.BadDataset.exitOnError(() -> run(args));
    }

    /** The command; a bad data-set folder ends it with a message naming the file (exit status 2), not a stack trace. */
    static void run(String[] args) throws Exception {
        Map<String, String> defaults = new HashMap<>(Map.of("--datasets", FaceDatasets.root().map(Path::toString)
                .orElse("../shared/datasets"), "--out", "docs/results", "--seeds", "3", "--limit", "150",
                "--sets", "lfw5,orl", "--examples", "recognizer/evaluation/target",
                "--synthetic", "test-data/synthetic/enroll", "--doc", "docs/privacy-rdp.md"));
        defaults.putAll(Map.of("--side", String.valueOf(DEFAULT_SIDE), "--levels", String.valueOf(DEFAULT_LEVELS),
                "--pixels", DEFAULT_PIXELS.name(), "--delta", DEFAULT_DELTA.name(), "--readings", "lfw5", "--fit", "300"));
        Map<String, String> opt = EvalOptions.parse(defaults, args);
        System.setProperty("java.awt.headless", "true");
        OpenCv.load();
        Path datasets = Path.of(opt.get("--datasets"));
        Path out = Files.createDirectories(Path.of(opt.get("--out")));
        Path examples = Files.createDirectories(Path.of(opt.get("--examples")));
        int seeds = Integer.parseInt(opt.get("--seeds"));
        int limit = Integer.parseInt(opt.get("--limit"));
        int fit = Integer.parseInt(opt.get("--fit"));
        int side = Integer.parseInt(opt.get("--side"));
        int levels = Integer.parseInt(opt.get("--levels"));
        RdpReading.Pixels pixels = RdpReading.Pixels.valueOf(opt.get("--pixels").toUpperCase(Locale.ROOT));
        RdpReading.Delta delta = RdpReading.Delta.valueOf(opt.get("--delta").toUpperCase(Locale.ROOT).replace('-', '_'));
        long start = System.nanoTime();
        List<String> tables = new ArrayList<>();
        String grid = opt.get("--readings");
        if (!grid.equals("none")) {
            Path dir = datasets.resolve(grid);
            if (Files.isDirectory(dir)) {
                RdpReadings.run(grid, dir, out, Path.of(opt.get("--doc")));
            } else {
                System.err.println("skipping the readings grid: " + dir + " not found (set FACE_DATASETS or --datasets)");
            }
        }
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
            RdpReading reading = reading(set, side, levels, pixels, delta);
            LabelledFaces data = load(dir, reading);
            System.err.printf(Locale.ROOT, "%s: %d faces of %d people, %s, %d seed(s), %s test faces per seed%n", set,
                    data.size(), data.names().size(), reading.describe(), seeds, limit > 0 ? "at most " + limit : "all");
            RdpEvaluation eval = new RdpEvaluation(set, reading, data, out, examples, seeds, limit, fit);
            eval.run();
            tables.add(eval.table((System.nanoTime() - t0) / 1e9));
            RdpPaper.updateDoc(eval, Path.of(opt.get("--doc")));
        }
        String synthetic = opt.get("--synthetic");
        if (!synthetic.equals("none")) {
            syntheticExamples(Path.of(synthetic), out);
        }
        tables.forEach(System.out::print);
        System.out.printf(Locale.ROOT, "total %.0f s%n", (System.nanoTime() - start) / 1e9);
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

    void run() throws IOException {
        int classes = data.names().size();
        Progress progress = new Progress(System.err, seeds * (METHODS.size() * EPSILONS.length + 1));
        for (int s = 0; s < seeds; s++) {
            StratifiedSplit split = StratifiedSplit.of(data.labels(), classes, 0.7, -1, 1000L + s);
            int[] test = capped(split.test(), limit, 1000L + s);
            double[][] train = StratifiedSplit.select(padded, split.train());
            RdpBasis basis = RdpBasis.fit(StratifiedSplit.select(padded, capped(split.train(), fit, 2000L + s)), NC,
                    reading.paddedWidth(), reading.paddedHeight(), reading.levels());
            double[] delta = reading.delta(basis);
            Matcher matcher = new Matcher(basis, train, Arrays.stream(split.train()).map(i -> data.labels()[i]).toArray());
            progress.step(name + " seed " + s + " basis fitted");
            double[] cleanDistance = new double[test.length];
            for (int j = 0; j < test.length; j++) {
                cleanDistance[j] = matcher.distance(padded[test[j]], data.labels()[test[j]]);
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
                warmUp(basis, delta, test, laplace);
            }
            for (String m : METHODS) {
                for (double e : EPSILONS) {
                    // One stream per method, so that changing one method never moves another's draws.
                    Method method = method(m, basis, delta, e, laplace(stream(m, e, s)), dct);
                    Cell cell = cells.get(key(m, e));
                    int faces = RdpBaselines.FINITE.contains(m) && !m.equals("rdp-strict")
                            ? Math.min(ALL_FACES, test.length) : test.length;
                    for (int j = 0; j < faces; j++) {
                        double[] face = data.faces()[test[j]];
                        long t0 = System.nanoTime();
                        Sanitized r = method.apply(padded[test[j]]);
                        cell.nanos += System.nanoTime() - t0;
                        double[] image = reading.release(r.image());
                        cell.ssim.add(Ssim.of(face, image, reading.width(), reading.height()));
                        double db = psnr(face, image);
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
                        cell.misses += matcher.distance(reading.pad(image), data.labels()[test[j]]) > tau ? 1 : 0;
                    }
                    progress.step(name + " seed " + s + " " + m + " eps0=" + fmt(e));
                }
            }
            if (s == 0) {
                int[] shown = onePerPerson(test, 4);
                writeGrid(examples.resolve("rdp-examples-" + name + ".png"), name + ": test faces, eps0 = "
                        + fmt(EXAMPLE_EPSILON) + " (real faces: never commit)", basis, delta,
                        Arrays.stream(shown).mapToObj(i -> padded[i]).toList(), laplace, dct);
            }
        }
        writeCsv();
        charts();
    }

    /** A few releases per method before timing, so the first method does not pay for the JIT alone. */
    private void warmUp(RdpBasis basis, double[] delta, int[] test, SecureLaplace laplace) {
        for (String m : METHODS) {
            Method method = method(m, basis, delta, 1.0, laplace, dct);
            for (int j = 0; j < Math.min(20, test.length); j++) {
                method.apply(padded[test[j]]);
            }
        }
    }

    /** One stream per method, ε0 and seed, so that changing one method never moves another's draws. */
    static int stream(String method, double eps0, int seed) {
        return 100_000 * (METHODS.indexOf(method) + 1) + 1000 * (int) Math.round(eps0 * 10) + seed;
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
        String facts = " (" + faces() + " faces; " + ALL_FACES + " per seed for pixel-dp and dct-dp-all)";
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
        String x = "epsilon0 (" + reading.describe().replace("Δ_i", "Delta_i") + "; p = " + P + ", " + NC
                + " eigenfaces)";
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

    String table(double seconds) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%n== %s: %d test faces (%d seed(s)), clean FNR %.3f at tau %.3f, %.0f s ==%n",
                name, faces(), seeds, clean.fnr(), cleanThreshold, seconds));
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

    /** Test faces measured per method (the "all" baselines measure fewer, see {@link #ALL_FACES}). */
    int faces() {
        return cells.get(key("rdp-uniform", EPSILONS[0])).n();
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
}
