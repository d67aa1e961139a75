package org.privface.evaluation.frontier;

import java.awt.Color;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.knowm.xchart.style.Styler;
import org.privface.evaluation.Charts;
import org.privface.evaluation.frontier.FrontierReport.Row;
import org.privface.evaluation.frontier.FrontierFamilies.Group;
import org.privface.evaluation.frontier.FrontierFamilies.Noise;

/** The frontier's PNG, through the evaluations' shared {@link Charts} style. */
final class FrontierPlot {
    private FrontierPlot() {
    }

    /** Weighted F1 against per-face ε: each family's honest curve, the best per ε, PEEP's points and the no-privacy lines. */
    static void chart(Path png, String name, Path out, double[] epsilons, List<Group> groups, List<Row> rows)
            throws IOException {
        List<Charts.Series> series = new ArrayList<>();
        Color[] palette = {new Color(31, 119, 180), new Color(174, 199, 232), new Color(255, 127, 14),
            new Color(255, 187, 120), new Color(148, 103, 189), new Color(44, 160, 44), new Color(214, 39, 40),
            new Color(140, 86, 75)};
        int i = 0;
        for (Group g : groups) {
            String family = g.family(g.classifiers().get(0)) + "-val";
            List<Row> line = rows.stream().filter(r -> r.mechanism().equals(family)).toList();
            if (g.grid().get(0).noise() == Noise.NOTHING) {
                double f = line.stream().mapToDouble(Row::mean).average().orElse(Double.NaN);
                series.add(new Charts.Series(String.format(Locale.ROOT, "release nothing, answer the majority class "
                        + "(%.3f)", f), new double[] {epsilons[0], 30000}, new double[] {f, f}, null, true, Color.RED));
                continue;
            }
            series.add(new Charts.Series(family + (g.supervised() ? " [Fisher basis: enrollment labels]" : ""),
                    line.stream().mapToDouble(Row::epsilon).toArray(), line.stream().mapToDouble(Row::mean).toArray(),
                    null, false, palette[i++ % palette.length]));
        }
        List<Row> mlp = rows.stream().filter(r -> r.mechanism().equals("fisher-lap-l1-mlp-r1-val")).toList();
        if (!mlp.isEmpty()) {
            series.add(new Charts.Series("fisher-lap-l1-mlp-r1-val (MLP at a few points)", mlp.stream()
                    .mapToDouble(Row::epsilon).toArray(), mlp.stream().mapToDouble(Row::mean).toArray(), null, true,
                    new Color(23, 190, 207)));
        }
        List<Row> best = rows.stream().filter(r -> r.mechanism().equals("best-val-all")).toList();
        series.add(new Charts.Series("BEST per eps (family + config chosen on validation)", best.stream()
                .mapToDouble(Row::epsilon).toArray(), best.stream().mapToDouble(Row::mean).toArray(), best.stream()
                .mapToDouble(Row::sd).toArray(), false, Color.BLACK));
        // Horizontal reference lines span the grid and PEEP's paper-pixel points (up to 2914 x 8).
        double lo = epsilons[0];
        double hi = 30000;
        Path peep = out.resolve("peep-" + name + ".csv");
        if (Files.exists(peep)) {
            List<double[]> pts = new ArrayList<>();
            List<double[]> l1 = new ArrayList<>();
            for (String line : Files.readAllLines(peep, StandardCharsets.UTF_8)) {
                String[] c = line.split(",");
                if (c[0].equals("paper-pixel")) {
                    pts.add(new double[] {Double.parseDouble(c[2]), Double.parseDouble(c[6])});
                } else if (c[0].equals("l1-clip")) {
                    l1.add(new double[] {Double.parseDouble(c[2]), Double.parseDouble(c[6])});
                }
            }
            series.add(new Charts.Series("PEEP published curve (our paper-pixel reproduction) at honest per-face eps "
                    + "= 2914 x eps/pixel", pts.stream().mapToDouble(p -> p[0]).toArray(), pts.stream()
                    .mapToDouble(p -> p[1]).toArray(), null, true, Color.GRAY));
            if (!l1.isEmpty()) {
                series.add(new Charts.Series("PEEP l1-clip, nc=128, MLP (docs/peep.md)", l1.stream()
                        .mapToDouble(p -> p[0]).toArray(), l1.stream().mapToDouble(p -> p[1]).toArray(), null, true,
                        Color.LIGHT_GRAY));
            }
        }
        for (Row r : rows) {
            if (Double.isInfinite(r.epsilon()) && !r.mechanism().equals("none-pca64-lda")) {
                series.add(new Charts.Series("no privacy: " + r.mechanism().substring(5) + String.format(Locale.ROOT,
                        " (%.3f)", r.mean()), new double[] {lo, hi}, new double[] {r.mean(), r.mean()}, null, true,
                        r.mechanism().contains("mlp") ? Color.DARK_GRAY : new Color(0, 100, 0)));
            }
        }
        Charts.line(png, "Honest per-face LDP on " + name + ": weighted F1 vs "
                + "per-query-face epsilon (Gaussian rows at delta=1e-5)", "epsilon per face (log)", "weighted F1", true,
                Charts.YAxis.UNIT, Styler.LegendPosition.OutsideS, 1100, 900, series);
    }
}
