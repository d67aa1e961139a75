package org.privface.evaluation.frontier;

import java.util.Arrays;
import java.util.SplittableRandom;

import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.CommonOps_DDRM;
import org.privface.privacy.fisher.FisherBasis;

/** The linear algebra and the classifiers {@link FrontierEvaluation} scores releases with. */
final class FrontierClassifiers {
    /** Noisy enrollment and query releases of one configuration, plus what the recognizer knows of the noise. */
    record Released(double[][] fit, int[] yFit, double[][] eval, double noiseVariance, int codes) {
    }

    private FrontierClassifiers() {
    }

    static double[][] fisherDirections(double[][] x, int[] y, int classes, int k) {
        return FisherBasis.directions(x, y, classes, k);
    }

    /** Gaussian classifier with shared covariance and class priors (linear discriminant analysis). */
    static int[] lda(double[][] fit, int[] y, double[][] eval, int classes) {
        int n = fit.length;
        int d = fit[0].length;
        double[][] means = classMeans(fit, y, classes);
        int[] counts = new int[classes];
        DMatrixRMaj cov = new DMatrixRMaj(d, d);
        for (int i = 0; i < n; i++) {
            counts[y[i]]++;
            double[] r = new double[d];
            for (int j = 0; j < d; j++) {
                r[j] = fit[i][j] - means[y[i]][j];
            }
            FisherBasis.addOuter(cov, r, 1.0);
        }
        int present = (int) Arrays.stream(counts).filter(c -> c > 0).count();
        CommonOps_DDRM.scale(1.0 / Math.max(1, n - present), cov);
        double ridge = 1e-6 * CommonOps_DDRM.trace(cov) / d + 1e-300;
        for (int j = 0; j < d; j++) {
            cov.add(j, j, ridge);
        }
        DMatrixRMaj inv = new DMatrixRMaj(d, d);
        if (!CommonOps_DDRM.invert(cov, inv)) {
            throw new IllegalStateException("pooled covariance is singular");
        }
        double[][] coef = new double[classes][d];
        double[] bias = new double[classes];
        for (int c = 0; c < classes; c++) {
            if (counts[c] == 0) {
                bias[c] = Double.NEGATIVE_INFINITY;
                continue;
            }
            for (int a = 0; a < d; a++) {
                double s = 0;
                for (int b = 0; b < d; b++) {
                    s += inv.get(a, b) * means[c][b];
                }
                coef[c][a] = s;
            }
            double q = 0;
            for (int a = 0; a < d; a++) {
                q += coef[c][a] * means[c][a];
            }
            bias[c] = -0.5 * q + Math.log(counts[c] / (double) n);
        }
        int[] out = new int[eval.length];
        for (int i = 0; i < eval.length; i++) {
            double best = Double.NEGATIVE_INFINITY;
            for (int c = 0; c < classes; c++) {
                double s = bias[c];
                for (int a = 0; a < d; a++) {
                    s += coef[c][a] * eval[i][a];
                }
                if (s > best) {
                    best = s;
                    out[i] = c;
                }
            }
        }
        return out;
    }

    /** Nearest class mean; weights (per coordinate, squared) may be null. */
    static int[] ncm(double[][] fit, int[] y, double[][] eval, int classes, double[] weights) {
        double[][] means = classMeans(fit, y, classes);
        boolean[] present = new boolean[classes];
        for (int label : y) {
            present[label] = true;
        }
        int[] out = new int[eval.length];
        for (int i = 0; i < eval.length; i++) {
            double best = Double.POSITIVE_INFINITY;
            for (int c = 0; c < classes; c++) {
                if (!present[c]) {
                    continue;
                }
                double s = 0;
                for (int a = 0; a < eval[i].length; a++) {
                    double v = eval[i][a] - means[c][a];
                    s += (weights == null ? 1 : weights[a]) * v * v;
                }
                if (s < best) {
                    best = s;
                    out[i] = c;
                }
            }
        }
        return out;
    }

    /**
     * Wiener de-noising prior: each query coordinate is shrunk towards the enrollment mean by
     * h = s/(s + v), with v the (known) noise variance and s = max(total − v, 0) the face variance
     * estimated from the noisy enrollments; then nearest class mean.
     */
    static int[] wiener(Released r, int classes) {
        double[][] fit = r.fit();
        int d = fit[0].length;
        double[] mean = new double[d];
        for (double[] row : fit) {
            for (int j = 0; j < d; j++) {
                mean[j] += row[j] / fit.length;
            }
        }
        double[] h = new double[d];
        for (int j = 0; j < d; j++) {
            double total = 0;
            for (double[] row : fit) {
                total += (row[j] - mean[j]) * (row[j] - mean[j]) / (fit.length - 1);
            }
            double signal = Math.max(0, total - r.noiseVariance());
            h[j] = signal / (signal + r.noiseVariance() + 1e-300);
        }
        double[][] eval = new double[r.eval().length][d];
        for (int i = 0; i < eval.length; i++) {
            for (int j = 0; j < d; j++) {
                eval[i][j] = mean[j] + h[j] * (r.eval()[i][j] - mean[j]);
            }
        }
        return ncm(fit, r.yFit(), eval, classes, null);
    }

    /** The class most often seen with each noisy code among the noisy enrollments (ties: the larger class). */
    static int[] table(Released r, int classes) {
        double[][] counts = new double[r.codes()][classes];
        double[] prior = new double[classes];
        for (int i = 0; i < r.fit().length; i++) {
            counts[(int) r.fit()[i][0]][r.yFit()[i]]++;
            prior[r.yFit()[i]]++;
        }
        int[] out = new int[r.eval().length];
        for (int i = 0; i < out.length; i++) {
            double[] row = counts[(int) r.eval()[i][0]];
            double best = Double.NEGATIVE_INFINITY;
            for (int c = 0; c < classes; c++) {
                // A vanishing prior term breaks ties (and empty rows) towards the larger class.
                double s = row[c] + 1e-9 * prior[c];
                if (s > best) {
                    best = s;
                    out[i] = c;
                }
            }
        }
        return out;
    }

    static double[][] classMeans(double[][] x, int[] y, int classes) {
        return FisherBasis.classMeans(x, y, classes);
    }

    /** k-means++ then Lloyd; the seed only shapes the public codebook, never the noise. */
    static double[][] kmeans(double[][] x, int k, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int n = x.length;
        double[][] centres = new double[k][];
        centres[0] = x[random.nextInt(n)].clone();
        double[] dist = new double[n];
        Arrays.fill(dist, Double.POSITIVE_INFINITY);
        for (int c = 1; c < k; c++) {
            double total = 0;
            for (int i = 0; i < n; i++) {
                dist[i] = Math.min(dist[i], squared(x[i], centres[c - 1]));
                total += dist[i];
            }
            double u = random.nextDouble() * total;
            int pick = n - 1;
            for (int i = 0; i < n; i++) {
                u -= dist[i];
                if (u <= 0) {
                    pick = i;
                    break;
                }
            }
            centres[c] = x[pick].clone();
        }
        for (int it = 0; it < 30; it++) {
            int[] a = nearest(x, centres);
            double[][] sums = new double[k][x[0].length];
            int[] counts = new int[k];
            for (int i = 0; i < n; i++) {
                counts[a[i]]++;
                for (int j = 0; j < x[i].length; j++) {
                    sums[a[i]][j] += x[i][j];
                }
            }
            for (int c = 0; c < k; c++) {
                if (counts[c] > 0) {
                    for (int j = 0; j < sums[c].length; j++) {
                        sums[c][j] /= counts[c];
                    }
                    centres[c] = sums[c];
                }
            }
        }
        return centres;
    }

    static int[] nearest(double[][] x, double[][] centres) {
        return nearest(x, centres, new double[centres.length]);
    }

    /** Index of the centre minimising squared distance + bias. */
    static int[] nearest(double[][] x, double[][] centres, double[] bias) {
        int[] out = new int[x.length];
        for (int i = 0; i < x.length; i++) {
            double best = Double.POSITIVE_INFINITY;
            for (int c = 0; c < centres.length; c++) {
                double d = squared(x[i], centres[c]) + bias[c];
                if (d < best) {
                    best = d;
                    out[i] = c;
                }
            }
        }
        return out;
    }

    private static double squared(double[] a, double[] b) {
        double s = 0;
        for (int j = 0; j < a.length; j++) {
            s += (a[j] - b[j]) * (a[j] - b[j]);
        }
        return s;
    }

    static double[] norms(double[][] x, boolean l1) {
        return Arrays.stream(x).mapToDouble(row -> {
            double s = 0;
            for (double v : row) {
                s += l1 ? Math.abs(v) : v * v;
            }
            return l1 ? s : Math.sqrt(s);
        }).toArray();
    }

    /** The same quantile rule as EigenBasis uses for its clip radii. */
    static double quantile(double[] values, double q) {
        double[] v = values.clone();
        Arrays.sort(v);
        return v[(int) Math.floor(q * (v.length - 1))];
    }

    /** Radial projection onto the L1 or L2 ball of the radius, a hair inside so rounding cannot leave it. */
    static double[][] clip(double[][] x, double radius, boolean l1) {
        double[] n = norms(x, l1);
        double[][] out = new double[x.length][];
        for (int i = 0; i < x.length; i++) {
            out[i] = x[i].clone();
            if (n[i] > radius) {
                double s = radius / n[i] * (1 - 0x1.0p-50);
                for (int j = 0; j < out[i].length; j++) {
                    out[i][j] *= s;
                }
            }
        }
        return out;
    }

    static double[][] truncate(double[][] x, int d) {
        return Arrays.stream(x).map(r -> Arrays.copyOf(r, d)).toArray(double[][]::new);
    }

    static double[][] scaled(double[][] x, double[] scale) {
        return Arrays.stream(x).map(r -> {
            double[] o = new double[scale.length];
            for (int j = 0; j < o.length; j++) {
                o[j] = r[j] * scale[j];
            }
            return o;
        }).toArray(double[][]::new);
    }

    static double[][] multiply(double[][] x, double[][] w) {
        int k = w[0].length;
        return Arrays.stream(x).map(r -> {
            double[] o = new double[k];
            for (int j = 0; j < r.length; j++) {
                for (int c = 0; c < k; c++) {
                    o[c] += r[j] * w[j][c];
                }
            }
            return o;
        }).toArray(double[][]::new);
    }
}
