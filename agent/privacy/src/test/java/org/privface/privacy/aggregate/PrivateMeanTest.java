package org.privface.privacy.aggregate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.junit.jupiter.api.Test;

class PrivateMeanTest {

    @Test
    void clippingBoundsTheNormAndLeavesShortVectorsAlone() {
        double[] c = {1, 1, 1};
        double[] far = PrivateMean.clip(new double[] {4, 5, 1}, c, 2.0);
        assertEquals(2.0, Sphere.norm(far), 1e-15);
        assertArrayEquals(new double[] {1.2, 1.6, 0}, far, 1e-15, "same direction");
        assertArrayEquals(new double[] {0.5, -0.5, 0}, PrivateMean.clip(new double[] {1.5, 0.5, 1}, c, 2.0));
        Random rnd = new Random(1);
        for (int i = 0; i < 1000; i++) {
            double[] v = {100 * rnd.nextGaussian(), 100 * rnd.nextGaussian(), 100 * rnd.nextGaussian()};
            assertTrue(Sphere.norm(PrivateMean.clip(v, c, 0.5)) <= 0.5 * (1 + 1e-15));
        }
    }

    @Test
    void anOutlierMovesTheReleasedMeanByAtMostTheSensitivity() {
        int n = 100;
        double tau = 1.0;
        double[][] a = new double[n][2];
        double[][] b = new double[n][2];
        b[0] = new double[] {1e9, -1e9};
        // μ huge: the noise is negligible, so the releases are the clipped means.
        PrivateMean pm = new PrivateMean(Seeded.secure(2));
        double[] ma = pm.release(a, tau, 1e9).mean();
        double[] mb = pm.release(b, tau, 1e9).mean();
        double dist = Math.hypot(ma[0] - mb[0], ma[1] - mb[1]);
        assertEquals(tau / n, dist, 1e-6, "one clipped record moves the mean by τ/n");
        assertTrue(dist <= PrivateMean.sensitivity(n, tau));
    }

    @Test
    void noiseVarianceIsTwoTauOverNMuSquaredPerCoordinate() {
        int n = 50;
        int d = 20;
        double tau = 3.0;
        double mu = 0.5;
        Random rnd = new Random(3);
        double[][] data = new double[n][d];
        for (double[] row : data) {
            for (int j = 0; j < d; j++) {
                row[j] = rnd.nextGaussian();
            }
        }
        double[] centre = new double[d];
        double[] truth = new double[d];
        for (double[] row : data) {
            double[] x = PrivateMean.clip(row, centre, tau);
            for (int j = 0; j < d; j++) {
                truth[j] += x[j] / n;
            }
        }
        double sigma = 2 * tau / (n * mu);
        PrivateMean pm = new PrivateMean(Seeded.secure(4));
        int reps = 2000;
        double sum = 0;
        double sumSq = 0;
        for (int i = 0; i < reps; i++) {
            PrivateMean.Release rel = pm.release(data, centre, tau, mu);
            assertEquals(sigma, rel.sigma(), 1e-4 * sigma, "σ = Δ/μ up to the grid's share of μ");
            double[] m = rel.mean();
            for (int j = 0; j < d; j++) {
                double e = m[j] - truth[j];
                sum += e;
                sumSq += e * e;
            }
        }
        int k = reps * d;
        double var = sumSq / k - (sum / k) * (sum / k);
        // Relative standard error of a variance estimate from k normals: √(2/k) ≈ 0.007.
        assertEquals(sigma * sigma, var, 0.03 * sigma * sigma);
        assertEquals(0, sum / k, 4 * sigma / Math.sqrt(k));
    }

    @Test
    void releasesLieOnThePowerOfTwoGrid() {
        PrivateMean pm = new PrivateMean(Seeded.secure(5));
        PrivateMean.Release rel = pm.release(new double[][] {{0.123456789, 0.3}, {0.2, 0.1}}, 1.0, 1.0);
        double g = org.privface.privacy.gdp.SecureGaussian.granularity(PrivateMean.sigma(PrivateMean.sensitivity(2, 1.0), 1.0, 2));
        for (double v : rel.offset()) {
            assertEquals(Math.rint(v / g), v / g);
        }
    }

    @Test
    void preconditions() {
        PrivateMean pm = new PrivateMean(Seeded.secure(6));
        double[][] data = {{1, 2}};
        assertThrows(IllegalArgumentException.class, () -> pm.release(data, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> pm.release(data, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> pm.release(data, 1, Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> pm.release(new double[0][], 1, 1));
        assertThrows(IllegalArgumentException.class, () -> pm.release(new double[][] {{1, Double.NaN}}, 1, 1));
    }
}
