package org.privface.recognizer.model;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * Which model a site's model version serves: its MLP or the nearest class mean, whichever names
 * more held-out enrollment releases correctly. Every {@code every}-th enrollment of each person
 * with at least {@code every} of them is held out (a stratified split); both models are fitted on
 * the rest, with the served MLP's options, and scored on the held-out ones. The served models are
 * then fitted on everything. On EMBEDDING releases the MLP ranged from 0.005 F1 above to 0.04
 * below the nearest class mean (lfw139, ε 20), so neither is served by default.
 *
 * @param mlpAccuracy held-out accuracy of the MLP; NaN when nothing could be held out
 * @param heldOut     held-out enrollments both were scored on
 * @param forced      the setting {@code recognizer.serve} chose, not the scores
 */
public record ModelChoice(Served served, double mlpAccuracy, double ncmAccuracy, int heldOut, boolean forced) {
    public enum Served {
        MLP, NCM;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * @param serve {@code best}, {@code mlp} or {@code ncm} (recognizer.serve)
     * @param every hold out every n-th enrollment of a person; below 2 holds out nothing
     */
    public static ModelChoice measure(float[][] x, int[] y, int classes, MlpOptions options, int every, String serve) {
        Served forced = switch (serve) {
            case "best" -> null;
            case "mlp" -> Served.MLP;
            case "ncm" -> Served.NCM;
            default -> throw new IllegalArgumentException("recognizer.serve must be best, mlp or ncm, was " + serve);
        };
        int[] count = new int[classes];
        for (int c : y) {
            count[c]++;
        }
        int[] seen = new int[classes];
        List<Integer> train = new ArrayList<>();
        List<Integer> held = new ArrayList<>();
        for (int i = 0; i < y.length; i++) {
            if (every >= 2 && count[y[i]] >= every && ++seen[y[i]] % every == 0) {
                held.add(i);
            } else {
                train.add(i);
            }
        }
        if (held.isEmpty()) {
            // Nothing to judge by: the MLP, as before this choice existed, unless forced.
            return new ModelChoice(forced == null ? Served.MLP : forced, Double.NaN, Double.NaN, 0, forced != null);
        }
        float[][] tx = train.stream().map(i -> x[i]).toArray(float[][]::new);
        int[] ty = train.stream().mapToInt(i -> y[i]).toArray();
        float[][] hx = held.stream().map(i -> x[i]).toArray(float[][]::new);
        int[] hy = held.stream().mapToInt(i -> y[i]).toArray();
        double mlp;
        try (MlpModel probe = new MlpTrainer().train(tx, ty, classes, options)) {
            mlp = accuracy(probe.predict(hx), hy);
        }
        double ncm = accuracy(NearestMean.fit(NearestMean.doubles(tx), ty, classes).predict(NearestMean.doubles(hx)), hy);
        // Ties go to the nearest class mean: no training randomness, nothing to overfit.
        Served best = mlp > ncm ? Served.MLP : Served.NCM;
        return new ModelChoice(forced == null ? best : forced, mlp, ncm, held.size(), forced != null);
    }

    /** The held-out accuracy of the served model. */
    public double servedAccuracy() {
        return served == Served.MLP ? mlpAccuracy : ncmAccuracy;
    }

    private static double accuracy(int[] predicted, int[] truth) {
        int ok = 0;
        for (int i = 0; i < truth.length; i++) {
            ok += predicted[i] == truth[i] ? 1 : 0;
        }
        return ok / (double) truth.length;
    }

    void store(Properties p) {
        p.setProperty("served", served.wireName());
        p.setProperty("servedForced", Boolean.toString(forced));
        p.setProperty("heldOutMlpAccuracy", Double.toString(mlpAccuracy));
        p.setProperty("heldOutNcmAccuracy", Double.toString(ncmAccuracy));
        p.setProperty("heldOutEnrollments", Integer.toString(heldOut));
    }

    static ModelChoice load(Properties p) {
        if (p.getProperty("served") == null) {
            // Versions written before the choice: the MLP, its old validation accuracy.
            return new ModelChoice(Served.MLP, Double.parseDouble(p.getProperty("validationAccuracy", "NaN")), Double.NaN,
                    0, false);
        }
        return new ModelChoice(Served.valueOf(p.getProperty("served").toUpperCase(Locale.ROOT)),
                Double.parseDouble(p.getProperty("heldOutMlpAccuracy")), Double.parseDouble(p.getProperty("heldOutNcmAccuracy")),
                Integer.parseInt(p.getProperty("heldOutEnrollments")), Boolean.parseBoolean(p.getProperty("servedForced")));
    }
}
