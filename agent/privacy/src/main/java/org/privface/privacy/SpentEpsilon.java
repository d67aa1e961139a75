package org.privface.privacy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * The ε a mechanism states, computed from its exact integers so that rounding can only overstate
 * it: a stated ε below the true one would be a false promise.
 */
public final class SpentEpsilon {
    private SpentEpsilon() {
    }

    /**
     * A double ≥ ln(num/den), at most a few ulps above it (num ≥ den > 0).
     *
     * <p>num/den = f·2^e with f in [1, 2) and e ≥ 0. f − 1 is rounded up to a double (so
     * ln(1 + (f − 1)⁺) + e·ln 2 ≥ ln(num/den), and ratios near 1 keep their relative precision).
     * Math.log1p is within 1 ulp of the truth, e·Math.log(2) within about 2 ulps of e·ln 2 plus one
     * rounding, and the sum adds one more: the margin of 8 ulps of the largest term covers them all.
     */
    public static double lnRatioUp(BigInteger num, BigInteger den) {
        if (den.signum() <= 0 || num.compareTo(den) < 0) {
            throw new IllegalArgumentException("need num ≥ den > 0, was " + num + "/" + den);
        }
        if (num.equals(den)) {
            return 0;
        }
        int e = num.bitLength() - den.bitLength();
        if (num.compareTo(den.shiftLeft(e)) < 0) {
            e--;
        }
        BigInteger scaledDen = den.shiftLeft(e);
        // f − 1 in [0, 1), rounded up: 40 digits rounded up, then one double step up.
        double fraction = Math.nextUp(new BigDecimal(num.subtract(scaledDen))
                .divide(new BigDecimal(scaledDen), new MathContext(40, RoundingMode.UP)).doubleValue());
        double lnF = Math.log1p(fraction);
        double shift = e * Math.log(2);
        double sum = lnF + shift;
        double margin = 8 * Math.ulp(Math.max(Math.max(lnF, shift), sum));
        return sum + margin;
    }
}
