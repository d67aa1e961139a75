package org.privface.privacy.latent;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.privface.privacy.EigenBasis;

/**
 * The k-Same family of face de-identification (Newton, Sweeney, Malin 2005; Gross et al.,
 * k-Same-M, 2006), as baselines for the DP mechanisms. Greedy k-Same: take the first face not yet
 * used, gather its k − 1 nearest unused faces, replace each member by the cluster's average; the
 * last cluster absorbs any remainder below 2k, so every cluster has between k and 2k − 1 members.
 *
 * <p>Guarantee, stated per variant: a face recogniser that matches a de-identified face against
 * the original set can do no better than 1/k, because each output is shared by at least k
 * originals (k-anonymity of the output set). This is not differential privacy: the output depends
 * deterministically on the whole set, and it holds only for a set de-identified together.
 */
public final class KSame {
    /** Where faces are averaged and distances taken. */
    public enum Variant {
        /** Pixels: distance and average in pixel space. */
        PIXEL,
        /** Eigen: distance and average in eigenface coordinates, decoded by the basis. */
        EIGEN,
        /**
         * k-Same-M "lite": distance on eigenvalue-whitened coordinates (the model's own scale, as
         * an active appearance model's parameters are), averaged in model space. Without landmarks
         * this model has appearance only, no shape: hence "lite".
         */
        MODEL_LITE
    }

    /** The de-identified faces, in input order, and the cluster each face joined. */
    public record Result(double[][] faces, int[] cluster, int clusters) {
    }

    private KSame() {
    }

    public static Result apply(double[][] faces, int k, Variant variant, EigenBasis basis) {
        int n = faces.length;
        if (k < 1 || k > n) {
            throw new IllegalArgumentException("k must be in [1, " + n + "], was " + k);
        }
        double[][] space = new double[n][];
        for (int i = 0; i < n; i++) {
            space[i] = switch (variant) {
                case PIXEL -> faces[i];
                case EIGEN -> basis.project(faces[i]);
                case MODEL_LITE -> whiten(basis.project(faces[i]), basis.eigenvalues());
            };
        }
        int[] cluster = new int[n];
        Arrays.fill(cluster, -1);
        List<List<Integer>> clusters = new ArrayList<>();
        int remaining = n;
        for (int seed = 0; seed < n && remaining > 0; seed++) {
            if (cluster[seed] >= 0) {
                continue;
            }
            List<Integer> members = new ArrayList<>();
            if (remaining < 2 * k) {
                for (int i = 0; i < n; i++) {
                    if (cluster[i] < 0) {
                        members.add(i);
                    }
                }
            } else {
                members.add(seed);
                members.addAll(nearest(space, cluster, seed, k - 1));
            }
            for (int m : members) {
                cluster[m] = clusters.size();
            }
            remaining -= members.size();
            clusters.add(members);
        }
        double[][] out = new double[n][];
        for (List<Integer> members : clusters) {
            double[] avg = new double[space[members.get(0)].length];
            for (int m : members) {
                for (int j = 0; j < avg.length; j++) {
                    avg[j] += space[m][j] / members.size();
                }
            }
            double[] face = switch (variant) {
                case PIXEL -> avg;
                case EIGEN -> basis.reconstruct(avg);
                case MODEL_LITE -> basis.reconstruct(unwhiten(avg, basis.eigenvalues()));
            };
            for (int m : members) {
                out[m] = face.clone();
            }
        }
        return new Result(out, cluster, clusters.size());
    }

    private static List<Integer> nearest(double[][] space, int[] cluster, int seed, int count) {
        List<Integer> free = new ArrayList<>();
        for (int i = 0; i < space.length; i++) {
            if (i != seed && cluster[i] < 0) {
                free.add(i);
            }
        }
        double[] dist = new double[space.length];
        for (int i : free) {
            double d = 0;
            for (int j = 0; j < space[i].length; j++) {
                double t = space[i][j] - space[seed][j];
                d += t * t;
            }
            dist[i] = d;
        }
        free.sort((a, b) -> a.equals(b) ? 0 : dist[a] != dist[b] ? Double.compare(dist[a], dist[b]) : Integer.compare(a, b));
        return free.subList(0, count);
    }

    private static double[] whiten(double[] c, double[] eig) {
        double[] w = new double[c.length];
        for (int i = 0; i < c.length; i++) {
            w[i] = c[i] / Math.sqrt(eig[i]);
        }
        return w;
    }

    private static double[] unwhiten(double[] w, double[] eig) {
        double[] c = new double[w.length];
        for (int i = 0; i < w.length; i++) {
            c[i] = w[i] * Math.sqrt(eig[i]);
        }
        return c;
    }
}
