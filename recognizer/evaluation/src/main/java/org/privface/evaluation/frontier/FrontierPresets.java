package org.privface.evaluation.frontier;

import static org.privface.evaluation.Figures.fmt;
import static org.privface.evaluation.Figures.mean;
import static org.privface.evaluation.Figures.sd;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.privface.evaluation.frontier.FrontierFamilies.Classifier;
import org.privface.evaluation.frontier.FrontierFamilies.Config;
import org.privface.evaluation.frontier.FrontierFamilies.Pick;

/** The frontier's presets: per ε band, the configuration a deployment should pick, chosen on validation only. */
final class FrontierPresets {
    /** Preset bands: the largest per-face ε a deployment is willing to spend per query face. */
    static final double[] BANDS = {1, 10, 20, 100, 1000};
    /** A preset takes the smallest ε whose validation F1 is this close to the best in its band. */
    static final double PRESET_TOLERANCE = 0.01;

    /** Scores a configuration with a classifier on one seed's test split (the fold type is the caller's). */
    @FunctionalInterface
    interface Scorer<F> {
        double score(F f, Config c, double eps, Classifier cl, int seed);
    }

    private FrontierPresets() {
    }

    /**
     * Per band, on validation F1 only: the smallest grid ε in the band whose validation F1 (of the
     * best family, mean over seeds) is within {@link #PRESET_TOLERANCE} of the band's best, so a
     * preset never spends budget that buys nothing; then the configuration the validation picked
     * most often there. Its F1 is measured as a fixed configuration on every seed's test split.
     */
    static <F> List<String[]> presets(double[] epsilons, Map<Double, Pick[]> bestAll, Map<Double, String[]> families,
                                  List<F> folds, Map<String, Classifier> classifierOf, Scorer<F> scorer) {
        List<String[]> out = new ArrayList<>();
        for (double band : BANDS) {
            double[] inBand = Arrays.stream(epsilons).filter(e -> e <= band).toArray();
            if (inBand.length == 0) {
                continue;
            }
            double top = Arrays.stream(inBand).map(e -> meanValF1(bestAll.get(e))).max().orElseThrow();
            double eps = Arrays.stream(inBand).filter(e -> meanValF1(bestAll.get(e)) >= top - PRESET_TOLERANCE).min()
                    .orElseThrow();
            Pick[] p = bestAll.get(eps);
            String[] fam = families.get(eps);
            Map<String, Integer> votes = new LinkedHashMap<>();
            Map<String, Integer> at = new HashMap<>();
            for (int s = 0; s < p.length; s++) {
                String key = p[s].config().key() + "|" + fam[s];
                votes.merge(key, 1, Integer::sum);
                at.putIfAbsent(key, s);
            }
            String winner = votes.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
            Config c = p[at.get(winner)].config();
            Classifier cl = classifierOf.get(winner.split("\\|")[1]);
            double[] f1 = new double[folds.size()];
            for (int s = 0; s < folds.size(); s++) {
                F f = folds.get(s);
                f1[s] = scorer.score(f, c, eps, cl, s);
            }
            out.add(new String[] {"<=" + fmt(band), c.key() + "-" + cl.tag + "-r1", Integer.toString(c.space()
                    .released()), fmt(eps), c.delta() == 0 ? "0" : fmt(c.delta()), String.format(Locale.ROOT, "%.4f",
                    mean(f1)), String.format(Locale.ROOT, "%.4f", sd(f1))});
        }
        return out;
    }

    private static double meanValF1(Pick[] p) {
        return Arrays.stream(p).mapToDouble(Pick::valF1).average().orElse(Double.NaN);
    }
}
