package org.privface.evaluation.papers;

import static org.privface.evaluation.Figures.fmt;
import static org.privface.evaluation.papers.RdpBaselines.method;
import static org.privface.evaluation.papers.RdpPaper.TABLE_II_LFW;
import static org.privface.evaluation.papers.RdpStudy.NC;
import static org.privface.evaluation.papers.RdpStudy.capped;
import static org.privface.evaluation.papers.RdpStudy.color;
import static org.privface.evaluation.papers.RdpStudy.laplace;
import static org.privface.evaluation.papers.RdpStudy.psnr;
import static org.privface.evaluation.papers.RdpStudy.stream;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.knowm.xchart.style.Styler;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.evaluation.Charts;
import org.privface.evaluation.Figures;
import org.privface.evaluation.Progress;
import org.privface.evaluation.Ssim;
import org.privface.evaluation.StratifiedSplit;
import org.privface.evaluation.papers.RdpBaselines.DctDp;
import org.privface.evaluation.papers.RdpStudy.Method;
import org.privface.evaluation.papers.RdpStudy.Sanitized;
import org.privface.privacy.rdp.RdpBasis;

/**
 * The readings grid of issue #32: every paper mode and baseline at the geometries the RDP paper's
 * text allows for LFW (its 250×250 images, here upsampled from the 150×150 frames, and the 150×150
 * frames themselves), 1 to 3 Haar levels, grey [0, 1] or [0, 255], and Δ_i as the data range or
 * the unit L1 bound, at ε0 = 0.2 and 1. It names the reading closest to Table II and writes
 * rdp-readings-SET.csv, a PNG and the doc's readings table.
 *
 * <p>Bounded runtime: the basis is fitted on {@value #FIT_FACES} faces of seed 0's training part
 * and measured on {@value #TEST_FACES} of its test faces (the same split as the evaluation's seed
 * 0; {@value #ALL_FACES} for the baselines that noise every pixel or coefficient). The baselines
 * do not use the Haar transform, so they run once per geometry, at one level.
 */
final class RdpReadings {
    static final int[] SIDES = {150, 250};
    static final int[] LEVELS = {1, 2, 3};
    static final double[] EPSILONS = {0.2, 1.0};
    static final int FIT_FACES = 300;
    static final int TEST_FACES = 24;
    /**
     * Faces for the baselines that noise every pixel or DCT coefficient: tens of thousands of
     * exact Laplace draws per face, and an image of noise (SSIM near 0) at any reading.
     */
    static final int ALL_FACES = 4;
    static final List<String> HAAR = List.of("rdp-uniform", "rdp-na", "rdp-na-rescaled", "rdp-lmgd");
    static final List<String> BASELINES = List.of("pixel-dp", "pixel-dp-geo", "dct-dp-all", "dct-dp");
    /** Table II's rows the criterion names, and our methods that read each one. */
    static final Map<String, List<String>> CRITERION_ROWS = new LinkedHashMap<>();

    static {
        CRITERION_ROWS.put("rdp-uniform", List.of("rdp-uniform"));
        CRITERION_ROWS.put("rdp-na", List.of("rdp-na", "rdp-na-rescaled"));
        CRITERION_ROWS.put("rdp-lmgd", List.of("rdp-lmgd"));
        CRITERION_ROWS.put("pixel-dp", List.of("pixel-dp", "pixel-dp-geo"));
    }

    /** The criterion: each of those rows within this of Table II under one reading. */
    static final double CRITERION = 0.02;

    /** One method at one ε0 under one reading, averaged over the test faces. */
    record Row(RdpReading reading, String method, double eps0, double ssim, double psnr, double log10VarReal255,
               double varDiff, double eq3, int n) {
    }

    /** A reading's fit to Table II: the worst row, and which of our methods read each row best. */
    record Fit(RdpReading reading, double worst, Map<String, String> chosen) {
    }

    private RdpReadings() {
    }

    static void run(String set, Path dir, Path out, Path doc) throws IOException {
        long t0 = System.nanoTime();
        List<Row> rows = new ArrayList<>();
        int cells = SIDES.length * (LEVELS.length * HAAR.size() + BASELINES.size()) * 4 * EPSILONS.length;
        Progress progress = new Progress(System.err, cells);
        DctDp dct = new DctDp();
        for (int side : SIDES) {
            RdpReading base = RdpStudy.reading(set, side, 1, RdpReading.Pixels.UNIT, RdpReading.Delta.RANGE);
            LabelledFaces data = RdpStudy.load(dir, base);
            StratifiedSplit split = StratifiedSplit.of(data.labels(), data.names().size(), 0.7, -1, 1000L);
            double[][] fit = StratifiedSplit.select(data.faces(), capped(split.train(), FIT_FACES, 1000L));
            double[][] test = StratifiedSplit.select(data.faces(), capped(split.test(), TEST_FACES, 1000L));
            System.err.printf(Locale.ROOT, "readings %s at %dx%d: basis on %d faces, %d test faces%n", set, side, side,
                    fit.length, test.length);
            for (int levels : LEVELS) {
                RdpReading geometry = base.withLevels(levels);
                double[][] fitPadded = java.util.Arrays.stream(fit).map(geometry::pad).toArray(double[][]::new);
                RdpBasis basis = RdpBasis.fit(fitPadded, NC, geometry.paddedWidth(), geometry.paddedHeight(), levels);
                List<String> methods = new ArrayList<>(HAAR);
                if (levels == 1) {
                    methods.addAll(0, BASELINES);
                }
                for (RdpReading.Pixels pixels : RdpReading.Pixels.values()) {
                    for (RdpReading.Delta d : RdpReading.Delta.values()) {
                        RdpReading reading = geometry.with(pixels, d);
                        double[] delta = reading.delta(basis);
                        for (String m : methods) {
                            for (double e : EPSILONS) {
                                // The same stream under every reading: the readings are compared on the same draws.
                                Method method = method(m, basis, delta, e, laplace(stream(m, e, 0)), dct);
                                double[][] faces = m.equals("pixel-dp") || m.equals("dct-dp-all")
                                        ? java.util.Arrays.copyOf(test, ALL_FACES) : test;
                                rows.add(measure(reading, m, e, method, faces));
                                progress.step("readings " + side + " L" + levels + " " + pixels.label + " "
                                        + d.label + " " + m + " eps0=" + fmt(e));
                            }
                        }
                    }
                }
            }
        }
        writeCsv(out.resolve("rdp-readings-" + set + ".csv"), rows);
        chart(out.resolve("rdp-readings-" + set + ".png"), set, rows);
        List<Fit> fits = fits(rows);
        Fit best = fits.get(0);
        System.err.printf(Locale.ROOT, "readings: closest to Table II: %s, worst row %.4f (%.0f s)%n",
                best.reading().describe(), best.worst(), (System.nanoTime() - t0) / 1e9);
        RdpPaper.replaceBetween(doc, "rdp-readings:" + set, table(set, rows, fits));
    }

    static Row measure(RdpReading reading, String name, double eps0, Method method, double[][] test) {
        double ssim = 0;
        double db = 0;
        int finite = 0;
        double real = 0;
        double theory = 0;
        double eq3 = 0;
        for (double[] face : test) {
            Sanitized r = method.apply(reading.pad(face));
            double[] image = reading.release(r.image());
            ssim += Ssim.of(face, image, reading.width(), reading.height());
            double p = psnr(face, image);
            if (Double.isFinite(p)) {
                db += p;
                finite++;
            }
            real += r.varReal();
            theory += r.varTheory();
            eq3 += r.epsilonEq3();
        }
        int n = test.length;
        return new Row(reading, name, eps0, ssim / n, finite == 0 ? Double.POSITIVE_INFINITY : db / finite,
                Math.log10(real / n * 255 * 255), Math.abs(real - theory) / theory, eq3 / n, n);
    }

    /** The baselines ran at one level: at other levels a reading borrows the level-1 row of its geometry. */
    static Row find(List<Row> rows, RdpReading reading, String method, double eps0) {
        boolean baseline = BASELINES.contains(method);
        for (Row r : rows) {
            RdpReading x = r.reading();
            if (r.method().equals(method) && r.eps0() == eps0 && x.width() == reading.width()
                    && x.pixels() == reading.pixels() && x.delta() == reading.delta()
                    && x.levels() == (baseline ? 1 : reading.levels())) {
                return r;
            }
        }
        throw new IllegalStateException("no row for " + method + " at " + reading.describe());
    }

    /** Every reading, best first: the worst criterion row over both ε0, each row read by its closest method. */
    static List<Fit> fits(List<Row> rows) {
        List<Fit> fits = new ArrayList<>();
        for (Row r : rows) {
            if (!r.method().equals("rdp-uniform") || r.eps0() != EPSILONS[0]) {
                continue;
            }
            double worst = 0;
            Map<String, String> chosen = new LinkedHashMap<>();
            for (Map.Entry<String, List<String>> row : CRITERION_ROWS.entrySet()) {
                double best = Double.POSITIVE_INFINITY;
                for (String m : row.getValue()) {
                    double w = 0;
                    for (int e = 0; e < EPSILONS.length; e++) {
                        double paper = TABLE_II_LFW.get(row.getKey())[e == 0 ? 0 : 4];
                        w = Math.max(w, Math.abs(find(rows, r.reading(), m, EPSILONS[e]).ssim() - paper));
                    }
                    if (w < best) {
                        best = w;
                        chosen.put(row.getKey(), m);
                    }
                }
                worst = Math.max(worst, best);
            }
            fits.add(new Fit(r.reading(), worst, chosen));
        }
        fits.sort(Comparator.comparingDouble(Fit::worst));
        return fits;
    }

    static void writeCsv(Path csv, List<Row> rows) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(csv))) {
            w.println("source,width,height,padded_width,padded_height,levels,pixels,delta,method,epsilon0,ssim_mean,"
                    + "psnr_mean,log10_var_real_255,var_diff,epsilon_eq3_mean,n_faces,fit_faces");
            for (Row r : rows) {
                RdpReading x = r.reading();
                w.printf(Locale.ROOT, "%s,%d,%d,%d,%d,%d,%s,%s,%s,%s,%.4f,%.3f,%.3f,%.4f,%.4g,%d,%d%n", x.source(),
                        x.width(), x.height(), x.paddedWidth(), x.paddedHeight(), x.levels(), x.pixels().label,
                        x.delta().label, r.method(), fmt(r.eps0()), r.ssim(), r.psnr(), r.log10VarReal255(), r.varDiff(),
                        r.eq3(), r.n(), FIT_FACES);
            }
        }
    }

    /** SSIM at ε0 = 0.2 against Haar levels, per geometry and paper mode, Δ_i the data range on [0, 1]. */
    static void chart(Path png, String set, List<Row> rows) throws IOException {
        List<Charts.Series> series = new ArrayList<>();
        double[] x = java.util.Arrays.stream(LEVELS).asDoubleStream().toArray();
        for (String m : HAAR) {
            for (int side : SIDES) {
                double[] y = new double[LEVELS.length];
                for (int l = 0; l < LEVELS.length; l++) {
                    RdpReading at = RdpStudy.reading(set, side, LEVELS[l], RdpReading.Pixels.UNIT,
                            RdpReading.Delta.RANGE);
                    y[l] = find(rows, at, m, EPSILONS[0]).ssim();
                }
                series.add(new Charts.Series(m + " " + side + "x" + side, x, y, null, side != SIDES[0], color(m)));
            }
        }
        for (String m : List.of("rdp-uniform", "rdp-na")) {
            double paper = TABLE_II_LFW.get(m)[0];
            series.add(new Charts.Series("paper " + (m.equals("rdp-na") ? "RDP-NA / LMGD" : "RDP"), x,
                    RdpStudy.filled(x.length, paper), null, true, java.awt.Color.GRAY));
        }
        Charts.line(png, "RDP readings on " + set + ": SSIM at eps0 = 0.2 (" + TEST_FACES + " faces; Delta_i = data range,"
                + " grey [0,1])", "Haar levels (dashed: 250x250 upsampled; grey: the paper's Table II)", "SSIM", false,
                Charts.YAxis.AUTO, Styler.LegendPosition.OutsideS, 900, 640, series);
    }

    /** The doc's readings table: SSIM at ε0 = 0.2 of every method under every reading, and each reading's fit. */
    static String table(String set, List<Row> rows, List<Fit> fits) {
        List<String> methods = new ArrayList<>(BASELINES);
        methods.addAll(HAAR);
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "Generated by `RdpReadings` on %s: basis fitted on %d faces of seed 0's "
                + "training part, SSIM over %d of its test faces (%d for pixel-dp and dct-dp-all), at ε0 = 0.2. \"worst\" is the largest distance to "
                + "Table II over the rows RDP, NA, LMGD and Pixel-DP at ε0 = 0.2 and 1, each row read by whichever of "
                + "our methods for it is closer (NA printed or rescaled; Pixel-DP on all pixels or on K). Baselines "
                + "do not use Haar levels: they were run at 1 level.%n%n", set, FIT_FACES, TEST_FACES, ALL_FACES));
        sb.append("| geometry | levels | grey | Δ_i |");
        methods.forEach(m -> sb.append(' ').append(m).append(" |"));
        sb.append(" worst |\n|---|---|---|---|").append("---|".repeat(methods.size() + 1)).append('\n');
        sb.append("| paper (LFW) | | | |");
        for (String m : methods) {
            sb.append(String.format(Locale.ROOT, " %.4f |", TABLE_II_LFW.get(RdpPaper.paperRow(m))[0]));
        }
        sb.append(" |\n");
        List<Fit> ordered = new ArrayList<>(fits);
        ordered.sort(Comparator.comparing((Fit f) -> f.reading().width()).thenComparing(f -> f.reading().levels())
                .thenComparing(f -> f.reading().pixels()).thenComparing(f -> f.reading().delta()));
        for (Fit f : ordered) {
            RdpReading r = f.reading();
            String pad = r.paddedWidth() == r.width() ? "" : " → " + r.paddedWidth();
            sb.append(String.format(Locale.ROOT, "| %dx%d%s (%s) | %d | %s | %s |", r.width(), r.height(), pad,
                    r.source(), r.levels(), r.pixels().label, r.delta().label));
            for (String m : methods) {
                sb.append(String.format(Locale.ROOT, " %.4f |", find(rows, r, m, EPSILONS[0]).ssim()));
            }
            sb.append(String.format(Locale.ROOT, " %.4f%s |%n", f.worst(), f.worst() <= CRITERION ? " ✓" : ""));
        }
        Fit best = fits.get(0);
        sb.append(String.format(Locale.ROOT, "%nClosest reading: **%s**; worst row %.4f (criterion ±%s), reading NA "
                + "as `%s` and Pixel-DP as `%s`. Under it, against Table II and Figures 2-4 (\"var diff\" is Figure "
                + "2's abs(σr²−σt²)/σt², pooled; log σr² on 0..255 pixels):%n%n", best.reading().describe(),
                best.worst(), fmt(CRITERION), best.chosen().get("rdp-na"), best.chosen().get("pixel-dp")));
        sb.append("| method | ε0 | paper SSIM | SSIM | difference | PSNR (dB) | log10 σr² | var diff | Eq. 3 ε |\n");
        sb.append("|---|---|---|---|---|---|---|---|---|\n");
        for (double e : EPSILONS) {
            for (String m : methods) {
                Row r = find(rows, best.reading(), m, e);
                double paper = TABLE_II_LFW.get(RdpPaper.paperRow(m))[e == EPSILONS[0] ? 0 : 4];
                sb.append(String.format(Locale.ROOT, "| %s | %s | %.4f | %.4f | %+.4f | %.1f | %.2f | %.3f | %.3g |%n", m,
                        fmt(e), paper, r.ssim(), r.ssim() - paper, r.psnr(), r.log10VarReal255(), r.varDiff(), r.eq3()));
            }
        }
        return sb.toString();
    }
}
