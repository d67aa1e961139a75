package org.privface.agent.privacy.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class GaussiansTest {

    @Test
    void discreteGaussianHasTheRightVarianceAndSymmetry() {
        Gaussians g = new Gaussians(Seeded.secure(1));
        for (double s : new double[] {0.7, 3.0, 1 << 20}) {
            int reps = 100_000;
            double sum = 0;
            double sumSq = 0;
            double sum4 = 0;
            for (int i = 0; i < reps; i++) {
                double k = g.discreteGaussian(s) / s;
                sum += k;
                sumSq += k * k;
                sum4 += k * k * k * k;
            }
            double var = sumSq / reps;
            // For s ≥ 1 the discrete Gaussian's variance is s² to within 1e-8; at 0.7, slightly below.
            double expected = s < 1 ? discreteVariance(s) / (s * s) : 1;
            assertEquals(expected, var, 0.02, "s=" + s);
            assertEquals(0, sum / reps, 0.02, "s=" + s);
            if (s > 1) {
                assertEquals(3, sum4 / reps, 0.1, "kurtosis of a Gaussian, s=" + s);
            }
        }
    }

    private static double discreteVariance(double s) {
        double z = 0;
        double m2 = 0;
        for (int k = -50; k <= 50; k++) {
            double p = Math.exp(-k * (double) k / (2 * s * s));
            z += p;
            m2 += k * (double) k * p;
        }
        return m2 / z;
    }

    @Test
    void standardGaussianIsOnTheFineGrid() {
        Gaussians g = new Gaussians(Seeded.secure(2));
        for (int i = 0; i < 1000; i++) {
            double z = g.standardGaussian();
            assertEquals(Math.rint(z * 0x1.0p20), z * 0x1.0p20);
            assertTrue(Math.abs(z) < 8);
        }
    }

    @Test
    void granularityIsAPowerOfTwoJustAboveSigmaOverAMillion() {
        double g = Gaussians.granularity(3.0);
        assertEquals(Math.scalb(1.0, Math.getExponent(g)), g);
        assertTrue(g >= 3.0 / (1 << 20) && g < 6.0 / (1 << 20));
    }
}
