package org.privface.agent.privacy;

import java.security.SecureRandom;

/**
 * The Laplace mechanism for vectors, sampled so that floating-point artefacts leak nothing.
 *
 * <p>Design (after Google's differential-privacy library, which cannot be obtained here, and
 * Mironov, "On significance of the least significant bits for differential privacy", CCS 2012):
 * the input is rounded to a grid of power-of-two granularity g, and the noise is a two-sided
 * geometric (discrete Laplace) multiple of g. Every output is an exact multiple of g, so the
 * set of reachable outputs no longer depends on the input the way a textbook
 * {@code x + b*log(u)} does.
 *
 * <p>Proof sketch. Rounding moves each coordinate by at most g/2, so two inputs at L1 distance
 * at most Δ round to grid points at distance at most Δ + d·g. Measured in grid steps, that is
 * (Δ + d·g)/g. Discrete Laplace noise with P(k) ∝ exp(-t|k|) changes the probability of any
 * output by a factor of at most exp(t · (Δ + d·g)/g); with t = g·ε/(Δ + d·g) this is exp(ε).
 * The geometric sampler below draws its uniforms from {@link SecureRandom}; its probabilities are
 * computed in double precision, an approximation shared with Google's implementation.
 */
public final class SecureLaplace {
    /**
     * g is the smallest power of two at least b / 2^40. The grid is then far finer than the noise
     * (a relative rounding of 2^-40), while keeping every grid index within a long.
     */
    static final int GRANULARITY_EXPONENT = 40;

    private final SecureRandom random;

    public SecureLaplace() {
        this(new SecureRandom());
    }

    /** For statistical tests that need a reproducible stream; production uses the default. */
    public SecureLaplace(SecureRandom random) {
        this.random = random;
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
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            if (!Double.isFinite(x[i])) {
                throw new IllegalArgumentException("coordinate " + i + " is not finite");
            }
            out[i] = (Math.round(x[i] / g) + sampleTwoSidedGeometric(t)) * g;
        }
        return out;
    }

    /** Smallest power of two ≥ b·2^-40. */
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

    /** k ∈ Z with P(k) ∝ exp(-t|k|). */
    long sampleTwoSidedGeometric(double t) {
        long magnitude = 0;
        boolean positive = false;
        // Reject "negative zero" so that zero is not drawn twice as often as any other value.
        while (magnitude == 0 && !positive) {
            magnitude = sampleGeometric(t) - 1;
            positive = random.nextBoolean();
        }
        return positive ? magnitude : -magnitude;
    }

    /**
     * k ≥ 1 with P(k) = (1 - e^{-t}) e^{-t(k-1)}, by bisection on the CDF: each step splits the
     * remaining interval (left, right] into halves of equal probability and picks one with a
     * uniform draw, so no logarithm of a uniform (and its rounding pattern) reaches the output.
     */
    long sampleGeometric(double t) {
        if (random.nextDouble() > -Math.expm1(-t * Long.MAX_VALUE)) {
            return Long.MAX_VALUE;
        }
        long left = 0;
        long right = Long.MAX_VALUE;
        while (left + 1 < right) {
            long mid = left - (long) Math.floor((Math.log(0.5) + Math.log1p(Math.exp(t * (left - right)))) / t);
            mid = Math.min(Math.max(mid, left + 1), right - 1);
            double q = Math.expm1(t * (left - mid)) / Math.expm1(t * (left - right));
            if (random.nextDouble() <= q) {
                right = mid;
            } else {
                left = mid;
            }
        }
        return right;
    }
}
