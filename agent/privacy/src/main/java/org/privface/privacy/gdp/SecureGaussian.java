package org.privface.privacy.gdp;

import java.security.SecureRandom;
import java.util.Objects;

import org.privface.privacy.Drbg;
import org.privface.privacy.ExactCoins;
import org.privface.privacy.ExactCoins.Bits;
import org.privface.privacy.Privacy;
import org.privface.privacy.SecureLaplace;

/**
 * Gaussian noise for vectors, exact on a power-of-two grid, from a {@link SecureRandom}: the
 * Gaussian counterpart of {@link org.privface.privacy.SecureLaplace}.
 *
 * <p>Coordinate i with requested σ_i uses the grid g_i, the smallest power of two ≥ σ_i·2^-20, and
 * releases (round(x_i/g_i) + Z_i)·g_i with Z_i drawn exactly from the discrete Gaussian
 * N_Z(0, S_i²), S_i = ⌈σ_i/g_i⌉ ∈ [2^19 + 1, 2^20]. Every output is an exact multiple of g_i and
 * depends on x_i only through the integer round(x_i/g_i), so no floating-point artefact of the
 * sampler can reveal x (Mironov 2012). The noise actually added, S_i·g_i, is never below σ_i.
 *
 * <p>Sampler: Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy" (NeurIPS
 * 2020), Algorithms 1-3 (the coins and Algorithms 1-2 live in {@link ExactCoins}): Bernoulli(e^-γ) by the alternating-series trick, discrete Laplace by
 * rejection, discrete Gaussian by rejection from discrete Laplace with t = S + 1. Every coin is a
 * comparison of a uniform integer, drawn by rejection from raw bits, with an integer numerator, so
 * each probability is met exactly, not to floating-point accuracy. The Gaussian acceptance
 * probability exp(−(a/b)²/2), with a = | |Y|·t − S² | and b = S·t, is split into m = ⌈c²/2⌉ equal
 * factors, c = ⌈a/b⌉, each decided by Algorithm 1 with the coin of rate γ/(mk) written as the
 * product of three coins (c²/(2mk))·(a/(bc))·(a/(bc)); all numbers then fit in a long. The one
 * approximation: a Laplace candidate with |Y| > 2^40 steps is redrawn instead of being tested. Such
 * a candidate has probability below e^-(2^20) and would be accepted with probability below
 * e^-(2^38), so the output distribution moves by far less than any double can show.
 *
 * <p>Proof sketch (privacy). Let x, x′ be neighbouring inputs and q, q′ their grid points in steps:
 * q_i = round(x_i/g_i). Each coordinate moves by at most g_i/2 when rounded, so the two neighbours'
 * difference grows by less than g_i per coordinate: |q_i − q′_i|·g_i &lt; |x_i − x′_i| + g_i. (The
 * rounding adds g_i/2 per input, hence g_i, not g_i/2, to the difference of the pair: with a common
 * grid the L2 sensitivity grows from Δ to at most Δ + √d·g.) The released steps q + Z are the
 * discrete Gaussian mechanism on the integer query q: CKS prove it is ½μ_q²-zCDP exactly (per
 * coordinate, then by composition), with μ_q = ‖((q_i − q′_i)/S_i)_i‖₂, and that its (ε, δ) curve
 * is essentially the continuous Gaussian's. We account it as μ_q-GDP, the continuous curve; the
 * difference is a lattice effect which we estimate (not a theorem) at order (g/σ)² ≈ 2^-38 and do
 * not budget separately. Since S_i·g_i ≥ σ_i and g_i &lt; 2^-19·σ_i,
 * μ_q ≤ ‖((x_i − x′_i)/σ_i)_i‖₂ + √d·2^-19: whatever sensitivity a caller calibrates σ to, the grid
 * costs at most {@link #roundingMu(int)} = √d·2^-19 of μ, and calibration must include it (as
 * {@link GaussianMechanism} does).
 *
 * <p>Thread-safe: each call draws its own bulk random bytes; the generator is only touched there.
 */
public final class SecureGaussian {
    /**
     * g is the smallest power of two ≥ σ/2^20: the grid is a million times finer than the noise, so
     * the rounding costs at most 2^-19 of μ per coordinate, and S = σ/g ≤ 2^20 keeps every integer
     * of the exact sampler inside a long.
     */
    static final int GRANULARITY_EXPONENT = SecureLaplace.GRANULARITY_EXPONENT;
    /** A Laplace candidate beyond this many steps is redrawn (see the class comment). */
    static final long MAX_CANDIDATE_STEPS = 1L << 40;
    /**
     * Random bytes fetched per coordinate in one bulk draw: a sample uses 31 to 48 on average
     * (measured; it depends on S), and running short only costs another bulk draw.
     */
    static final int BYTES_PER_COORDINATE = 48;

    private final SecureRandom random;

    /** Uses the JDK's NIST SP 800-90A DRBG, seeded by the operating system. */
    public SecureGaussian() {
        this(Drbg.create());
    }

    /** For statistical tests that need a reproducible stream; production uses the default. */
    public SecureGaussian(SecureRandom random) {
        this.random = Objects.requireNonNull(random, "random");
    }

    /**
     * Adds N(0, σ_i²) noise to coordinate i, on coordinate i's power-of-two grid (see the class
     * comment for what the grid costs in μ).
     *
     * @return a new array; the input is untouched
     */
    public double[] addNoise(double[] x, double[] sigmas) {
        if (sigmas.length != x.length) {
            throw new IllegalArgumentException("need one sigma per coordinate: " + sigmas.length + " for " + x.length);
        }
        double[] grid = new double[x.length];
        long[] steps = new long[x.length];
        long[] centre = new long[x.length];
        for (int i = 0; i < x.length; i++) {
            double sigma = Privacy.checkSigma(sigmas[i]);
            grid[i] = granularity(sigma);
            steps[i] = sigmaSteps(sigma, grid[i]);
            centre[i] = SecureLaplace.centre(x[i], grid[i], i);
        }
        Bits bits = new Bits(random, BYTES_PER_COORDINATE * x.length);
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            out[i] = (centre[i] + discreteGaussian(steps[i], bits)) * grid[i];
        }
        return out;
    }

    /** Smallest power of two ≥ σ·2^-20: coordinate noise of σ lands on multiples of this (the Laplace's grid rule). */
    public static double granularity(double sigma) {
        return SecureLaplace.granularity(Privacy.checkSigma(sigma));
    }

    /** The standard deviation S·g of the noise actually added for a requested σ: at least σ, below σ(1 + 2^-19). */
    public static double effectiveSigma(double sigma) {
        double g = granularity(sigma);
        return sigmaSteps(sigma, g) * g;
    }

    /**
     * The most the grid can add to the μ of a d-coordinate release, whatever the σ_i: √d·2^-19
     * (each coordinate's rounding adds less than g_i &lt; 2^-19·σ_i to the neighbours' distance).
     */
    public static double roundingMu(int d) {
        if (d < 1) {
            throw new IllegalArgumentException("need at least one coordinate, was " + d);
        }
        return Math.sqrt(d) * Math.scalb(1.0, 1 - GRANULARITY_EXPONENT);
    }

    /** S = ⌈σ/g⌉, exact since g is a power of two. */
    static long sigmaSteps(double sigma, double g) {
        return (long) Math.ceil(sigma / g);
    }

    /** A fresh bit source over one bulk draw, for the tests of the exact samplers. */
    Bits bits(int bytes) {
        return new Bits(random, bytes);
    }

    /** Z ~ N_Z(0, s²): P(z) ∝ exp(−z²/(2s²)) on the integers (CKS Algorithm 3, σ² = s² an integer). */
    static long discreteGaussian(long s, Bits bits) {
        if (s < 1 || s > 1L << GRANULARITY_EXPONENT) {
            throw new IllegalArgumentException("sigma steps must be in [1, 2^20], was " + s);
        }
        while (true) {
            long y = trial(s, bits);
            if (y != ExactCoins.REJECTED) {
                return y;
            }
        }
    }

    /**
     * One round of CKS Algorithm 3, or {@link ExactCoins#REJECTED}: one round of the discrete
     * Laplace(t = s + 1) ({@link ExactCoins#laplaceRound}, itself possibly rejected), its candidate y
     * accepted with probability exp(−(|y| − s²/t)²/(2s²)). A round returns y with probability
     * (1 − e^-1)/(2t)·e^{−|y|/t}·exp(−(|y| − s²/t)²/(2s²)) = (1 − e^-1)/(2t)·e^{−s²/(2t²)}·e^{−y²/(2s²)},
     * and rounds draw fresh coins, so {@link #discreteGaussian} (the first round not rejected) is
     * exactly N_Z(0, s²). Letting the Laplace round's own rejection reject the whole round changes
     * no law, and lets tests enumerate one round, where equal outcomes' paths stay few.
     */
    static long trial(long s, Bits bits) {
        long t = s + 1; // ⌊σ⌋ + 1
        long s2 = s * s;
        long b = s * t;
        long y = ExactCoins.laplaceRound(t, bits);
        if (y == ExactCoins.REJECTED) {
            return y;
        }
        long ay = Math.abs(y);
        if (ay > MAX_CANDIDATE_STEPS) {
            return ExactCoins.REJECTED;
        }
        // (|y| − σ²/t)² / (2σ²) = (a/b)²/2 with a = | |y|·t − s² |, b = s·t.
        long a = Math.abs(ay * t - s2);
        return bernoulliExpHalfSquare(a, b, bits) ? y : ExactCoins.REJECTED;
    }

    /**
     * Bernoulli(exp(−(a/b)²/2)) for a ≥ 0, b ≥ 1, without forming (a/b)² as a fraction (it would
     * overflow a long): m = ⌈c²/2⌉ independent coins of rate exp(−(a/b)²/(2m)), c = ⌈a/b⌉, each by
     * Algorithm 1 with its Bernoulli(γ′/k) drawn as the product of Bernoulli(c²/(2mk)) and two
     * Bernoulli(a/(bc)), all with probabilities in [0, 1].
     */
    static boolean bernoulliExpHalfSquare(long a, long b, Bits bits) {
        if (a == 0) {
            return true;
        }
        long c = (a + b - 1) / b;
        long c2 = Math.multiplyExact(c, c);
        long m = (c2 + 1) / 2;
        long bc = Math.multiplyExact(b, c);
        for (long j = 0; j < m; j++) {
            long k = 1;
            while (bits.bernoulli(c2, Math.multiplyExact(2 * m, k)) && bits.bernoulli(a, bc) && bits.bernoulli(a, bc)) {
                k++;
            }
            if ((k & 1) == 0) {
                return false;
            }
        }
        return true;
    }
}
