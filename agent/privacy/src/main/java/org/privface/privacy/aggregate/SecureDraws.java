package org.privface.privacy.aggregate;

import java.security.SecureRandom;

import org.privface.privacy.ExactCoins;

/**
 * The secure draws the K-norm sampler needs: uniforms, exponentials (its Gamma radius), and
 * normals for directions and Metropolis–Hastings proposals, whose results are snapped to a
 * power-of-two grid or only accepted or rejected, so they never meet data directly. Gaussian
 * noise added to data comes from {@link org.privface.privacy.gdp.SecureGaussian}.
 *
 * <p>Exponentials are not drawn by inversion, −ln U: from a 53-bit U that cuts the tail at 36.7
 * and leaves holes beyond about 23 (each value a multiple of 2^-53 in probability), the defect
 * that made the old Laplace sampler leak. Instead E = h·(G + V): G ≥ 0 an exact geometric with
 * P(G = k) ∝ e^{−kh} ({@link ExactCoins#geometric}, scale 1/h = 2^32 steps) and V a uniform
 * fraction of a step. No tail is cut, and with V continuous the density of E is within a factor
 * e^{±h} of e^{−x} everywhere (it is (1 − e^{−h})/h·e^{−h⌊x/h⌋}).
 *
 * <p>Thread-safe: draws are serialised on one lock around one {@link ExactCoins.Bits}, the
 * library's one adapter from a generator to bits (it used to keep a second buffer of longs).
 */
final class SecureDraws {
    /** g is the smallest power of two ≥ σ·2^-20, as in {@code SecureLaplace}. */
    static final int GRANULARITY_EXPONENT = 20;
    private static final double TWO_POW_MINUS_53 = 0x1.0p-53;
    /** 1/h, the exponential's grid in steps per unit (see the class comment). */
    static final long EXPONENTIAL_STEPS = 1L << 32;
    /** h = 2^-32: an exponential's density is within e^{±h} of e^{−x}, a Gamma(d) radius's within e^{±dh}. */
    static final double EXPONENTIAL_GRID = 0x1.0p-32;

    // 512 bytes a DRBG call: a call per draw would dominate the cost of a d×d covariance.
    private final ExactCoins.Bits bits;

    SecureDraws(SecureRandom random) {
        this.bits = new ExactCoins.Bits(random, 512);
    }

    /** Uniform in (0, 1], never 0, from 53 secure bits. */
    synchronized double uniform() {
        return (bits.bits(53) + 1) * TWO_POW_MINUS_53;
    }

    /** Exp(1) as h·(G + V), G an exact geometric, V a uniform fraction of a step: no tail cut (class comment). */
    synchronized double exponential() {
        long g = ExactCoins.geometric(EXPONENTIAL_STEPS, bits);
        double v = (bits.bits(53) + 0.5) * TWO_POW_MINUS_53;
        return (g + v) * EXPONENTIAL_GRID;
    }

    /** Bernoulli(exp(−num/den)) with exact coins ({@link ExactCoins#bernoulliExp}): the K-norm chain's accept step. */
    synchronized boolean bernoulliExp(long num, long den) {
        return ExactCoins.bernoulliExp(num, den, bits);
    }

    /** Continuous N(0,1) by Box–Muller; for directions and MH proposals only, see the class note. */
    double normal() {
        return Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
    }

    /** Smallest power of two ≥ σ·2^-20. */
    static double granularity(double sigma) {
        double x = sigma / Math.scalb(1.0, GRANULARITY_EXPONENT);
        if (!(x > 0) || !Double.isFinite(x)) {
            throw new IllegalArgumentException("noise scale must be positive and finite, was " + sigma);
        }
        double p = Math.scalb(1.0, Math.getExponent(x));
        return p == x ? p : 2 * p;
    }

    /** x/g rounded to an integer; refuses values the grid cannot hold exactly in a double. */
    static long onGrid(double x, double g, int index) {
        double steps = Math.rint(x / g);
        if (!Double.isFinite(steps) || Math.abs(steps) > 0x1.0p50) {
            throw new IllegalArgumentException("coordinate " + index + " (" + x + ") is not finite or too large for the noise grid");
        }
        return (long) steps;
    }
}
