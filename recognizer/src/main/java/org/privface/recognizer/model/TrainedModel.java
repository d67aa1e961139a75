package org.privface.recognizer.model;

import java.time.Instant;
import java.util.List;

/**
 * A trained classifier for one {@link ModelKey}, with the label of each class index.
 *
 * @param version unique per training run; copied into every result
 * @param validationAccuracy accuracy on enrollments held out of a same-options training run; NaN if none
 */
public record TrainedModel(ModelKey key, String version, MlpModel mlp, List<String> labels, int trainingSize,
                           Instant trainedAt, double trainingAccuracy, double validationAccuracy, OpenSet openSet) {

    /** A face's decision: label and confidence, or an unknown (null label). */
    public record Decision(String label, float confidence) {
    }

    /**
     * The one place a prediction becomes an identity: the most probable class, unless its
     * probability is below {@code threshold} or the face lies outside that class' radius.
     */
    public Decision decide(float[] x, float[] proba, double threshold, double margin) {
        int best = 0;
        for (int c = 1; c < proba.length; c++) {
            if (proba[c] > proba[best]) {
                best = c;
            }
        }
        float confidence = Math.max(0f, Math.min(1f, proba[best]));
        boolean known = confidence >= threshold && (openSet == null || openSet.accept(x, best, margin) >= 0);
        return new Decision(known ? labels.get(best) : null, confidence);
    }
}
