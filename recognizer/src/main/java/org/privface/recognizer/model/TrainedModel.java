package org.privface.recognizer.model;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A trained model version for one {@link ModelKey}, with the label of each class index. It holds
 * both models, the MLP and the nearest class mean (the normalised {@link OpenSet} centroids), and
 * serves the one {@link ModelChoice} picked.
 *
 * @param version     unique per training run; copied into every result
 * @param calibration the open-set threshold set on public strangers; null when none were given
 *                    (then the fixed {@code recognizer.open-set-margin} rule applies)
 */
public record TrainedModel(ModelKey key, String version, MlpModel mlp, List<String> labels, int trainingSize,
                           Instant trainedAt, double trainingAccuracy, ModelChoice choice, OpenSet openSet,
                           OpenSetCalibration calibration) {

    /** A face's decision: label and confidence, or an unknown (null label). */
    public record Decision(String label, float confidence) {
    }

    /**
     * The served model's view of a batch: its class, its confidence (MLP probability or cosine),
     * and the open-set score the calibrated threshold applies to (the cosine to the class mean, or
     * minus the distance to the MLP's class centroid in class radii).
     */
    public record Scores(int[] predicted, float[] confidence, double[] openScore) {
    }

    /** Accuracy of the served model on held-out enrollments; NaN if none were held out. */
    public double validationAccuracy() {
        return choice.servedAccuracy();
    }

    public Scores scores(float[][] x) {
        int[] best = new int[x.length];
        float[] conf = new float[x.length];
        double[] open = new double[x.length];
        if (choice.served() == ModelChoice.Served.NCM) {
            NearestMean ncm = NearestMean.ofCentroids(openSet.centroids());
            for (int i = 0; i < x.length; i++) {
                double[] s = ncm.similarities(NearestMean.doubles(x[i]));
                best[i] = NearestMean.argmax(s);
                open[i] = s[best[i]];
                conf[i] = (float) Math.max(0, Math.min(1, s[best[i]]));
            }
            return new Scores(best, conf, open);
        }
        float[][] proba = mlp.predictProba(x);
        for (int i = 0; i < x.length; i++) {
            for (int c = 1; c < proba[i].length; c++) {
                if (proba[i][c] > proba[i][best[i]]) {
                    best[i] = c;
                }
            }
            conf[i] = Math.max(0f, Math.min(1f, proba[i][best[i]]));
            open[i] = openSet == null ? 0 : -openSet.ratio(x[i], best[i]);
        }
        return new Scores(best, conf, open);
    }

    /**
     * The one place a prediction becomes an identity: the served model's class, unless the MLP's
     * probability is below {@code threshold} or the face fails the open-set test: the calibrated
     * threshold where there is one, else {@code margin} × the class radius.
     */
    public List<Decision> decide(float[][] x, double threshold, double margin) {
        Scores s = scores(x);
        List<Decision> out = new ArrayList<>(x.length);
        for (int i = 0; i < x.length; i++) {
            int best = s.predicted()[i];
            boolean confident = choice.served() == ModelChoice.Served.NCM || s.confidence()[i] >= threshold;
            boolean inside = calibration != null ? s.openScore()[i] > calibration.threshold()
                    : openSet == null || openSet.accept(x[i], best, margin) >= 0;
            out.add(new Decision(confident && inside ? labels.get(best) : null, s.confidence()[i]));
        }
        return out;
    }
}
