package org.privface.agent.privacy;

import java.security.SecureRandom;

/**
 * The Laplace mechanism for vectors, sampled so that floating-point artefacts leak nothing.
 *
 * <p>Design (after Google's differential-privacy library, which cannot be obtained here, and
 * Mironov, "On significance of the least significant bits for differential privacy", CCS 2012):
 * the input is rounded to a grid of power-of-two granularity g, and the noise is a two-sided
 * geometric (discrete Laplace) multiple of g. Every output is an exact multiple of g, so the set
 * of reachable outputs no longer depends on the input the way a textbook {@code x + b*log(u)}
 * does.
 *
 * <p>Proof sketch. Rounding moves each coordinate by at most g/2, so two inputs at L1 distance at
 * most Δ round to grid points at distance at most Δ + d·g. Measured in grid steps, that is
 * (Δ + d·g)/g. Discrete Laplace noise with P(k) ∝ exp(-t|k|) changes the probability of any output
 * by a factor of at most exp(t · (Δ + d·g)/g); with t = g·ε/(Δ + d·g) this is exp(ε).
 *
 * <p>Sampling. The magnitude is geometric, drawn by inversion, floor(-ln(U)/t), from a 53-bit
 * uniform U out of {@link SecureRandom}. The result is an integer number of grid steps, so the
 * rounding inside ln() can only shift probability between neighbouring integers; it never reveals
 * the input. With g = b·2^-20, each integer k collects about 2^32 distinct values of U, so each
 * P(k) is within a relative 2^-31 of exact, which moves the privacy loss by under 1e-9. Google's
 * bisection sampler avoids even that, at about 40 secure draws per coordinate; this one needs one,
 * which is what lets 128 coordinates per face keep up with a camera.
 */
public final class SecureLaplace {
    /**
     * g is the smallest power of two at least b / 2^20: a grid a million times finer than the
     * noise, coarse enough that the inversion sampler above stays exact to 2^-31.
     */
    static final int GRANULARITY_EXPONENT = 20;

    private static final double TWO_POW_MINUS_53 = 0x1.0p-53;

    private final SecureRandom random;

    /** Uses the JDK's NIST SP 800-90A DRBG, seeded by the operating system. */
    public SecureLaplace() {
        this(defaultRandom());
    }

    /** For statistical tests that need a reproducible stream; production uses the default. */
    public SecureLaplace(SecureRandom random) {
        this.random = random;
    }

    private static SecureRandom defaultRandom() {
        try {
            return SecureRandom.getInstance("DRBG");
        } catch (java.security.NoSuchAlgorithmException e) {
            return new SecureRandom();
        }
    }

    /**
     * Adds Laplace noise calibrated to an L1 sensitivity and ε to every coordinate.
     *
     * @return a new array; the input is untouched
     */
    public double[] addNoise(double[] x, double l1Sensitivity, double epsilon) {
        double b = Privacy.laplaceScale(l1Sensitivity, epsilon);
        double g = granularity(b);
        double t = g * epsilon / (l1Sensitivity + x.length * g);
        return onGrid(x, g, t);
    }

    /**
     * Treats every coordinate as its own one-dimensional release with the given sensitivity and ε,
     * as the PEEP paper does; the whole vector then spends d·ε by basic composition.
     */
    public double[] addNoisePerCoordinate(double[] x, double sensitivityPerCoordinate, double epsilonPerCoordinate) {
        double b = Privacy.laplaceScale(sensitivityPerCoordinate, epsilonPerCoordinate);
        double g = granularity(b);
        double t = g * epsilonPerCoordinate / (sensitivityPerCoordinate + g);
        return onGrid(x, g, t);
    }

    /**
     * Coordinate k gets Laplace(b_k) with its own sensitivity Δ_k, i.e. ε_k = Δ_k / b_k, each on
     * its own power-of-two grid; the vector spends Σ ε_k by basic composition. Used where scales
     * differ per coordinate (RDP's ranked coefficients).
     */
    public double[] addNoiseScaled(double[] x, double[] sensitivities, double[] scales) {
        if (sensitivities.length != x.length || scales.length != x.length) {
            throw new IllegalArgumentException("need one sensitivity and one scale per coordinate");
        }
        byte[] bytes = new byte[8 * x.length];
        random.nextBytes(bytes);
        java.nio.ByteBuffer bits = java.nio.ByteBuffer.wrap(bytes);
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            double eps = Privacy.checkSensitivity(sensitivities[i]) / Privacy.checkSensitivity(scales[i]);
            double g = granularity(scales[i]);
            double t = g * eps / (sensitivities[i] + g);
            if (!Double.isFinite(x[i])) {
                throw new IllegalArgumentException("coordinate " + i + " is not finite");
            }
            out[i] = (Math.round(x[i] / g) + twoSidedGeometric(t, bits.getLong())) * g;
        }
        return out;
    }

    /** A uniform double in (0, 1] from the secure generator, for mechanisms' discrete choices. */
    public double uniform() {
        return ((random.nextLong() >>> 11) + 1) * TWO_POW_MINUS_53;
    }

    /** Rounds each coordinate to the grid g and adds discrete Laplace(t) steps of g. */
    private double[] onGrid(double[] x, double g, double t) {
        // One bulk draw per vector: a lock and a DRBG call per coordinate would dominate the cost.
        byte[] bytes = new byte[8 * x.length];
        random.nextBytes(bytes);
        java.nio.ByteBuffer bits = java.nio.ByteBuffer.wrap(bytes);
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            if (!Double.isFinite(x[i])) {
                throw new IllegalArgumentException("coordinate " + i + " is not finite");
            }
            out[i] = (Math.round(x[i] / g) + twoSidedGeometric(t, bits.getLong())) * g;
        }
        return out;
    }

    /** Smallest power of two ≥ b·2^-20. */
    static double granularity(double b) {
        return ceilPowerOfTwo(b / Math.scalb(1.0, GRANULARITY_EXPONENT));
    }

    static double ceilPowerOfTwo(double x) {
        if (!(x > 0) || !Double.isFinite(x)) {
            throw new IllegalArgumentException("need a positive finite number, was " + x);
        }
        double p = Math.scalb(1.0, Math.getExponent(x));
        return p == x ? p : 2 * p;
    }

    /**
     * k ∈ Z with P(k) ∝ exp(-t|k|), from 64 random bits: the top 53 give the magnitude, the lowest
     * the sign. "Negative zero" is rejected and redrawn so zero is not drawn twice as often.
     */
    long twoSidedGeometric(double t, long bits) {
        while (true) {
            long magnitude = geometric(t, bits >>> 11);
            boolean positive = (bits & 1) == 0;
            if (magnitude != 0 || positive) {
                return positive ? magnitude : -magnitude;
            }
            bits = random.nextLong();
        }
    }

    /** k ≥ 0 with P(k) = (1 - e^{-t}) e^{-tk}, by inversion of 53 uniform bits. */
    static long geometric(double t, long bits53) {
        double u = (bits53 + 1) * TWO_POW_MINUS_53; // in (0, 1], never 0
        double k = Math.floor(-Math.log(u) / t);
        return k >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) k;
    }
}
