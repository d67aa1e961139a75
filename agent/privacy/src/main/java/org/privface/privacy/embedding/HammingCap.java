package org.privface.privacy.embedding;

import java.math.BigInteger;
import java.security.SecureRandom;
import java.util.Objects;

import org.privface.privacy.ExactCoins.Bits;
import org.privface.privacy.Privacy;
import org.privface.privacy.SpentEpsilon;

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
 * <p>Sampling, exact. p = m/2^{32} is dyadic and decided by one exact coin; the distance
 * d from x is drawn by walking up the binomial coefficients, stopping at j with probability
 * C(K, j)/Σ_{i ≥ j} C(K, i) (over the ball, or over its complement), which gives
 * P(d) = C(K, d)/V exactly; then a uniform d-subset of the K
 * positions is flipped by selection sampling, one exact coin per position. Every primitive is an
 * {@link Bits} draw (uniform integers by rejection from raw bits). No floating-point number enters
 * the draw, so no rounding can reveal x. m is the largest numerator whose ε, bounded above in exact
 * arithmetic, is at most the ε asked for, and {@link #epsilon()} states that bound
 * ({@link SpentEpsilon}).
 */
public final class HammingCap {
    /** p is a multiple of 2^-32. */
    static final int P_BITS = 32;
    static final BigInteger P_DENOMINATOR = BigInteger.ONE.shiftLeft(P_BITS);
    /** Generator bytes fetched per release in one bulk draw (more are fetched if a release runs short). */
    static final int RELEASE_BYTES = 64;

    private final int bits;
    private final int radius;
    private final long pNumerator;
    private final BigInteger ball;
    private final BigInteger rest;
    private final BigInteger[] binomial;
    private final double epsilon;
    private final SecureRandom random;

    /**
     * The cap with the largest p on the 2^-32 grid whose spent ε, bounded above in exact
     * arithmetic ({@link SpentEpsilon}), is at most the given ε; {@code r} is fixed by the caller
     * (chosen on public data), p follows from ε.
     */
    public static HammingCap forEpsilon(int bits, int radius, double epsilon, SecureRandom random) {
        return new HammingCap(bits, radius, pNumeratorFor(bits, radius, epsilon), random);
    }

    /** The ε a cap made by {@link #forEpsilon} states, worked out without making the cap. */
    public static double statedEpsilon(int bits, int radius, double epsilon) {
        return epsilon(bits, radius, pNumeratorFor(bits, radius, epsilon));
    }

    private static long pNumeratorFor(int bits, int radius, double epsilon) {
        Privacy.checkEpsilon(epsilon);
        checkShape(bits, radius);
        BigInteger[] c = binomials(bits);
        BigInteger v = ballSize(c, radius);
        BigInteger rest = BigInteger.ONE.shiftLeft(bits).subtract(v);
        // p must exceed the ball's share of the cube, or the cap would get less than uniform mass.
        long lo = v.shiftLeft(P_BITS).divide(v.add(rest)).longValueExact() + 1;
        if (!(spentUp(v, rest, lo) <= epsilon)) {
            throw new IllegalArgumentException("ε " + epsilon + " is too small for a ball of radius " + radius
                    + " in " + bits + " bits");
        }
        // From there the spent ε grows with m: the largest m ≤ 2^32 − 1 whose bound is ≤ ε, by bisection
        // on the exact check alone (lo always passes it), so no floating-point guess decides m.
        long hi = (1L << P_BITS) - 1;
        while (lo < hi) {
            long mid = hi - (hi - lo) / 2;
            if (spentUp(v, rest, mid) <= epsilon) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
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

    /**
     * |ln(p/(1 − p)) + ln((2^K − V)/V)| with p = m/2^32, rounded up from the exact integers
     * ({@link SpentEpsilon#lnRatioUp}): an upper bound of the exact ε, a few ulps above it.
     */
    public static double epsilon(int bits, int radius, long pNumerator) {
        BigInteger v = ballSize(binomials(bits), radius);
        return spentUp(v, BigInteger.ONE.shiftLeft(bits).subtract(v), pNumerator);
    }

    private static double spentUp(BigInteger v, BigInteger rest, long pNumerator) {
        BigInteger m = BigInteger.valueOf(pNumerator);
        BigInteger inside = m.multiply(rest);
        BigInteger outside = P_DENOMINATOR.subtract(m).multiply(v);
        // A p below the ball's share inverts the ratio; the loss is its absolute log either way.
        return SpentEpsilon.lnRatioUp(inside.max(outside), inside.min(outside));
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

    /** Releases a code: a new array, the input untouched. */
    public boolean[] release(boolean[] code) {
        return release(code, new Bits(random, RELEASE_BYTES));
    }

    /** {@link #release(boolean[])} on the given random primitives (tests script them to enumerate every path). */
    boolean[] release(boolean[] code, Bits coins) {
        if (code.length != bits) {
            throw new IllegalArgumentException("need a " + bits + "-bit code, was " + code.length);
        }
        boolean inBall = coins.bernoulli(pNumerator, 1L << P_BITS);
        int d = inBall ? distance(coins, 0, ball) : distance(coins, radius + 1, rest);
        boolean[] out = code.clone();
        // A uniform d-subset by selection sampling (Knuth's Algorithm S): position i is flipped with
        // probability (still to flip)/(positions left), so each subset has probability 1/C(K, d).
        // The loop needs no bound on i: position K − left is flipped with certainty, so it ends in the code.
        int left = d;
        for (int i = 0; left > 0; i++) {
            if (coins.bernoulli(left, bits - i)) {
                out[i] = !out[i];
                left--;
            }
        }
        return out;
    }

    /**
     * A distance j ≥ from with P(j) = C(K, j)/total exactly, total = Σ C(K, j) over the range from
     * {@code from}: stop at j with probability C(K, j)/(what is left of the total), one exact coin
     * per step. The range's last coin is certain (what is left is its own C(K, j)), so the loop needs
     * no bound.
     */
    private int distance(Bits coins, int from, BigInteger total) {
        BigInteger left = total;
        for (int j = from; ; j++) {
            if (coins.bernoulli(binomial[j], left)) {
                return j;
            }
            left = left.subtract(binomial[j]);
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

    /** The ε of one release: the exact value from the integers, rounded up (a few ulps at most). */
    public double epsilon() {
        return epsilon;
    }
}
