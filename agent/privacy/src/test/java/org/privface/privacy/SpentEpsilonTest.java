package org.privface.privacy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class SpentEpsilonTest {
    /** e^y ≥ num/den (never understated) and e^(y − 16 ulps) < num/den (a few ulps at most). */
    static void check(BigInteger num, BigInteger den) {
        double y = SpentEpsilon.lnRatioUp(num, den);
        BigDecimal n = new BigDecimal(num);
        BigDecimal d = new BigDecimal(den);
        assertTrue(ExactExp.lower(y).multiply(d).compareTo(n) >= 0, "understated: ln(" + num + "/" + den + ") > " + y);
        double below = y - 16 * Math.ulp(y);
        if (below > 0) {
            assertTrue(ExactExp.upper(below).multiply(d).compareTo(n) < 0, "more than a few ulps above: " + num + "/" + den
                    + " → " + y);
        }
    }

    @Test
    void boundsTheLogFromAboveWithinAFewUlps() {
        SplittableRandom r = new SplittableRandom(5);
        for (int i = 0; i < 400; i++) {
            int bitsDen = 1 + r.nextInt(120);
            BigInteger den = new BigInteger(bitsDen, SeededRandom.of(r.nextLong())).add(BigInteger.ONE);
            int extra = r.nextInt(100);
            BigInteger num = den.shiftLeft(extra).add(new BigInteger(Math.max(1, bitsDen + extra), SeededRandom.of(r.nextLong())));
            check(num, den);
        }
        // Hard cases: ratios just above 1, exact powers of two, and big equal-length numbers.
        check(BigInteger.valueOf(1L << 62), BigInteger.valueOf((1L << 62) - 1));
        check(BigInteger.TWO.pow(200), BigInteger.ONE);
        check(BigInteger.valueOf(3), BigInteger.ONE);
        check(BigInteger.TEN.pow(30).add(BigInteger.ONE), BigInteger.TEN.pow(30));
        assertEquals(0, SpentEpsilon.lnRatioUp(BigInteger.TEN, BigInteger.TEN));
    }

    @Test
    void refusesRatiosBelowOneAndBadDenominators() {
        assertThrows(IllegalArgumentException.class, () -> SpentEpsilon.lnRatioUp(BigInteger.ONE, BigInteger.TWO));
        assertThrows(IllegalArgumentException.class, () -> SpentEpsilon.lnRatioUp(BigInteger.ONE, BigInteger.ZERO));
    }
}
