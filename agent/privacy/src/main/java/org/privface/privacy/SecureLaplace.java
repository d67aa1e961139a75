package org.privface.privacy;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.security.SecureRandom;

import org.privface.privacy.ExactCoins.Bits;

/**
 * The Laplace mechanism for vectors, sampled exactly on a power-of-two grid so that neither
 * floating-point artefacts nor a truncated tail leak anything.
 *
 * <p>Design (after Mironov, "On significance of the least significant bits for differential
 * privacy", CCS 2012, and Canonne, Kamath, Steinke, NeurIPS 2020): the input is rounded to a grid
 * of power-of-two granularity g, q = round(x/g), and the output is (q + K)·g with K an integer
 * drawn exactly from the discrete Laplace P(K = k) ∝ exp(−|k|/T), T an integer number of grid
 * steps. K comes from {@link ExactCoins#discreteLaplace}: exact rational coins on uniform integers,
 * no logarithm, no truncation, every integer reachable with its exact probability. Every output is
 * an exact multiple of g and depends on x only through the integers q.
 *
 * <p>Proof (addNoise). Rounding moves each coordinate by at most half a step, so two inputs at L1
 * distance at most Δ give |q_i − q′_i| ≤ |x_i − x′_i|/g + 1 and, the sum being an integer,
 * Σ|q_i − q′_i| ≤ D = ⌊Δ/g⌋ + d steps. Coordinate by coordinate, P(q_i + K = y)/P(q′_i + K = y) ≤
 * exp(|q_i − q′_i|/T), so the vector's ratio is at most exp(D/T). T = ⌈D/ε⌉ makes that ≤ exp(ε)
 * exactly: Δ/g is exact in a double (g is a power of two), ⌊·⌋ of it is exact, and D/ε is
 * rounded up in exact decimal arithmetic on the double ε. The noise's scale T·g is never below
 * the requested b = Δ/ε, since D > Δ/g. The per-coordinate and scaled forms are the case d = 1
 * per coordinate, composed.
 *
 * <p>Cost. g is the smallest power of two ≥ b·2^-20, so T ∈ (2^19, 2^20 + d/ε + 1]: the rounding
 * inflates the noise by at most a relative (d/ε + 1)·2^-19, and every integer of the coins fits
 * in a long. A coordinate costs 100 to 150 random bits, 13 to 19 bytes of generator output, depending on
 * where T falls between powers of two (counted in SecureLaplaceExactTest).
 */
public final class SecureLaplace {
    /** g is the smallest power of two at least b / 2^20: a grid a million times finer than the noise. */
    public static final int GRANULARITY_EXPONENT = 20;
    /** Random bytes fetched per coordinate in one bulk draw (a sample uses 13 to 19); running short costs another draw. */
    static final int BYTES_PER_COORDINATE = 24;
    /**
     * The largest scale in steps accepted, far above any real use (T ≈ 2^20). Below it the coins'
     * products T·k and T·v leave a long only after 2^11 successes in a row (probability below
     * e^-2000), and then throw rather than mis-sample.
     */
    static final long MAX_SCALE_STEPS = 1L << 52;
    /** addNoiseScaled treats a coordinate's ε above 2^31 as 2^31: far beyond any guarantee, far inside a long. */
    static final int MAX_EPSILON_EXPONENT = 31;

    private static final double TWO_POW_MINUS_53 = 0x1.0p-53;

    private final SecureRandom random;

    /** Uses the JDK's NIST SP 800-90A DRBG, seeded by the operating system. */
    public SecureLaplace() {
        this(Drbg.create());
    }

    /** For statistical tests that need a reproducible stream; production uses the default. */
    public SecureLaplace(SecureRandom random) {
        this.random = random;
    }

    /**
     * Adds Laplace noise calibrated to an L1 sensitivity and ε to every coordinate: ε-DP for the
     * whole vector, exactly (see the class comment).
     *
     * @return a new array; the input is untouched
     */
    public double[] addNoise(double[] x, double l1Sensitivity, double epsilon) {
        double g = granularity(Privacy.laplaceScale(l1Sensitivity, epsilon));
        long t = scaleSteps(shiftSteps(l1Sensitivity, g, x.length), BigDecimal.ONE, new BigDecimal(epsilon));
        return onGrid(x, g, t);
    }

    /**
     * Treats every coordinate as its own one-dimensional release with the given sensitivity and ε,
     * as the PEEP paper does; the whole vector then spends d·ε by basic composition.
     */
    public double[] addNoisePerCoordinate(double[] x, double sensitivityPerCoordinate, double epsilonPerCoordinate) {
        double g = granularity(Privacy.laplaceScale(sensitivityPerCoordinate, epsilonPerCoordinate));
        long t = scaleSteps(shiftSteps(sensitivityPerCoordinate, g, 1), BigDecimal.ONE, new BigDecimal(epsilonPerCoordinate));
        return onGrid(x, g, t);
    }

    /**
     * Coordinate k gets Laplace(b_k) with its own sensitivity Δ_k, i.e. ε_k = Δ_k / b_k (the exact
     * quotient of the two doubles), each on its own power-of-two grid; the vector spends Σ ε_k by
     * basic composition. Used where scales differ per coordinate (RDP's ranked coefficients).
     */
    public double[] addNoiseScaled(double[] x, double[] sensitivities, double[] scales) {
        if (sensitivities.length != x.length || scales.length != x.length) {
            throw new IllegalArgumentException("need one sensitivity and one scale per coordinate");
        }
        Bits bits = new Bits(random, BYTES_PER_COORDINATE * x.length);
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            double delta = Privacy.checkSensitivity(sensitivities[i]);
            // A scale far below Δ (ε_k above 2^31, as RDP's paper modes can ask for) gets the coarser grid
            // Δ·2^-31: its noise is then at least that grid, more than asked, and every integer fits a long.
            double g = Math.max(granularity(Privacy.checkSensitivity(scales[i])),
                    ceilPowerOfTwo(Math.scalb(delta, -MAX_EPSILON_EXPONENT)));
            // T = ⌈D·b/Δ⌉ = ⌈D/ε_k⌉ with ε_k = Δ/b taken exactly, not as a rounded double.
            long t = scaleSteps(shiftSteps(delta, g, 1), new BigDecimal(scales[i]), new BigDecimal(delta));
            out[i] = (centre(x[i], g, i) + ExactCoins.discreteLaplace(t, bits)) * g;
        }
        return out;
    }

    /** A uniform double in (0, 1] from the secure generator, for mechanisms' data-independent discrete choices. */
    public double uniform() {
        return ((random.nextLong() >>> 11) + 1) * TWO_POW_MINUS_53;
    }

    /** Rounds each coordinate to the grid g and adds exact discrete Laplace(t) steps of g. */
    private double[] onGrid(double[] x, double g, long t) {
        long[] centre = new long[x.length];
        for (int i = 0; i < x.length; i++) {
            centre[i] = centre(x[i], g, i);
        }
        // One bulk draw per vector: a lock and a DRBG call per coin would dominate the cost.
        Bits bits = new Bits(random, BYTES_PER_COORDINATE * x.length);
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            out[i] = (centre[i] + ExactCoins.discreteLaplace(t, bits)) * g;
        }
        return out;
    }

    /**
     * round(x/g), coordinate {@code index}'s grid point in steps of g (for the Gaussian too); refuses what
     * is not finite or beyond 2^52 steps, where the sum with the noise would no longer be exact in a double.
     */
    public static long centre(double x, double g, int index) {
        if (!Double.isFinite(x)) {
            throw new IllegalArgumentException("coordinate " + index + " is not finite");
        }
        double units = x / g;
        if (Math.abs(units) > 0x1.0p52) {
            throw new IllegalArgumentException("coordinate " + index + " is too large for its noise grid");
        }
        return Math.round(units);
    }

    /**
     * D = ⌊Δ/g⌋ + d: the most grid steps, summed over d coordinates, by which two inputs at L1
     * distance Δ can differ once rounded (see the class comment). Δ/g is exact: g is a power of two.
     */
    static long shiftSteps(double sensitivity, double g, int d) {
        double units = Math.floor(Privacy.checkSensitivity(sensitivity) / g);
        if (!(units < MAX_SCALE_STEPS)) {
            throw new IllegalArgumentException("sensitivity " + sensitivity + " is too large for the grid " + g);
        }
        return (long) units + d;
    }

    /** T = ⌈D·num/den⌉ in exact arithmetic (rounded up: the guarantee never rests on a rounding), at least 1. */
    static long scaleSteps(long shift, BigDecimal num, BigDecimal den) {
        BigDecimal t = BigDecimal.valueOf(shift).multiply(num).divide(den, 0, RoundingMode.CEILING);
        if (t.compareTo(BigDecimal.valueOf(MAX_SCALE_STEPS)) > 0) {
            throw new IllegalArgumentException("epsilon is too small for an exact noise grid: " + t + " steps");
        }
        return Math.max(1, t.longValueExact());
    }

    /**
     * The scale T in grid steps {@link #addNoise} uses for d coordinates, sensitivity Δ and ε; the
     * noise added is discrete Laplace with P(k) ∝ exp(−|k|/T) steps of {@link #granularity} g.
     */
    public static long scaleSteps(double l1Sensitivity, double epsilon, int d) {
        double g = granularity(Privacy.laplaceScale(l1Sensitivity, epsilon));
        return scaleSteps(shiftSteps(l1Sensitivity, g, d), BigDecimal.ONE, new BigDecimal(epsilon));
    }

    /** Smallest power of two ≥ b·2^-20. */
    public static double granularity(double b) {
        return ceilPowerOfTwo(b / Math.scalb(1.0, GRANULARITY_EXPONENT));
    }

    static double ceilPowerOfTwo(double x) {
        if (!(x >= Double.MIN_NORMAL) || !Double.isFinite(x)) {
            throw new IllegalArgumentException("need a positive, normal, finite number, was " + x);
        }
        double p = Math.scalb(1.0, Math.getExponent(x));
        return p == x ? p : 2 * p;
    }
}
