package org.privface.privacy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.security.SecureRandom;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

/** Statistical tests of the Laplace sampler, with a seeded SecureRandom so failures reproduce. */
class SecureLaplaceTest {

    static SecureLaplace seeded(long seed) {
        return new SecureLaplace(SeededRandom.of(seed));
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

    /** T = ⌈(⌊Δ/g⌋ + d)·b/Δ⌉ written out here in exact decimals (the class comment's rule), for the reference below. */
    static long steps(double delta, double g, int d, BigDecimal num, BigDecimal den) {
        return Math.max(1, new BigDecimal(Math.floor(delta / g) + d).multiply(num).divide(den, 0, RoundingMode.CEILING)
                .longValueExact());
    }

    /**
     * Every form of the release is (round(x/g) + K)·g, K the exact discrete Laplace drawn from the
     * vector's one bulk draw of 24 bytes a coordinate: replayed on the same seeded stream, the
     * draws match output for output (a sign flip of K or a shorter bulk draw would not).
     */
    @Test
    void aReleaseIsTheGridPointPlusTheExactSamplersSteps() {
        double[] x = {0.3, -1.7, 5.0, 0.0, 1e-3, -2.5e-6};
        int d = x.length;
        int bytes = SecureLaplace.BYTES_PER_COORDINATE * d;
        double delta = 2;
        double eps = 3;
        double g = SecureLaplace.granularity(delta / eps);

        RecordingRandom r = new RecordingRandom(21);
        double[] out = new SecureLaplace(r).addNoise(x, delta, eps);
        assertEquals(bytes, r.fetches().get(0));
        ExactCoins.Bits ref = new ExactCoins.Bits(SeededRandom.of(21), bytes);
        long t = steps(delta, g, d, BigDecimal.ONE, new BigDecimal(eps));
        assertEquals(t, SecureLaplace.scaleSteps(delta, eps, d));
        for (int i = 0; i < d; i++) {
            assertEquals((Math.round(x[i] / g) + ExactCoins.discreteLaplace(t, ref)) * g, out[i], "addNoise " + i);
        }

        r = new RecordingRandom(22);
        out = new SecureLaplace(r).addNoisePerCoordinate(x, delta, eps);
        assertEquals(bytes, r.fetches().get(0));
        ref = new ExactCoins.Bits(SeededRandom.of(22), bytes);
        t = steps(delta, g, 1, BigDecimal.ONE, new BigDecimal(eps));
        for (int i = 0; i < d; i++) {
            assertEquals((Math.round(x[i] / g) + ExactCoins.discreteLaplace(t, ref)) * g, out[i], "addNoisePerCoordinate " + i);
        }

        // Scaled: each coordinate its own Δ_k, b_k and grid; the last asks ε_k = 2^40, so its grid is Δ·2^-31.
        double[] deltas = {1, 0.5, 2, 1, 3, 1};
        double[] scales = {1, 0.01, 7, 1e-3, 0.2, 0x1p-40};
        r = new RecordingRandom(23);
        out = new SecureLaplace(r).addNoiseScaled(x, deltas, scales);
        assertEquals(bytes, r.fetches().get(0));
        ref = new ExactCoins.Bits(SeededRandom.of(23), bytes);
        for (int i = 0; i < d; i++) {
            double gi = Math.max(SecureLaplace.granularity(scales[i]), SecureLaplace.ceilPowerOfTwo(deltas[i] * 0x1p-31));
            long ti = steps(deltas[i], gi, 1, new BigDecimal(scales[i]), new BigDecimal(deltas[i]));
            assertEquals((Math.round(x[i] / gi) + ExactCoins.discreteLaplace(ti, ref)) * gi, out[i], "addNoiseScaled " + i);
        }
        assertEquals(0x1p-31, Math.max(SecureLaplace.granularity(scales[5]), SecureLaplace.ceilPowerOfTwo(0x1p-31)));
        assertThrows(IllegalArgumentException.class, () -> seeded(1).addNoiseScaled(x, new double[5], scales));
        assertThrows(IllegalArgumentException.class, () -> seeded(1).addNoiseScaled(x, deltas, new double[7]));
    }

    /** The uniform is ((64 generator bits >>> 11) + 1)·2^-53: in (0, 1], from the same stream as nextLong. */
    @Test
    void theUniformIsTheTop53BitsPlusOneUlp() {
        SecureLaplace lap = new SecureLaplace(SeededRandom.of(31));
        SecureRandom ref = SeededRandom.of(31);
        for (int i = 0; i < 1000; i++) {
            double u = lap.uniform();
            assertEquals(((ref.nextLong() >>> 11) + 1) * 0x1p-53, u);
            assertTrue(u > 0 && u <= 1, "uniform " + u);
        }
    }

    /** The system generator's release lies on the grid too (the default constructor's generator is live). */
    @Test
    void theDefaultGeneratorReleasesOnTheGrid() {
        double[] out = new SecureLaplace().addNoise(new double[] {0.25, -3}, 1, 1);
        double g = SecureLaplace.granularity(1);
        for (double y : out) {
            assertEquals(Math.rint(y / g), y / g);
        }
    }

    /** Exact powers of two map to themselves, anything above one to the next; the smallest normal is the floor. */
    @Test
    void ceilPowerOfTwoAtAndBetweenPowers() {
        assertEquals(Double.MIN_NORMAL, SecureLaplace.ceilPowerOfTwo(Double.MIN_NORMAL));
        assertEquals(1.0, SecureLaplace.ceilPowerOfTwo(1.0));
        assertEquals(2.0, SecureLaplace.ceilPowerOfTwo(Math.nextUp(1.0)));
        assertEquals(1.0, SecureLaplace.ceilPowerOfTwo(0.75));
        assertEquals(4.0, SecureLaplace.ceilPowerOfTwo(3.0));
        assertEquals(0x1p1000, SecureLaplace.ceilPowerOfTwo(0x1p1000));
        for (double bad : new double[] {0, Math.nextDown(Double.MIN_NORMAL), -1, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThrows(IllegalArgumentException.class, () -> SecureLaplace.ceilPowerOfTwo(bad), "x " + bad);
        }
        assertEquals(0x1p-20, SecureLaplace.granularity(1));
        assertEquals(0x1p-19, SecureLaplace.granularity(Math.nextUp(1.0)));
    }

    /** The grid's limits, at their exact boundaries: 2^52 steps are accepted, one more is not. */
    @Test
    void gridLimitsHoldAtTheirExactBoundaries() {
        long max = 1L << 52;
        assertEquals(max, SecureLaplace.centre(0x1p52 * 0x1p-20, 0x1p-20, 0));
        assertEquals(-max, SecureLaplace.centre(-0x1p52, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> SecureLaplace.centre(Math.nextUp(0x1p52), 1, 0));
        assertThrows(IllegalArgumentException.class, () -> SecureLaplace.centre(Math.nextDown(-0x1p52), 1, 0));
        assertThrows(IllegalArgumentException.class, () -> SecureLaplace.centre(Double.POSITIVE_INFINITY, 1, 0));
        assertEquals(3, SecureLaplace.centre(2.5, 1, 0));
        assertEquals(-2, SecureLaplace.centre(-2.5, 1, 0));
        // D = ⌊Δ/g⌋ + d below 2^52 whole steps of sensitivity.
        assertEquals(max + 2, SecureLaplace.shiftSteps(max - 1, 1, 3));
        assertEquals(4, SecureLaplace.shiftSteps(2.5, 1, 2));
        assertThrows(IllegalArgumentException.class, () -> SecureLaplace.shiftSteps(max, 1, 1));
        // T = ⌈D·num/den⌉ up to 2^52 steps, at least 1.
        assertEquals(max, SecureLaplace.scaleSteps(max, BigDecimal.ONE, BigDecimal.ONE));
        assertThrows(IllegalArgumentException.class, () -> SecureLaplace.scaleSteps(max + 1, BigDecimal.ONE, BigDecimal.ONE));
        assertEquals(4, SecureLaplace.scaleSteps(7, BigDecimal.ONE, BigDecimal.valueOf(2)));
        assertEquals(3, SecureLaplace.scaleSteps(6, BigDecimal.ONE, BigDecimal.valueOf(2)));
        assertEquals(1, SecureLaplace.scaleSteps(1, BigDecimal.ONE, BigDecimal.valueOf(1000)));
    }
}
