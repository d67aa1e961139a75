package org.privface.privacy.gdp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.function.LongSupplier;

import org.junit.jupiter.api.Test;
import org.privface.privacy.EmpiricalTail;
import org.privface.privacy.ExactCoins;
import org.privface.privacy.RecordingRandom;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.SeededRandom;

/** Statistical tests of the exact Gaussian sampler, with a seeded SecureRandom so failures reproduce. */
class SecureGaussianTest {

    static SecureRandom seededRandom(long seed) {
        return org.privface.privacy.SeededRandom.of(seed);
    }

    static SecureGaussian seeded(long seed) {
        return new SecureGaussian(seededRandom(seed));
    }

    /** n independent releases of the 1-D value x with noise σ, drawn 1000 coordinates per call. */
    static double[] samples(SecureGaussian g, double x, double sigma, int n) {
        double[] out = new double[n];
        double[] xs = new double[1000];
        double[] sigmas = new double[1000];
        Arrays.fill(xs, x);
        Arrays.fill(sigmas, sigma);
        for (int done = 0; done < n; done += 1000) {
            double[] y = g.addNoise(xs, sigmas);
            System.arraycopy(y, 0, out, done, Math.min(1000, n - done));
        }
        return out;
    }

    @Test
    void meanIsZeroAndVarianceIsSigmaSquared() {
        int n = 200_000;
        double sigma = 1.5;
        double[] s = samples(seeded(1), 0.0, sigma, n);
        double mean = Arrays.stream(s).average().orElseThrow();
        double var = Arrays.stream(s).map(x -> (x - mean) * (x - mean)).sum() / (n - 1);
        // Standard errors: σ/√n for the mean, σ²√(2/n) for the variance; allow 5 of each.
        assertEquals(0.0, mean, 5 * sigma / Math.sqrt(n));
        assertEquals(sigma * sigma, var, 5 * sigma * sigma * Math.sqrt(2.0 / n));
    }

    @Test
    void kolmogorovSmirnovAgainstTheNormalCdf() {
        int n = 200_000;
        double sigma = 0.3;
        double centre = 2.0;
        double[] s = samples(seeded(2), centre, sigma, n);
        Arrays.sort(s);
        double d = 0;
        for (int i = 0; i < n; i++) {
            double f = MuGdp.normalCdf((s[i] - centre) / sigma);
            d = Math.max(d, Math.max(Math.abs((i + 1.0) / n - f), Math.abs(f - (double) i / n)));
        }
        // Critical value at alpha = 0.001 is 1.95/sqrt(n).
        assertTrue(d < 1.95 / Math.sqrt(n), "KS statistic " + d);
    }

    @Test
    void outputsLieOnEachCoordinatesPowerOfTwoGrid() {
        SecureGaussian gauss = seeded(3);
        double[] sigmas = {0.001, 0.7, 1.0, 3.3, 1234.5};
        double[] x = {0.123456789, -5.5, 1e-9, 42.0, -7.25};
        for (int rep = 0; rep < 200; rep++) {
            double[] y = gauss.addNoise(x, sigmas);
            for (int i = 0; i < x.length; i++) {
                double g = SecureGaussian.granularity(sigmas[i]);
                assertEquals(g, Math.scalb(1.0, Math.getExponent(g)), "granularity is a power of two");
                assertTrue(g >= sigmas[i] / 0x1.0p20 && g < 2 * sigmas[i] / 0x1.0p20);
                double steps = y[i] / g;
                assertEquals(Math.rint(steps), steps, 0.0, "output is an exact multiple of the grid");
            }
        }
        for (double sigma : sigmas) {
            double eff = SecureGaussian.effectiveSigma(sigma);
            assertTrue(eff >= sigma && eff < sigma * (1 + 0x1.0p-19), "effective sigma " + eff + " for " + sigma);
        }
        assertEquals(10 * 0x1.0p-19, SecureGaussian.roundingMu(100), 0);
    }

    @Test
    void discreteGaussianHasTheExactPmfForSmallSigma() {
        for (long s : new long[] {1, 2, 5}) {
            ExactCoins.Bits bits = seeded(10 + s).bits(1 << 16);
            double variance = (double) s * s;
            assertChiSquare(() -> SecureGaussian.discreteGaussian(s, bits), k -> Math.exp(-k * k / (2 * variance)),
                    (int) (6 * s), 200_000, "N_Z(0, " + s + "^2)");
        }
    }

    @Test
    void discreteLaplaceHasTheExactPmf() {
        for (long t : new long[] {1, 3}) {
            ExactCoins.Bits bits = seeded(20 + t).bits(1 << 16);
            assertChiSquare(() -> ExactCoins.discreteLaplace(t, bits), k -> Math.exp(-Math.abs(k) / (double) t),
                    (int) (8 * t), 200_000, "Lap_Z(" + t + ")");
        }
    }

    @Test
    void bernoulliCoinsHaveTheirExactRates() {
        ExactCoins.Bits bits = seeded(30).bits(1 << 16);
        int n = 400_000;
        assertRate(Math.exp(-0.3), n, () -> ExactCoins.bernoulliExp(3, 10, bits));
        assertRate(Math.exp(-2.5), n, () -> ExactCoins.bernoulliExp(5, 2, bits));
        assertRate(Math.exp(-1.0), n, () -> ExactCoins.bernoulliExpAtMostOne(1, 1, bits));
        assertRate(Math.exp(-0.4 * 0.4 / 2), n, () -> SecureGaussian.bernoulliExpHalfSquare(2, 5, bits));
        assertRate(Math.exp(-1.7 * 1.7 / 2), n, () -> SecureGaussian.bernoulliExpHalfSquare(17, 10, bits));
        assertRate(Math.exp(-3.1 * 3.1 / 2), n, () -> SecureGaussian.bernoulliExpHalfSquare(31, 10, bits));
        assertRate(1.0 / 3, n, () -> bits.bernoulli(1, 3));
    }

    /**
     * A statistical privacy check in the spirit of Google's DP stochastic tester: for the 1-D
     * Gaussian mechanism on neighbours 0 and Δ, every threshold event must satisfy
     * P[M(Δ) > t] ≤ e^ε P[M(0) > t] + δ(ε) (and the mirror event), with δ(ε) the claimed μ-GDP curve.
     * For Gaussians the threshold events are the worst events, so this probes the curve where it is tight.
     */
    @Test
    void empiricalPrivacyStaysWithinTheGdpCurve() {
        double mu = 1.0;
        double z = worstExcess(seeded(40), 1.0, 1.0 / mu, mu);
        assertTrue(z < 5, "an event exceeds the mu-GDP curve by " + z + " standard errors");
    }

    @Test
    void theCheckCatchesAnUnderNoisedMechanism() {
        // Noise 20% below what μ = 1 needs (a μ = 1.2 mechanism), judged against μ = 1: the check must fail.
        double mu = 1.0;
        double z = worstExcess(seeded(41), 1.0, 1.0 / (1.2 * mu), mu);
        assertTrue(z > 5, "the check did not notice the missing noise (worst excess " + z + " standard errors)");
    }

    /** The largest excess, in standard errors, of a threshold event over e^ε P + δ(ε), across ε and t. */
    static double worstExcess(SecureGaussian g, double sensitivity, double sigma, double claimedMu) {
        int n = 200_000;
        double[] a = samples(g, 0.0, sigma, n);
        double[] b = samples(g, sensitivity, sigma, n);
        Arrays.sort(a);
        Arrays.sort(b);
        double worst = Double.NEGATIVE_INFINITY;
        for (double eps : new double[] {0.25, 0.5, 1.0, 2.0}) {
            double delta = MuGdp.delta(eps, claimedMu);
            for (double t = -3 * sigma; t <= sensitivity + 3 * sigma; t += 0.05 * sigma) {
                double pa = EmpiricalTail.fractionAbove(a, t);
                double pb = EmpiricalTail.fractionAbove(b, t);
                // M(Δ) exceeds t more often than M(0); the mirror event {≤ t} favours M(0).
                worst = Math.max(worst, excess(pb, pa, eps, delta, n));
                worst = Math.max(worst, excess(1 - pa, 1 - pb, eps, delta, n));
            }
        }
        return worst;
    }

    private static double excess(double p, double q, double eps, double delta, int n) {
        double e = Math.exp(eps);
        double se = Math.sqrt((p * (1 - p) + e * e * q * (1 - q)) / n) + 1.0 / n;
        return (p - e * q - delta) / se;
    }

    @Test
    void rejectsBadSigmasAndInputs() {
        SecureGaussian g = seeded(50);
        double[] x = {0.5};
        for (double sigma : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThrows(IllegalArgumentException.class, () -> g.addNoise(x, new double[] {sigma}), "sigma " + sigma);
        }
        assertThrows(IllegalArgumentException.class, () -> g.addNoise(new double[] {Double.NaN}, new double[] {1}));
        assertThrows(IllegalArgumentException.class, () -> g.addNoise(new double[] {1e300}, new double[] {1e-3}));
        assertThrows(IllegalArgumentException.class, () -> g.addNoise(x, new double[] {1, 1}));
    }

    private interface BooleanSampler {
        boolean draw();
    }

    private static void assertRate(double p, int n, BooleanSampler coin) {
        int hits = 0;
        for (int i = 0; i < n; i++) {
            if (coin.draw()) {
                hits++;
            }
        }
        double se = Math.sqrt(p * (1 - p) / n);
        assertEquals(p, (double) hits / n, 5 * se, "coin of rate " + p);
    }

    /** Pearson's chi-square over k ∈ [-range, range] with both tails pooled, against an unnormalised pmf. */
    private static void assertChiSquare(LongSupplier sampler, java.util.function.LongToDoubleFunction weight, int range,
                                        int n, String what) {
        int cells = 2 * range + 3; // [-range, range] plus the two tails
        double[] expected = new double[cells];
        double total = 0;
        for (long k = -50L * range; k <= 50L * range; k++) {
            total += weight.applyAsDouble(k);
        }
        for (long k = -50L * range; k <= 50L * range; k++) {
            expected[cell(k, range)] += weight.applyAsDouble(k) / total * n;
        }
        long[] observed = new long[cells];
        for (int i = 0; i < n; i++) {
            observed[cell(sampler.getAsLong(), range)]++;
        }
        double chi2 = 0;
        int used = 0;
        for (int c = 0; c < cells; c++) {
            if (expected[c] >= 5) {
                chi2 += (observed[c] - expected[c]) * (observed[c] - expected[c]) / expected[c];
                used++;
            } else {
                assertTrue(observed[c] <= 25, what + ": " + observed[c] + " draws in a cell expecting " + expected[c]);
            }
        }
        int dof = used - 1;
        // Wilson-Hilferty: the chi-square quantile at alpha = 0.001 (z = 3.09).
        double h = 2.0 / (9 * dof);
        double critical = dof * Math.pow(1 - h + 3.09 * Math.sqrt(h), 3);
        assertTrue(chi2 < critical, what + ": chi2 " + chi2 + " over " + dof + " dof, critical " + critical);
    }

    private static int cell(long k, int range) {
        if (k < -range) {
            return 0;
        }
        if (k > range) {
            return 2 * range + 2;
        }
        return (int) (k + range) + 1;
    }

    /**
     * The release is (round(x/g_i) + Z_i)·g_i, Z_i the exact discrete Gaussian with S_i = ⌈σ_i/g_i⌉
     * drawn from the vector's one bulk draw of 48 bytes a coordinate: replayed on the same seeded
     * stream, the draws match output for output (a sign flip of Z or a shorter bulk draw would not).
     */
    @Test
    void aReleaseIsTheGridPointPlusTheExactSamplersSteps() {
        double[] x = {0.3, -1.7, 5.0, 0.0, 1e-3};
        double[] sigmas = {1, 0.25, 3, 1e-4, 0.7};
        int bytes = SecureGaussian.BYTES_PER_COORDINATE * x.length;
        RecordingRandom r = new RecordingRandom(41);
        double[] out = new SecureGaussian(r).addNoise(x, sigmas);
        assertEquals(bytes, r.fetches().get(0));
        ExactCoins.Bits ref = new ExactCoins.Bits(SeededRandom.of(41), bytes);
        for (int i = 0; i < x.length; i++) {
            double g = SecureLaplace.granularity(sigmas[i]);
            long s = (long) Math.ceil(sigmas[i] / g);
            assertEquals((Math.round(x[i] / g) + SecureGaussian.discreteGaussian(s, ref)) * g, out[i], "coordinate " + i);
        }
        double[] live = new SecureGaussian().addNoise(new double[] {0.25}, new double[] {1});
        assertEquals(Math.rint(live[0] / 0x1p-20), live[0] / 0x1p-20, "the default generator's release is on the grid");
    }

    /** The limits at their exact boundaries: S in [1, 2^20]; σ·2^-20 down to the smallest normal; d ≥ 1. */
    @Test
    void limitsHoldAtTheirExactBoundaries() {
        ExactCoins.Bits bits = new ExactCoins.Bits(SeededRandom.of(42), 64);
        assertTrue(Math.abs(SecureGaussian.discreteGaussian(1, bits)) < 100);
        assertTrue(Math.abs(SecureGaussian.discreteGaussian(1L << 20, bits)) < 100L << 20);
        assertThrows(IllegalArgumentException.class, () -> SecureGaussian.discreteGaussian(0, bits));
        assertThrows(IllegalArgumentException.class, () -> SecureGaussian.discreteGaussian((1L << 20) + 1, bits));
        double least = Math.scalb(Double.MIN_NORMAL, 20);
        assertEquals(Double.MIN_NORMAL, SecureGaussian.granularity(least));
        assertThrows(IllegalArgumentException.class, () -> SecureGaussian.granularity(least / 2));
        assertEquals(0x1p-19, SecureGaussian.roundingMu(1));
        assertEquals(0x1p-18, SecureGaussian.roundingMu(4));
        assertThrows(IllegalArgumentException.class, () -> SecureGaussian.roundingMu(0));
    }
}
