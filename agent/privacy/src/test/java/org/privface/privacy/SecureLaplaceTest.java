package org.privface.privacy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

/** Statistical tests of the Laplace sampler, with a seeded SecureRandom so failures reproduce. */
class SecureLaplaceTest {

    static SecureLaplace seeded(long seed) {
        try {
            SecureRandom r = SecureRandom.getInstance("SHA1PRNG");
            r.setSeed(seed);
            return new SecureLaplace(r);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static double[] samples(SecureLaplace lap, double centre, double sensitivity, double epsilon, int n) {
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            out[i] = lap.addNoise(new double[] {centre}, sensitivity, epsilon)[0];
        }
        return out;
    }

    static double laplaceCdf(double x, double b) {
        return x < 0 ? 0.5 * Math.exp(x / b) : 1 - 0.5 * Math.exp(-x / b);
    }

    @Test
    void kolmogorovSmirnovAgainstTheLaplaceCdf() {
        int n = 20_000;
        double b = 2.0;
        double[] s = samples(seeded(1), 0.0, 1.0, 0.5, n);
        Arrays.sort(s);
        double d = 0;
        for (int i = 0; i < n; i++) {
            double f = laplaceCdf(s[i], b);
            d = Math.max(d, Math.max(Math.abs((i + 1.0) / n - f), Math.abs(f - (double) i / n)));
        }
        // Critical value at alpha = 0.001 is 1.95/sqrt(n).
        assertTrue(d < 1.95 / Math.sqrt(n), "KS statistic " + d);
    }

    @Test
    void varianceIsTwoBSquared() {
        int n = 20_000;
        double b = 0.25;
        double[] s = samples(seeded(2), 3.0, 1.0, 4.0, n);
        double mean = Arrays.stream(s).average().orElseThrow();
        double var = Arrays.stream(s).map(x -> (x - mean) * (x - mean)).sum() / (n - 1);
        assertEquals(3.0, mean, 0.02);
        // The sample variance of Laplace has relative sd sqrt(5/n) ≈ 1.6%; allow 3 sd.
        assertEquals(2 * b * b, var, 2 * b * b * 0.05);
    }

    @Test
    void outputsLieOnThePowerOfTwoGrid() {
        SecureLaplace lap = seeded(3);
        double b = 1.0 / 0.7;
        double g = SecureLaplace.granularity(b);
        assertEquals(g, Math.scalb(1.0, Math.getExponent(g)), "granularity is a power of two");
        assertTrue(g >= b / Math.scalb(1.0, 20) && g < 2 * b / Math.scalb(1.0, 20));
        for (double x : samples(lap, 0.123456789, 1.0, 0.7, 1000)) {
            double steps = x / g;
            assertEquals(Math.rint(steps), steps, 0.0, "output is an exact multiple of the grid");
        }
    }

    /**
     * The empirical privacy loss between neighbouring inputs 0 and Δ stays within e^ε: for every
     * histogram bin with enough mass, count(0)/count(Δ) ≤ e^ε plus sampling tolerance.
     */
    @Test
    void empiricalPrivacyLossStaysWithinEpsilon() {
        double epsilon = 1.0;
        assertTrue(maxLossRatio(seeded(4), epsilon, epsilon) <= Math.exp(epsilon) * 1.15);
    }

    @Test
    void theLossCheckCatchesAMechanismThatSpendsTwiceItsEpsilon() {
        // Noise calibrated to 2ε, judged against ε: the same check must fail, or it proves nothing.
        assertFalse(maxLossRatio(seeded(5), 2.0, 1.0) <= Math.exp(1.0) * 1.15);
    }

    private static double maxLossRatio(SecureLaplace lap, double actualEpsilon, double claimedEpsilon) {
        int n = 100_000;
        double[] a = samples(lap, 0.0, 1.0, actualEpsilon, n);
        double[] b = samples(lap, 1.0, 1.0, actualEpsilon, n);
        double width = 0.25;
        int bins = 64;
        double lo = -8;
        long[] ha = histogram(a, lo, width, bins);
        long[] hb = histogram(b, lo, width, bins);
        double worst = 0;
        for (int i = 0; i < bins; i++) {
            if (ha[i] >= 500 && hb[i] >= 500) {
                worst = Math.max(worst, Math.max((double) ha[i] / hb[i], (double) hb[i] / ha[i]));
            }
        }
        assertTrue(worst > 0, "no bin had enough mass for claimed epsilon " + claimedEpsilon);
        return worst;
    }

    private static long[] histogram(double[] xs, double lo, double width, int bins) {
        long[] h = new long[bins];
        for (double x : xs) {
            int i = (int) Math.floor((x - lo) / width);
            if (i >= 0 && i < bins) {
                h[i]++;
            }
        }
        return h;
    }

    @Test
    void rejectsBadEpsilonAndInput() {
        SecureLaplace lap = seeded(6);
        double[] x = {0.5};
        for (double eps : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThrows(IllegalArgumentException.class, () -> lap.addNoise(x, 1, eps), "epsilon " + eps);
        }
        assertThrows(IllegalArgumentException.class, () -> lap.addNoise(new double[] {Double.NaN}, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> lap.addNoise(x, 0, 1));
    }
}
