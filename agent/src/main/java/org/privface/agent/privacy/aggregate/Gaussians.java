package org.privface.agent.privacy.aggregate;

import java.nio.ByteBuffer;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;

/**
 * The secure draws the aggregate mechanisms need, in one small place. A stop-gap: once
 * {@code org.privface.agent.privacy.gdp.SecureGaussian} exists, {@link #addGaussian} and
 * {@link #discreteGaussian} are what to swap for it; nothing else here adds noise to data.
 *
 * <p>Gaussian noise is never {@code x + σ·z} in floating point, whose reachable outputs depend on x
 * (Mironov, CCS 2012). Instead, as in {@code SecureLaplace}: x is rounded to a power-of-two grid
 * g ≈ σ·2^-20 and an integer number of grid steps is added, drawn from the discrete Gaussian
 * N_Z(0, s²), s = σ/g, by rejection from a discrete Laplace (Canonne, Kamath and Steinke,
 * "The discrete Gaussian for differential privacy", NeurIPS 2020, Algorithm 3). Every output is an
 * exact multiple of g, so the set of outputs does not depend on x.
 *
 * <p>What is not exact. The discrete Laplace magnitude is drawn by inversion of a 53-bit uniform
 * and the acceptance test compares a 53-bit uniform with a floating-point exp(): with s ≈ 2^20
 * every integer collects about 2^32 values of the uniform, so each probability is within a relative
 * 2^-31 of the exact one (CKS's all-integer Bernoulli sampler avoids even that, at many more draws).
 * {@link #normal()} (Box–Muller) is used only for directions and proposals whose results are
 * snapped or only accepted/rejected; it never meets data directly.
 *
 * <p>Thread-safe: draws are serialised on one lock around a buffer of DRBG output.
 */
final class Gaussians {
    /** g is the smallest power of two ≥ σ·2^-20, as in {@code SecureLaplace}. */
    static final int GRANULARITY_EXPONENT = 20;
    private static final double TWO_POW_MINUS_53 = 0x1.0p-53;

    private final SecureRandom random;
    // One DRBG call per 64 longs: a call per draw would dominate the cost of a d×d covariance.
    private final ByteBuffer buffer = ByteBuffer.allocate(512);

    Gaussians(SecureRandom random) {
        this.random = random;
        buffer.position(buffer.limit());
    }

    /** The JDK's NIST SP 800-90A DRBG, seeded by the operating system. */
    static SecureRandom defaultRandom() {
        try {
            return SecureRandom.getInstance("DRBG");
        } catch (NoSuchAlgorithmException e) {
            return new SecureRandom();
        }
    }

    synchronized long nextLong() {
        if (!buffer.hasRemaining()) {
            random.nextBytes(buffer.array());
            buffer.clear();
        }
        return buffer.getLong();
    }

    /** Uniform in (0, 1], never 0, from 53 secure bits. */
    double uniform() {
        return ((nextLong() >>> 11) + 1) * TWO_POW_MINUS_53;
    }

    /** Exp(1) by inversion. */
    double exponential() {
        return -Math.log(uniform());
    }

    /** Continuous N(0,1) by Box–Muller; for directions and MH proposals only, see the class note. */
    double normal() {
        return Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
    }

    /** k ∈ Z with P(k) ∝ exp(-|k|/t); "negative zero" is redrawn so 0 is not counted twice. */
    long discreteLaplace(double t) {
        while (true) {
            long bits = nextLong();
            double u = ((bits >>> 11) + 1) * TWO_POW_MINUS_53;
            double m = Math.floor(-Math.log(u) * t); // P(m = k) = e^{-k/t}(1 - e^{-1/t})
            long magnitude = m >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) m;
            boolean positive = (bits & 1) == 0;
            if (magnitude != 0 || positive) {
                return positive ? magnitude : -magnitude;
            }
        }
    }

    /**
     * k ∈ Z with P(k) ∝ exp(-k²/(2s²)). CKS Algorithm 3: propose discrete Laplace with
     * t = ⌊s⌋ + 1 and accept with probability exp(-(|k| - s²/t)²/(2s²)), which is the ratio of the
     * two densities up to a constant; about half of the proposals are accepted.
     */
    long discreteGaussian(double s) {
        if (!(s > 0) || !Double.isFinite(s)) {
            throw new IllegalArgumentException("discrete Gaussian scale must be positive and finite, was " + s);
        }
        double t = Math.floor(s) + 1;
        double shift = s * s / t;
        while (true) {
            long k = discreteLaplace(t);
            double a = Math.abs((double) k) - shift;
            if (uniform() <= Math.exp(-a * a / (2 * s * s))) {
                return k;
            }
        }
    }

    /** N(0,1) on the grid 2^-20: a discrete Gaussian of scale 2^20, in units of 2^-20. */
    double standardGaussian() {
        return discreteGaussian(0x1.0p20) * 0x1.0p-20;
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

    /**
     * The actual σ {@link #addGaussian} uses for a vector of d coordinates: rounding to the grid g
     * can move two neighbouring inputs apart by up to √d·g more, so the sensitivity is Δ + √d·g.
     */
    static double sigma(double l2Sensitivity, double mu, int d) {
        double g = granularity(l2Sensitivity / mu);
        return (l2Sensitivity + Math.sqrt(d) * g) / mu;
    }

    /**
     * Gaussian mechanism on a grid: each coordinate rounded to g = granularity(Δ/μ) plus
     * discrete-Gaussian steps of scale σ/g with σ = {@link #sigma}. With the sensitivity grown to
     * cover the rounding, the rounded inputs are integer vectors (in units of g) at L2 distance at
     * most σμ/g, and independent discrete Gaussians on them are exactly (μ²/2)-zCDP (CKS, Thm 14);
     * their trade-off curve matches the continuous Gaussian's μ-GDP up to the lattice, 2^20 times
     * finer than σ.
     *
     * @return a new array, every entry a multiple of g; the input is untouched
     */
    double[] addGaussian(double[] x, double l2Sensitivity, double mu) {
        double g = granularity(l2Sensitivity / mu);
        double s = sigma(l2Sensitivity, mu, x.length) / g;
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            out[i] = (onGrid(x[i], g, i) + discreteGaussian(s)) * g;
        }
        return out;
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
