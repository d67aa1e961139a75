package org.privface.agent.privacy.rdp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.junit.jupiter.api.Test;

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

    @Test
    void naAndUniformMeetTheirBudgetsExactly() {
        double[] q = RdpScales.inclusion(0.02, 500);
        double[] a = weights(500, 1);
        double b = RdpScales.na(q, a, 0.4);
        double cost = 0;
        for (int r = 0; r < q.length; r++) {
            cost += q[r] * a[r] / b;
        }
        assertEquals(0.4, cost, 1e-12);
    }

    @Test
    void lmgdConvergesToTheLagrangeOptimumAndReportsIterations() {
        double[] q = RdpScales.inclusion(0.02, 500);
        double[] a = weights(500, 2);
        for (double eps : new double[] {0.2, 1.0}) {
            RdpScales.Lmgd r = RdpScales.lmgd(q, a, eps, 0.05, 1e-12, 50_000);
            double[] exact = RdpScales.lagrange(q, a, eps);
            assertTrue(r.converged(), "converged, F = " + r.residual());
            assertTrue(r.iterations() > 1);
            for (int i = 0; i < exact.length; i++) {
                assertEquals(exact[i], r.scales()[i], 1e-3 * exact[i], "rank " + i);
            }
            // The optimum spends the budget exactly and has less expected noise than NA's flat scale.
            double cost = 0;
            double mse = 0;
            double naMse = 0;
            double bNa = RdpScales.na(q, a, eps);
            for (int i = 0; i < q.length; i++) {
                cost += q[i] * a[i] / r.scales()[i];
                mse += q[i] * 2 * r.scales()[i] * r.scales()[i];
                naMse += q[i] * 2 * bNa * bNa;
            }
            assertEquals(eps, cost, 1e-9 * eps);
            assertTrue(mse <= naMse * (1 + 1e-9), "LMGD " + mse + " vs NA " + naMse);
        }
    }

    @Test
    void lmgdStepMustBeInThePapersRange() {
        double[] q = RdpScales.inclusion(0.02, 10);
        double[] a = weights(10, 3);
        assertThrows(IllegalArgumentException.class, () -> RdpScales.lmgd(q, a, 1, 0.5, 1e-9, 10));
        assertThrows(IllegalArgumentException.class, () -> RdpScales.lmgd(q, a, 1, 0.001, 1e-9, 10));
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
}
