package org.privface.privacy.rdp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.junit.jupiter.api.Test;
import org.privface.privacy.CoinTree;
import org.privface.privacy.SpentEpsilon;

class RdpScalesTest {
    private static double[] weights(int m, long seed) {
        Random r = new Random(seed);
        double[] a = new double[m];
        for (int i = 0; i < m; i++) {
            a[i] = (0.05 + r.nextDouble()) * (1 << r.nextInt(4));
        }
        return a;
    }

    @Test
    void inclusionProbabilitiesAreTheTruncatedGeometricTail() {
        double p = 0.02;
        int m = 300;
        double[] q = RdpScales.inclusion(p, m);
        assertEquals(1.0, q[0], 1e-12, "rank 1 is always noised");
        double expectedK = 0;
        for (int r = 0; r < m; r++) {
            expectedK += q[r];
            if (r > 0) {
                assertTrue(q[r] < q[r - 1]);
            }
        }
        // E[K] for K ~ Geometric(p) truncated to [1, m], computed directly from its pmf.
        double norm = 1 - Math.pow(1 - p, m);
        double direct = 0;
        for (int k = 1; k <= m; k++) {
            direct += k * p * Math.pow(1 - p, k - 1) / norm;
        }
        assertEquals(direct, expectedK, 1e-9);
    }

    @Test
    void drawnKFollowsTheInclusionProbabilities() {
        double p = 0.05;
        int m = 40;
        double[] q = RdpScales.inclusion(p, m);
        Random r = new Random(7);
        int n = 200_000;
        int[] atLeast = new int[m + 2];
        for (int i = 0; i < n; i++) {
            int k = RdpScales.drawK(p, m, 1 - r.nextDouble());
            assertTrue(k >= 1 && k <= m);
            for (int j = 1; j <= k; j++) {
                atLeast[j]++;
            }
        }
        for (int rank = 1; rank <= m; rank += 7) {
            double se = Math.sqrt(q[rank - 1] * (1 - q[rank - 1]) / n);
            assertEquals(q[rank - 1], atLeast[rank] / (double) n, 5 * se + 1e-9, "P(K >= " + rank + ")");
        }
    }

    /** A random M_F × m weight matrix with a few near-zero weights, as eigenfaces have. */
    private static double[][] matrix(int nf, int m, long seed) {
        Random r = new Random(seed);
        double[][] w = new double[nf][m];
        for (int i = 0; i < nf; i++) {
            for (int k = 0; k < m; k++) {
                w[i][k] = r.nextGaussian() * (k % 17 == 0 ? 1e-4 : 0.1);
            }
        }
        return w;
    }

    @Test
    void paperWeightsAreTheUnnormalisedGeometricTail() {
        double p = 0.02;
        int mP = 700;
        double[] c = RdpScales.paperWeights(p, mP, mP);
        double[] q = RdpScales.inclusion(p, mP);
        double sum = 0;
        for (int k = 0; k < mP; k++) {
            sum += c[k];
            assertEquals((1 - p) * (1 - Math.pow(1 - p, mP)) * q[k], c[k], 1e-12, "c_" + (k + 1));
        }
        assertEquals(sum, RdpScales.paperWeightSum(p, mP), 1e-9);
        assertEquals(0.98 - Math.pow(0.98, mP + 1), c[0], 1e-15);
    }

    @Test
    void plainRescaledNaAndLmgdSpendEq3Exactly() {
        double p = 0.02;
        int m = 300;
        double[][] w = matrix(8, m, 7);
        double[] delta = weights(8, 8);
        double[] c = RdpScales.paperWeights(p, m, m);
        for (double eps : new double[] {0.2, 1.0}) {
            double[] plain = new double[m];
            java.util.Arrays.fill(plain, RdpScales.plain(w, delta, c, eps));
            assertEquals(eps, RdpScales.epsilon(w, delta, c, plain), 1e-12 * eps, "plain RDP");
            double[] na = RdpScales.naPrinted(w, delta, p, m, m, eps);
            assertEquals(eps, RdpScales.epsilon(w, delta, c, RdpScales.rescaled(w, delta, c, na, eps)), 1e-12 * eps);
            RdpScales.Lmgd r = RdpScales.lmgd(w, delta, c, eps, 0.05, 1e-14, 2000);
            assertEquals(eps, RdpScales.epsilon(w, delta, c, r.scales()), 1e-9 * eps, "LMGD");
            assertTrue(r.iterations() > 1);
            // LMGD minimises Eq. 4's cost from plain RDP's start, so it ends below it.
            assertTrue(cost(c, r.scales()) < cost(c, plain), cost(c, r.scales()) + " vs " + cost(c, plain));
        }
    }

    @Test
    void printedNaSpendsAtMostEpsilonPerFeature() {
        // Each feature's term of Eq. 3 is at most ε0 under the printed NA scales, with equality for one feature.
        double p = 0.02;
        int m = 200;
        double[] c = RdpScales.paperWeights(p, m, m);
        double[][] one = matrix(1, m, 9);
        double[] delta = {0.7};
        assertEquals(0.3, RdpScales.epsilon(one, delta, c, RdpScales.naPrinted(one, delta, p, m, m, 0.3)), 1e-12);
        double[][] w = matrix(6, m, 10);
        double[] d6 = weights(6, 11);
        double[] b = RdpScales.naPrinted(w, d6, p, m, m, 0.3);
        for (int i = 0; i < 6; i++) {
            double e = RdpScales.epsilon(new double[][] {w[i]}, new double[] {d6[i]}, c, b);
            assertTrue(e <= 0.3 * (1 + 1e-12), "feature " + i + " spends " + e);
        }
    }

    private static double cost(double[] c, double[] b) {
        double s = 0;
        for (int k = 0; k < c.length; k++) {
            s += c[k] * b[k] * b[k];
        }
        return s;
    }

    @Test
    void lmgdStepMustBeInThePapersRange() {
        double[][] w = matrix(2, 10, 3);
        double[] d = {1, 1};
        double[] c = RdpScales.paperWeights(0.02, 10, 10);
        assertThrows(IllegalArgumentException.class, () -> RdpScales.lmgd(w, d, c, 1, 0.5, 1e-9, 10));
        assertThrows(IllegalArgumentException.class, () -> RdpScales.lmgd(w, d, c, 1, 0.001, 1e-9, 10));
    }

    @Test
    void strictScalesSpendExactlyEpsilon() {
        double[] delta = weights(64, 4);
        double[] omega = weights(64, 5);
        double[] b = RdpScales.strict(delta, omega, 3.0);
        double cost = 0;
        for (int k = 0; k < b.length; k++) {
            cost += delta[k] / b[k];
        }
        assertEquals(3.0, cost, 1e-12);
        assertThrows(IllegalArgumentException.class, () -> RdpScales.strict(delta, omega, Double.NaN));
    }

    /**
     * Over random cases the exact Σ Δ_k/b_k (rationals of the doubles) is at most ε and at most
     * the stated bound. (The closed form without the widening exceeded ε in 149 of these 300 cases,
     * by up to 1.7e-14, measured before issue 34's fix.)
     */
    @Test
    void strictScalesSpendAtMostEpsilonExactlyAndTheStatedBoundCoversTheSum() {
        java.util.SplittableRandom random = new java.util.SplittableRandom(34);
        double worstAfter = Double.NEGATIVE_INFINITY;
        int cases = 300;
        for (int i = 0; i < cases; i++) {
            int m = 1 + random.nextInt(128);
            double[] delta = new double[m];
            double[] omega = new double[m];
            for (int k = 0; k < m; k++) {
                delta[k] = 0.01 + random.nextDouble() * 5;
                omega[k] = 1e-4 + random.nextDouble();
            }
            double eps = 0.1 + random.nextDouble() * 50;
            double[] b = RdpScales.strict(delta, omega, eps);
            CoinTree.Q exact = sum(delta, b);
            CoinTree.Q requested = CoinTree.exact(eps);
            double stated = SpentEpsilon.quotientSumUp(delta, b);
            assertTrue(exact.compareTo(requested) <= 0, "case " + i + ": Σ Δ/b = " + exact + " > ε " + eps);
            assertTrue(exact.compareTo(CoinTree.exact(stated)) <= 0 && stated <= eps, "case " + i);
            worstAfter = Math.max(worstAfter, exact.minus(requested).decimal().doubleValue());
        }
        System.out.printf(java.util.Locale.ROOT, "[rdp-strict] %d random cases: the worst Σ Δ/b − ε is %.3g (never above)%n",
                cases, worstAfter);
    }

    private static CoinTree.Q sum(double[] delta, double[] b) {
        CoinTree.Q s = CoinTree.Q.ZERO;
        for (int k = 0; k < b.length; k++) {
            s = s.plus(CoinTree.exact(delta[k]).over(CoinTree.exact(b[k])));
        }
        return s;
    }

}
