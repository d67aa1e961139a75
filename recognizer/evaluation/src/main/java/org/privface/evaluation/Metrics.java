package org.privface.evaluation;

/** Weighted-average precision, recall and F1 (weights = class support), as scikit-learn reports them. */
public record Metrics(double precision, double recall, double f1, double accuracy) {

    public static Metrics weighted(int[] truth, int[] predicted, int classes) {
        if (truth.length != predicted.length || truth.length == 0) {
            throw new IllegalArgumentException("need equally long, non-empty label arrays");
        }
        long[] tp = new long[classes];
        long[] fp = new long[classes];
        long[] support = new long[classes];
        long correct = 0;
        for (int i = 0; i < truth.length; i++) {
            support[truth[i]]++;
            if (truth[i] == predicted[i]) {
                tp[truth[i]]++;
                correct++;
            } else {
                fp[predicted[i]]++;
            }
        }
        double p = 0;
        double r = 0;
        double f = 0;
        for (int c = 0; c < classes; c++) {
            if (support[c] == 0) {
                continue;
            }
            double w = support[c] / (double) truth.length;
            double pc = tp[c] + fp[c] == 0 ? 0 : tp[c] / (double) (tp[c] + fp[c]);
            double rc = tp[c] / (double) support[c];
            double fc = pc + rc == 0 ? 0 : 2 * pc * rc / (pc + rc);
            p += w * pc;
            r += w * rc;
            f += w * fc;
        }
        return new Metrics(p, r, f, correct / (double) truth.length);
    }
}
