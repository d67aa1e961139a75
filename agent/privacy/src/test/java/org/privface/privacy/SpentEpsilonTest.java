package org.privface.privacy;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.privface.privacy.CoinTree.Q;

class SpentEpsilonTest {
    /** ln(num/den) ≤ the bound, checked exactly: e^{bound} ≥ num/den with e^x bracketed in rationals; and within 8 ulps. */
    @Test
    void lnRatioUpIsAnUpperBoundWithinAFewUlps() {
        SplittableRandom random = new SplittableRandom(34);
        for (int i = 0; i < 120; i++) {
            BigInteger den = new BigInteger(1 + random.nextInt(120), new java.util.Random(random.nextLong())).add(BigInteger.ONE);
            BigInteger num = den.add(new BigInteger(random.nextInt(90), new java.util.Random(random.nextLong())));
            double up = SpentEpsilon.lnRatioUp(num, den);
            Q ratio = Q.of(num, den);
            int terms = (int) (2 * up) + 40;
            assertTrue(ratio.compareTo(CoinTree.expBounds(CoinTree.exact(up), terms)[0]) <= 0, num + "/" + den + ": " + up);
            double below = up - 8 * Math.ulp(up);
            if (below > 0) {
                assertTrue(ratio.compareTo(CoinTree.expBounds(CoinTree.exact(below), terms)[1]) > 0,
                        num + "/" + den + ": " + up + " is more than 8 ulps above");
            }
        }
        assertTrue(SpentEpsilon.lnRatioUp(BigInteger.TEN, BigInteger.TEN) >= 0);
        assertThrows(IllegalArgumentException.class, () -> SpentEpsilon.lnRatioUp(BigInteger.ONE, BigInteger.TWO));
        assertThrows(IllegalArgumentException.class, () -> SpentEpsilon.lnRatioUp(BigInteger.ONE, BigInteger.ZERO));
    }

    @Test
    void quotientSumUpBoundsTheExactSum() {
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 200; i++) {
            int n = 1 + random.nextInt(64);
            double[] num = new double[n];
            double[] den = new double[n];
            Q exact = Q.ZERO;
            for (int k = 0; k < n; k++) {
                num[k] = random.nextDouble() * 10;
                den[k] = random.nextDouble() * 100 + 1e-3;
                exact = exact.plus(CoinTree.exact(num[k]).over(CoinTree.exact(den[k])));
            }
            double up = SpentEpsilon.quotientSumUp(num, den);
            assertTrue(exact.compareTo(CoinTree.exact(up)) <= 0, "sum " + exact + " above " + up);
            assertTrue(exact.compareTo(CoinTree.exact(Math.nextDown(Math.nextDown(up)))) > 0, "more than 2 ulps above");
        }
    }

    @Test
    void upIsTheLeastDoubleAtOrAbove() {
        BigDecimal third = BigDecimal.ONE.divide(BigDecimal.valueOf(3), new java.math.MathContext(50));
        double up = SpentEpsilon.up(third);
        assertTrue(new BigDecimal(up).compareTo(third) >= 0 && new BigDecimal(Math.nextDown(up)).compareTo(third) < 0);
        assertTrue(SpentEpsilon.up(new BigDecimal(0.5)) == 0.5);
        assertThrows(IllegalStateException.class, () -> SpentEpsilon.checkWithin(Math.nextUp(1.0), 1.0));
    }
}
