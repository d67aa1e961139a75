package org.privface.evaluation.deep;

import static org.privface.evaluation.Figures.fmt;
import static org.privface.evaluation.deep.DeepAnswer.FPIR;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.knowm.xchart.style.Styler;
import org.privface.evaluation.Charts;
import org.privface.evaluation.deep.AnswerDecoders.Decoder;
import org.privface.privacy.answer.Gallery;

/** {@link DeepAnswer}'s charts: the answer family against the vector release, and the decoders side by side. */
final class AnswerCharts {
    private final int seeds;
    private final double[] epsilons;
    private final Path out;
    /** The calibration rule the gallery ships with (the charts show its rows). */
    private final Gallery.Bound shipped;

    AnswerCharts(int seeds, double[] epsilons, Path out, Gallery.Bound shipped) {
        this.seeds = seeds;
        this.epsilons = epsilons;
        this.out = out;
        this.shipped = shipped;
    }

    /**
     * Closed-set F1 against ε, one chart per network: a colour per set, templates solid, the MLP
     * dashed (means over seeds or draws; the MLP on signs is in the CSV only).
     */
    void decoderChart(List<String> rows, double[] eps, String suffix) throws IOException {
        Color[] colours = {Color.BLUE, new Color(0, 150, 0), Color.MAGENTA, new Color(230, 120, 0), Color.GRAY};
        Map<String, Map<String, double[]>> byNetwork = new LinkedHashMap<>();
        Map<String, int[]> n = new LinkedHashMap<>();
        List<String> sets = new ArrayList<>();
        for (String line : rows.subList(1, rows.size())) {
            String[] f = line.split(",");
            if (f[5].equals(Decoder.MLP_SIGN.label())) {
                continue;
            }
            if (!sets.contains(f[1])) {
                sets.add(f[1]);
            }
            String key = f[5] + " " + f[1];
            int e = indexOf(eps, Double.parseDouble(f[3]));
            byNetwork.computeIfAbsent(f[0], x -> new LinkedHashMap<>()).computeIfAbsent(key, x -> new double[eps.length])[e]
                    += Double.parseDouble(f[10]);
            n.computeIfAbsent(f[0] + " " + key, x -> new int[eps.length])[e]++;
        }
        for (var net : byNetwork.entrySet()) {
            List<Charts.Series> s = new ArrayList<>();
            for (var e : net.getValue().entrySet()) {
                double[] y = e.getValue().clone();
                for (int i = 0; i < y.length; i++) {
                    y[i] /= Math.max(1, n.get(net.getKey() + " " + e.getKey())[i]);
                }
                String set = e.getKey().substring(e.getKey().indexOf(' ') + 1);
                s.add(new Charts.Series(e.getKey(), eps, y, null, !e.getKey().startsWith(Decoder.TEMPLATES.label()),
                        colours[Math.min(sets.indexOf(set), colours.length - 1)]));
            }
            Charts.line(out.resolve("deep-answer-decoders-" + net.getKey() + suffix + ".png"), "Answer release, "
                            + net.getKey() + ": templates (solid) against the recognizer's MLP (dashed), weighted F1 after "
                            + "k-RR", "ε per face", "weighted F1", true, Charts.YAxis.UNIT, Styler.LegendPosition.InsideSE,
                    900, 600, s);
        }
    }

    // ---------------------------------------------------------------- charts

    /** Means over seeds per (network, set, ε) of the given column. */
    static Map<String, double[]> means(List<String> rows, String column, double[] epsilons) {
        List<String> header = List.of(rows.get(0).split(","));
        int col = header.indexOf(column);
        Map<String, double[]> sum = new LinkedHashMap<>();
        Map<String, int[]> n = new LinkedHashMap<>();
        for (String line : rows.subList(1, rows.size())) {
            String[] f = line.split(",");
            String key = f[0] + " " + f[1];
            int e = indexOf(epsilons, Double.parseDouble(f[3]));
            sum.computeIfAbsent(key, k -> new double[epsilons.length])[e] += Double.parseDouble(f[col]);
            n.computeIfAbsent(key, k -> new int[epsilons.length])[e]++;
        }
        for (var e : sum.entrySet()) {
            int[] count = n.get(e.getKey());
            for (int i = 0; i < epsilons.length; i++) {
                e.getValue()[i] /= Math.max(1, count[i]);
            }
        }
        return sum;
    }

    static int indexOf(double[] a, double v) {
        for (int i = 0; i < a.length; i++) {
            if (a[i] == v) {
                return i;
            }
        }
        throw new IllegalArgumentException(v + " not among " + Arrays.toString(a));
    }

    void charts(List<String> all, String suffix) throws IOException {
        String rule = shipped.name().toLowerCase(Locale.ROOT);
        List<String> rows = new ArrayList<>(List.of(all.get(0)));
        all.subList(1, all.size()).stream().filter(l -> l.endsWith("," + rule)).forEach(rows::add);
        Map<String, double[]> f1 = means(rows, "f1", epsilons);
        Map<String, double[]> vector = means(rows, "sign_cap_vector_f1", epsilons);
        Map<String, double[]> keep = means(rows, "rr_keep", epsilons);
        Map<String, double[]> fnir = means(rows, "fnir", epsilons);
        Map<String, double[]> fpir = means(rows, "fpir", epsilons);
        List<Charts.Series> s = new ArrayList<>();
        for (String key : f1.keySet()) {
            s.add(new Charts.Series("answer " + key, epsilons, f1.get(key), null));
            s.add(new Charts.Series("sign-cap vector " + key, epsilons, vector.get(key), null, true, null));
        }
        for (String key : keep.keySet()) {
            if (key.startsWith("dlib")) {
                s.add(new Charts.Series("RR ceiling e^ε/(e^ε + C), " + key.substring(5), epsilons, keep.get(key), null,
                        true, Color.GRAY));
            }
        }
        Charts.line(out.resolve("deep-answer-f1" + suffix + ".png"), "Answer release vs sign-cap vector (weighted F1, " + seeds
                        + " seeds, every face at ε)", "ε per face", "weighted F1", true, Charts.YAxis.UNIT,
                Styler.LegendPosition.OutsideS, 1000, 900, s);
        List<Charts.Series> o = new ArrayList<>();
        for (String key : fnir.keySet()) {
            o.add(new Charts.Series("FNIR " + key, epsilons, fnir.get(key), null));
            o.add(new Charts.Series("measured FPIR " + key, epsilons, fpir.get(key), null, true, null));
        }
        Charts.line(out.resolve("deep-answer-openset" + suffix + ".png"), "Answer release, open set at FPIR 1 % (threshold on "
                        + "public strangers, " + rule + " rule; FPIR measured on other people)", "ε per face", "rate", true, Charts.YAxis.UNIT,
                Styler.LegendPosition.OutsideS, 1000, 800, o);
        // F1 against enrolled people, one line per (network, ε).
        List<Charts.Series> sc = new ArrayList<>();
        for (String network : List.of("dlib", "fr_feature")) {
            for (int e = 0; e < epsilons.length; e++) {
                List<double[]> pts = new ArrayList<>();
                for (var entry : f1.entrySet()) {
                    if (entry.getKey().startsWith(network + " ")) {
                        String set = entry.getKey().substring(network.length() + 1);
                        pts.add(new double[] {people(rows, set), entry.getValue()[e]});
                    }
                }
                if (pts.size() > 1) {
                    pts.sort((a, b) -> Double.compare(a[0], b[0]));
                    sc.add(new Charts.Series(network + " ε " + fmt(epsilons[e]), pts.stream().mapToDouble(p -> p[0])
                            .toArray(), pts.stream().mapToDouble(p -> p[1]).toArray(), null, network.equals("dlib"), null));
                }
            }
        }
        if (!sc.isEmpty()) {
            Charts.line(out.resolve("deep-answer-scaling" + suffix + ".png"), "Answer release: weighted F1 against enrolled people",
                    "enrolled people", "weighted F1", true, Charts.YAxis.UNIT, Styler.LegendPosition.OutsideS, 900, 800,
                    sc);
        }
    }

    static int people(List<String> rows, String set) {
        for (String line : rows.subList(1, rows.size())) {
            String[] f = line.split(",");
            if (f[1].equals(set)) {
                return Integer.parseInt(f[2]);
            }
        }
        return -1;
    }
}
