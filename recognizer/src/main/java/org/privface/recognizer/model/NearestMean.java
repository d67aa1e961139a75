package org.privface.recognizer.model;

import java.util.Arrays;

/**
 * Nearest class mean by cosine: the class means of the enrollment releases, normalised; a query
 * goes to the class whose mean has the largest cosine with it. The recognizer serves it when it
 * beats the MLP on held-out enrollments ({@link ModelChoice}); the evaluation scores releases with
 * the same class.
 */
public record NearestMean(double[][] means) {

    public static NearestMean fit(double[][] x, int[] y, int classes) {
        return ofCentroids(classMeans(x, y, classes));
    }

    /** From unnormalised class means (e.g. {@link OpenSet#centroids()}). */
    public static NearestMean ofCentroids(double[][] centroids) {
        double[][] m = new double[centroids.length][];
        for (int c = 0; c < m.length; c++) {
            m[c] = centroids[c].clone();
            double n = Math.sqrt(Arrays.stream(m[c]).map(v -> v * v).sum());
            if (n > 0) {
                for (int j = 0; j < m[c].length; j++) {
                    m[c][j] /= n;
                }
            }
        }
        return new NearestMean(m);
    }

    /** Mean of each class's rows (zero for a class without rows); the privacy library's one copy. */
    public static double[][] classMeans(double[][] x, int[] y, int classes) {
        return org.privface.privacy.fisher.FisherBasis.classMeans(x, y, classes);
    }

    /** Cosine of the query to each class mean (the query normalised). */
    public double[] similarities(double[] q) {
        double n = Math.sqrt(Arrays.stream(q).map(v -> v * v).sum());
        double[] s = new double[means.length];
        for (int c = 0; c < means.length; c++) {
            double dot = 0;
            for (int j = 0; j < q.length; j++) {
                dot += q[j] * means[c][j];
            }
            s[c] = n == 0 ? 0 : dot / n;
        }
        return s;
    }

    public int predict(double[] q) {
        return argmax(similarities(q));
    }

    public int[] predict(double[][] q) {
        return Arrays.stream(q).mapToInt(this::predict).toArray();
    }

    static int argmax(double[] s) {
        int best = 0;
        for (int c = 1; c < s.length; c++) {
            if (s[c] > s[best]) {
                best = c;
            }
        }
        return best;
    }

    /** The MLP's input type as doubles. */
    public static double[][] doubles(float[][] x) {
        double[][] d = new double[x.length][];
        for (int i = 0; i < x.length; i++) {
            d[i] = doubles(x[i]);
        }
        return d;
    }

    public static double[] doubles(float[] x) {
        double[] d = new double[x.length];
        for (int j = 0; j < x.length; j++) {
            d[j] = x[j];
        }
        return d;
    }
}
