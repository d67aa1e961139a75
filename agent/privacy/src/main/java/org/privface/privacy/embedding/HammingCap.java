package org.privface.privacy.embedding;

import java.math.BigInteger;
import java.security.SecureRandom;
import java.util.Objects;

import org.privface.privacy.Privacy;

/**
 * PrivUnit's cap (Bhowmick et al. 2018, "Protection Against Reconstruction and Its Applications in
 * Private Federated Learning", PrivUnit2) on the Hamming cube {0,1}^K instead of the unit sphere,
 * with every probability an exact integer ratio, so the sampler is exact.
 *
 * <p>Mechanism. The input is a K-bit code x (the signs of K public projections of the face, see
 * {@link EmbeddingBasis}). With probability p the release y is uniform over the Hamming ball
 * B(x, r) of V = Σ_{j≤r} C(K, j) codes; otherwise uniform over the other 2^K − V codes.
 *
 * <p>ε (exact). P(y | x) is p/V when y ∈ B(x, r) and (1 − p)/(2^K − V) when not. For any two
 * inputs x, x′ and any y the ratio P(y | x)/P(y | x′) is therefore 1, or
 * p(2^K − V)/((1 − p)V), or its inverse; both cases occur whenever some y lies in one ball and not
 * in the other (any x ≠ x′ with r &lt; K). With p ≥ V/2^K the mechanism is ε-LDP with exactly
 * <pre>ε = ln(p/(1 − p)) + ln((2^K − V)/V)</pre>
 * and no smaller ε holds.
 *
 * <p>Sampling, exact. p = m/2^{32} is dyadic and chosen by one uniform 32-bit integer; the distance
 * d from x is drawn by a uniform integer below V (or below 2^K − V), walked down the binomial
 * coefficients C(K, j), which gives P(d) = C(K, d)/V exactly; then a uniform d-subset of the K
 * positions is flipped (partial Fisher-Yates with {@link SecureRandom#nextInt(int)}, itself exact
 * by rejection). No floating-point number enters the draw, so no rounding can reveal x.
 */
public final class HammingCap {
    /** p is a multiple of 2^-32. */
    static final int P_BITS = 32;
    static final BigInteger P_DENOMINATOR = BigInteger.ONE.shiftLeft(P_BITS);

    private final int bits;
    private final int radius;
    private final long pNumerator;
    private final BigInteger ball;
    private final BigInteger rest;
    private final BigInteger[] binomial;
    private final double epsilon;
    private final SecureRandom random;

    /**
     * The widest ball radius r whose p, rounded down to a multiple of 2^-32, reaches at most the
     * given ε; {@code r} is fixed by the caller (chosen on public data), p follows from ε.
     */
    public static HammingCap forEpsilon(int bits, int radius, double epsilon, SecureRandom random) {
        Privacy.checkEpsilon(epsilon);
        checkShape(bits, radius);
        BigInteger[] c = binomials(bits);
        BigInteger v = ballSize(c, radius);
        BigInteger rest = BigInteger.ONE.shiftLeft(bits).subtract(v);
        // p/(1 − p) = e^ε · V/(2^K − V); p rounded down keeps the spent ε at or below the target.
        double logOdds = epsilon + ln(v) - ln(rest);
        double p = logOdds > 40 ? 1 : 1 / (1 + Math.exp(-logOdds));
        long m = (long) Math.floor(p * P_DENOMINATOR.doubleValue());
        m = Math.min(m, (1L << P_BITS) - 1);
        // p must exceed the ball's share of the cube, or the cap would get less than uniform mass.
        long floor = v.shiftLeft(P_BITS).divide(v.add(rest)).longValueExact() + 1;
        if (m < floor) {
            throw new IllegalArgumentException("ε " + epsilon + " is too small for a ball of radius " + radius
                    + " in " + bits + " bits");
        }
        return new HammingCap(bits, radius, m, random);
    }

    public HammingCap(int bits, int radius, long pNumerator, SecureRandom random) {
        checkShape(bits, radius);
        if (pNumerator <= 0 || pNumerator >= 1L << P_BITS) {
            throw new IllegalArgumentException("p numerator must be in (0, 2^32), was " + pNumerator);
        }
        this.bits = bits;
        this.radius = radius;
        this.pNumerator = pNumerator;
        this.binomial = binomials(bits);
        this.ball = ballSize(binomial, radius);
        this.rest = BigInteger.ONE.shiftLeft(bits).subtract(ball);
        this.epsilon = epsilon(bits, radius, pNumerator);
        this.random = Objects.requireNonNull(random, "random");
    }

    /** ln(p/(1 − p)) + ln((2^K − V)/V) with p = m/2^32, from the exact integers. */
    public static double epsilon(int bits, int radius, long pNumerator) {
        BigInteger v = ballSize(binomials(bits), radius);
        BigInteger rest = BigInteger.ONE.shiftLeft(bits).subtract(v);
        BigInteger m = BigInteger.valueOf(pNumerator);
        BigInteger notM = P_DENOMINATOR.subtract(m);
        return ln(m.multiply(rest)) - ln(notM.multiply(v));
    }

    static void checkShape(int bits, int radius) {
        if (bits < 1 || bits > 4096) {
            throw new IllegalArgumentException("need 1 to 4096 bits, was " + bits);
        }
        if (radius < 0 || radius >= bits) {
            throw new IllegalArgumentException("radius must be in [0, " + bits + "), was " + radius);
        }
    }

    static BigInteger[] binomials(int k) {
        BigInteger[] c = new BigInteger[k + 1];
        c[0] = BigInteger.ONE;
        for (int j = 1; j <= k; j++) {
            c[j] = c[j - 1].multiply(BigInteger.valueOf(k - j + 1)).divide(BigInteger.valueOf(j));
        }
        return c;
    }

    static BigInteger ballSize(BigInteger[] c, int radius) {
        BigInteger v = BigInteger.ZERO;
        for (int j = 0; j <= radius; j++) {
            v = v.add(c[j]);
        }
        return v;
    }

    /** Natural log of a positive big integer to double precision: its top 62 bits, then the shift. */
    static double ln(BigInteger x) {
        int shift = Math.max(0, x.bitLength() - 62);
        return Math.log(x.shiftRight(shift).doubleValue()) + shift * Math.log(2);
    }

    /** Releases a code: a new array, the input untouched. */
    public boolean[] release(boolean[] code) {
        if (code.length != bits) {
            throw new IllegalArgumentException("need a " + bits + "-bit code, was " + code.length);
        }
        boolean inBall = random.nextLong() >>> (64 - P_BITS) < pNumerator;
        int d = inBall ? distance(uniform(ball), 0) : distance(uniform(rest), radius + 1);
        boolean[] out = code.clone();
        int[] positions = new int[bits];
        for (int i = 0; i < bits; i++) {
            positions[i] = i;
        }
        for (int i = 0; i < d; i++) {
            int j = i + random.nextInt(bits - i);
            int t = positions[i];
            positions[i] = positions[j];
            positions[j] = t;
            out[positions[i]] = !out[positions[i]];
        }
        return out;
    }

    /** The distance j ≥ from whose cumulative C(K, ·) first exceeds u: P(j) = C(K, j)/total exactly. */
    private int distance(BigInteger u, int from) {
        BigInteger left = u;
        for (int j = from; j < bits; j++) {
            if (left.compareTo(binomial[j]) < 0) {
                return j;
            }
            left = left.subtract(binomial[j]);
        }
        return bits;
    }

    /** Uniform on {0, …, n − 1}: uniform bit strings of n's length, redrawn when ≥ n. */
    private BigInteger uniform(BigInteger n) {
        while (true) {
            BigInteger u = new BigInteger(n.bitLength(), random);
            if (u.compareTo(n) < 0) {
                return u;
            }
        }
    }

    public int bits() {
        return bits;
    }

    public int radius() {
        return radius;
    }

    /** p = numerator/2^32. */
    public long pNumerator() {
        return pNumerator;
    }

    public double p() {
        return pNumerator / P_DENOMINATOR.doubleValue();
    }

    /** The exact ε of one release (to double precision, from exact integers). */
    public double epsilon() {
        return epsilon;
    }
}
