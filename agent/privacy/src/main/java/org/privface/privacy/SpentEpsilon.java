package org.privface.privacy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * The one rule for every ε a mechanism states: <b>the stated ε is an upper bound of the exact
 * spent ε</b>, and the spent ε is at most the ε asked for.
 *
 * <p>A mechanism picks its integers (a dyadic p, a number of noise steps, scales) so that the
 * exact privacy loss, checked in exact or rigorously bounded arithmetic, is at most the requested
 * ε, and states the exact loss rounded up: never a nearest-rounded double, which can fall an ulp
 * below it. Budgets, ledgers and status reports then charge the stated value. The bounds here lean
 * only on the Java specification's accuracy of {@link Math#log1p} (within 1 ulp), on exact
 * {@link BigDecimal} arithmetic and on one correctly rounded product per step, each followed by
 * {@link Math#nextUp}.
 */
public final class SpentEpsilon {
    /** ln 2 rounded up: the double nearest ln 2 (0x1.62e42fefa39efp-1) lies below it. */
    static final double LN2_UP = Math.nextUp(Math.log(2));
    private static final MathContext UP = new MathContext(40, RoundingMode.UP);

    private SpentEpsilon() {
    }

    /** A double ≥ ln(num/den), at most a few ulps above it; num ≥ den > 0. */
    public static double lnRatioUp(BigInteger num, BigInteger den) {
        if (den.signum() <= 0 || num.compareTo(den) < 0) {
            throw new IllegalArgumentException("need num >= den > 0, was " + num + "/" + den);
        }
        // num/den = 2^e·(1 + x) with x ∈ [0, 1): ln = e·ln 2 + ln(1 + x), two positive terms, no cancellation.
        int e = num.bitLength() - den.bitLength();
        if (den.shiftLeft(e).compareTo(num) > 0) {
            e--;
        }
        BigInteger scaled = den.shiftLeft(e);
        double x = divideUp(num.subtract(scaled), scaled);
        // log1p is within 1 ulp of ln(1 + x), and ln(1 + x) is increasing: two steps up cover both.
        double lnMantissa = Math.nextUp(Math.nextUp(Math.log1p(x)));
        if (e == 0) {
            return lnMantissa;
        }
        double lnPower = Math.nextUp(e * LN2_UP);
        return Math.nextUp(lnPower + lnMantissa);
    }

    /** A double ≥ num/den, at most one ulp above it; num ≥ 0, den > 0. */
    public static double divideUp(BigInteger num, BigInteger den) {
        return up(new BigDecimal(num).divide(new BigDecimal(den), UP));
    }

    /**
     * A double ≥ Σ num_k/den_k, the sum taken exactly over the doubles as given: for a release
     * that spends Δ_k/b_k on coordinate k (Laplace with scale b_k ≥ the exact Δ_k/ε_k).
     */
    public static double quotientSumUp(double[] num, double[] den) {
        if (num.length != den.length) {
            throw new IllegalArgumentException("need as many denominators as numerators: " + den.length + " for " + num.length);
        }
        BigDecimal sum = BigDecimal.ZERO;
        for (int k = 0; k < num.length; k++) {
            // Each quotient rounded up to 40 digits: the sum of upper bounds bounds the sum.
            sum = sum.add(new BigDecimal(num[k]).divide(new BigDecimal(den[k]), UP));
        }
        return up(sum);
    }

    /** The least double ≥ an exact decimal. */
    public static double up(BigDecimal exact) {
        double d = exact.doubleValue();
        return new BigDecimal(d).compareTo(exact) < 0 ? Math.nextUp(d) : d;
    }

    /** Refuses a stated ε above the ε asked for: the mechanism must pick its integers so this holds. */
    public static double checkWithin(double stated, double requested) {
        if (!(stated <= requested)) {
            throw new IllegalStateException("stated ε " + stated + " exceeds the requested " + requested);
        }
        return stated;
    }
}
