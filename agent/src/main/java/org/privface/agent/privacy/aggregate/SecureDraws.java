package org.privface.agent.privacy.aggregate;

import java.nio.ByteBuffer;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;

/**
 * The secure draws the K-norm sampler needs: uniforms, exponentials (its Gamma radius), and
 * normals for directions and Metropolis–Hastings proposals, whose results are snapped to a
 * power-of-two grid or only accepted or rejected, so they never meet data directly. Gaussian
 * noise added to data comes from {@link org.privface.agent.privacy.gdp.SecureGaussian}.
 *
 * <p>Thread-safe: draws are serialised on one lock around a buffer of DRBG output.
 */
final class SecureDraws {
    /** g is the smallest power of two ≥ σ·2^-20, as in {@code SecureLaplace}. */
    static final int GRANULARITY_EXPONENT = 20;
    private static final double TWO_POW_MINUS_53 = 0x1.0p-53;

    private final SecureRandom random;
    // One DRBG call per 64 longs: a call per draw would dominate the cost of a d×d covariance.
    private final ByteBuffer buffer = ByteBuffer.allocate(512);

    SecureDraws(SecureRandom random) {
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
