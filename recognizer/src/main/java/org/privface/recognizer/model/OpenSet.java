package org.privface.recognizer.model;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Rejects faces of people who were never enrolled. A softmax always spreads its mass over the
 * enrolled classes, so its confidence alone let 17 of 20 strangers through in our tests. This adds
 * a distance test: each class keeps the centroid of its enrollment vectors and a radius, the
 * given quantile of those vectors' distances to it. A face farther than margin × radius from the
 * centroid of its predicted class is unknown.
 */
public record OpenSet(double[][] centroids, double[] radii) {
    static final double RADIUS_QUANTILE = 0.95;

    public static OpenSet fit(float[][] x, int[] y, int classes) {
        double[][] c = NearestMean.classMeans(NearestMean.doubles(x), y, classes);
        int[] n = new int[classes];
        for (int label : y) {
            n[label]++;
        }
        double[] radii = new double[classes];
        for (int k = 0; k < classes; k++) {
            double[] dist = new double[n[k]];
            int m = 0;
            for (int i = 0; i < x.length; i++) {
                if (y[i] == k) {
                    dist[m++] = distance(x[i], c[k]);
                }
            }
            Arrays.sort(dist);
            radii[k] = dist.length == 0 ? 0 : dist[(int) Math.floor(RADIUS_QUANTILE * (dist.length - 1))];
        }
        return new OpenSet(c, radii);
    }

    /** Distance to the class's centroid in class radii; the recognizer's MLP accepts below a calibrated ratio. */
    public double ratio(float[] x, int predicted) {
        double r = radii[predicted];
        return r > 0 ? distance(x, centroids[predicted]) / r : Double.POSITIVE_INFINITY;
    }

    /** The class index if the face is close enough to it, else -1. margin ≤ 0 switches the test off. */
    public int accept(float[] x, int predicted, double margin) {
        if (margin <= 0) {
            return predicted;
        }
        return distance(x, centroids[predicted]) <= margin * radii[predicted] ? predicted : -1;
    }

    /**
     * The margin that lets at most a share {@code fpir} of strangers through: each stranger is
     * accepted when its distance to its predicted class's centroid is at most margin × radius, so
     * the margin is just below the (⌊fpir·n⌋ + 1)-th smallest of their distance/radius ratios.
     * Calibrate on strangers released the same way as queries (e.g. public faces of people who
     * are never enrolled), never on the enrolled people.
     *
     * @param strangers  released vectors of people who are not enrolled
     * @param predicted  the class the model predicts for each
     */
    public double marginForFpir(float[][] strangers, int[] predicted, double fpir) {
        if (strangers.length == 0 || strangers.length != predicted.length) {
            throw new IllegalArgumentException("need one prediction per stranger, and at least one stranger");
        }
        if (!(fpir >= 0 && fpir < 1)) {
            throw new IllegalArgumentException("FPIR must be in [0, 1), was " + fpir);
        }
        double[] ratio = new double[strangers.length];
        for (int i = 0; i < strangers.length; i++) {
            ratio[i] = ratio(strangers[i], predicted[i]);
        }
        Arrays.sort(ratio);
        int allowed = (int) Math.floor(fpir * strangers.length);
        // Accepting ratio ≤ margin: the margin stays below the (allowed + 1)-th smallest ratio, by more
        // than accept()'s rounding of margin × radius.
        double cut = ratio[allowed];
        return Math.max(Double.MIN_VALUE, cut * (1 - 1e-9));
    }

    static double distance(float[] x, double[] c) {
        double s = 0;
        for (int j = 0; j < c.length; j++) {
            double t = x[j] - c[j];
            s += t * t;
        }
        return Math.sqrt(s);
    }

    /** One line per class: radius then centroid, for model.properties. */
    String encode(int k) {
        return radii[k] + ";" + Arrays.stream(centroids[k]).mapToObj(v -> String.format(Locale.ROOT, "%.9g", v))
                .collect(Collectors.joining(","));
    }

    static OpenSet decode(String[] lines) {
        double[][] c = new double[lines.length][];
        double[] r = new double[lines.length];
        for (int k = 0; k < lines.length; k++) {
            String[] parts = lines[k].split(";");
            r[k] = Double.parseDouble(parts[0]);
            c[k] = Arrays.stream(parts[1].split(",")).mapToDouble(Double::parseDouble).toArray();
        }
        return new OpenSet(c, r);
    }
}
