package org.privface.evaluation.papers;

import static org.privface.evaluation.Figures.fmt;
import static org.privface.evaluation.papers.RdpBaselines.method;
import static org.privface.evaluation.papers.RdpExamples.syntheticExamples;
import static org.privface.evaluation.papers.RdpExamples.writeGrid;
import static org.privface.evaluation.papers.RdpStudy.ALL_FACES;
import static org.privface.evaluation.papers.RdpStudy.DEFAULT_DELTA;
import static org.privface.evaluation.papers.RdpStudy.DEFAULT_LEVELS;
import static org.privface.evaluation.papers.RdpStudy.DEFAULT_PIXELS;
import static org.privface.evaluation.papers.RdpStudy.DEFAULT_SIDE;
import static org.privface.evaluation.papers.RdpStudy.EPSILONS;
import static org.privface.evaluation.papers.RdpStudy.EXAMPLE_EPSILON;
import static org.privface.evaluation.papers.RdpStudy.METHODS;
import static org.privface.evaluation.papers.RdpStudy.NC;
import static org.privface.evaluation.papers.RdpStudy.P;
import static org.privface.evaluation.papers.RdpStudy.PAPER_METHODS;
import static org.privface.evaluation.papers.RdpStudy.THRESHOLD_PERCENTILE;
import static org.privface.evaluation.papers.RdpStudy.capped;
import static org.privface.evaluation.papers.RdpStudy.color;
import static org.privface.evaluation.papers.RdpStudy.filled;
import static org.privface.evaluation.papers.RdpStudy.key;
import static org.privface.evaluation.papers.RdpStudy.laplace;
import static org.privface.evaluation.papers.RdpStudy.load;
import static org.privface.evaluation.papers.RdpStudy.mean;
import static org.privface.evaluation.papers.RdpStudy.perFaceLabel;
import static org.privface.evaluation.papers.RdpStudy.percentile;
import static org.privface.evaluation.papers.RdpStudy.psnr;
import static org.privface.evaluation.papers.RdpStudy.reading;
import static org.privface.evaluation.papers.RdpStudy.sd;
import static org.privface.evaluation.papers.RdpStudy.stream;

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

import org.knowm.xchart.style.Styler;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.image.OpenCv;
import org.privface.evaluation.Charts;
import org.privface.evaluation.EvalOptions;
import org.privface.evaluation.Figures;
import org.privface.evaluation.Progress;
import org.privface.evaluation.Ssim;
import org.privface.evaluation.StratifiedSplit;
import org.privface.evaluation.papers.RdpBaselines.DctDp;
import org.privface.evaluation.papers.RdpStudy.Cell;
import org.privface.evaluation.papers.RdpStudy.Method;
import org.privface.evaluation.papers.RdpStudy.Sanitized;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.rdp.RdpBasis;

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
            RdpPaper.updateDoc(eval.measured(), Path.of(opt.get("--doc")));
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

    /** Test faces measured per method (the "all" baselines measure fewer, see {@link #ALL_FACES}). */
    int faces() {
        return cells.get(key("rdp-uniform", EPSILONS[0])).n();
    }

    /** What the paper's table reads from this run. */
    RdpStudy.Measured measured() {
        return new RdpStudy.Measured(name, faces(), seeds, reading, cells);
    }
}
