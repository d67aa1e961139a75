package org.privface.privacy.embedding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;

import org.junit.jupiter.api.Test;
import org.privface.privacy.SeededRandom;

class HammingCapTest {
    static final int[][] SHAPES = {{4, 0}, {8, 1}, {16, 1}, {16, 2}, {24, 0}, {32, 2}, {64, 1}, {64, 8}};
    static final double[] EPSILONS = {1, 2, 5, 10, 16, 20, 30, 50, 100};

    /**
     * The output distribution written out exactly over the whole cube, as rationals: P(y | x) is
     * m/2^32 · 1/V inside B(x, r) and (2^32 − m)/2^32 · 1/(2^K − V) outside; the largest ratio
     * between any two inputs over every output must be e^ε with the ε the cap records.
     */
    @Test
    void recordedEpsilonIsTheExactWorstCaseRatioOverTheWholeOutputSpace() {
        for (int[] shape : SHAPES) {
            for (double eps : EPSILONS) {
                HammingCap cap;
                try {
                    cap = HammingCap.forEpsilon(shape[0], shape[1], eps, SeededRandom.of(1));
                } catch (IllegalArgumentException tooSmall) {
                    continue; // the ball is too large for this ε: refused, nothing released
                }
                int k = shape[0];
                BigInteger v = HammingCap.ballSize(HammingCap.binomials(k), shape[1]);
                BigInteger rest = BigInteger.ONE.shiftLeft(k).subtract(v);
                BigInteger m = BigInteger.valueOf(cap.pNumerator());
                BigInteger notM = HammingCap.P_DENOMINATOR.subtract(m);
                // Inside and outside probabilities as fractions over a common denominator 2^32·V·(2^K − V).
                BigInteger inside = m.multiply(rest);
                BigInteger outside = notM.multiply(v);
                // Every output y has, for some x and x', y in B(x, r) and not in B(x', r) (r < K).
                BigDecimal ratio = new BigDecimal(inside).divide(new BigDecimal(outside), MathContext.DECIMAL128);
                double worst = Math.max(ratio.doubleValue(), 1 / ratio.doubleValue());
                assertEquals(Math.log(worst), cap.epsilon(), 1e-12 * Math.max(1, cap.epsilon()), shape[0] + "/" + shape[1] + " ε " + eps);
                assertTrue(inside.compareTo(outside) > 0, "the ball must get more than its uniform share");
                assertTrue(cap.epsilon() <= eps + 1e-12, "p is rounded down: never above the target, " + cap.epsilon());
                // The largest numerator on the grid whose stated ε is within the request: one more would exceed it.
                long next = cap.pNumerator() + 1;
                assertTrue(next == 1L << 32 || HammingCap.epsilon(k, shape[1], next) > eps, k + "/" + shape[1] + " ε " + eps + ": " + next + " also fits");
            }
        }
    }

    @Test
    void roundingPDownCostsAlmostNothingBelowTheCeilingOfP() {
        HammingCap cap = HammingCap.forEpsilon(16, 1, 10, SeededRandom.of(1));
        assertEquals(10, cap.epsilon(), 1e-6);
    }

    @Test
    void epsilonsTooSmallForTheBallAreRefused() {
        // A ball of 255 of the 256 codes cannot get more than its share at a vanishing ε on p's 2^-32 grid.
        assertThrows(IllegalArgumentException.class, () -> HammingCap.forEpsilon(8, 7, 1e-12, SeededRandom.of(1)));
        assertThrows(IllegalArgumentException.class, () -> HammingCap.forEpsilon(8, 8, 10, SeededRandom.of(1)));
        assertThrows(IllegalArgumentException.class, () -> HammingCap.forEpsilon(0, 0, 10, SeededRandom.of(1)));
    }

    /**
     * K = 6, r = 1: all 64 outputs' frequencies against the exact distribution (chi-square), and
     * the in-ball frequency against p; the same test must reject the distribution of a cap with
     * another p (negative control).
     */
    @Test
    void samplerMatchesTheExactDistributionAndANegativeControlIsRejected() {
        int k = 6;
        HammingCap cap = HammingCap.forEpsilon(k, 1, 2.0, SeededRandom.of(7));
        boolean[] x = {true, false, true, true, false, false};
        int n = 200_000;
        long[] counts = new long[1 << k];
        int inBall = 0;
        for (int i = 0; i < n; i++) {
            boolean[] y = cap.release(x);
            int code = 0;
            int d = 0;
            for (int j = 0; j < k; j++) {
                code |= (y[j] ? 1 : 0) << j;
                d += y[j] != x[j] ? 1 : 0;
            }
            counts[code]++;
            inBall += d <= 1 ? 1 : 0;
        }
        double p = cap.p();
        double sd = Math.sqrt(p * (1 - p) / n);
        assertEquals(p, inBall / (double) n, 5 * sd, "frequency of the cap");
        double chi = chiSquare(counts, x, p, 1, n);
        double control = chiSquare(counts, x, p - 0.05, 1, n);
        // 63 degrees of freedom: the 1e-6 upper quantile is about 130.
        assertTrue(chi < 130, "chi-square " + chi);
        assertTrue(control > 130, "negative control not rejected: " + control);
    }

    static double chiSquare(long[] counts, boolean[] x, double p, int r, int n) {
        int k = x.length;
        int v = 0;
        for (int j = 0; j <= r; j++) {
            v += HammingCap.binomials(k)[j].intValueExact();
        }
        double chi = 0;
        for (int code = 0; code < counts.length; code++) {
            int d = 0;
            for (int j = 0; j < k; j++) {
                d += ((code >> j & 1) == 1) != x[j] ? 1 : 0;
            }
            double expected = n * (d <= r ? p / v : (1 - p) / ((1 << k) - v));
            chi += (counts[code] - expected) * (counts[code] - expected) / expected;
        }
        return chi;
    }

    @Test
    void releaseLeavesItsInputAloneAndChecksItsLength() {
        HammingCap cap = HammingCap.forEpsilon(8, 1, 5, SeededRandom.of(3));
        boolean[] x = new boolean[8];
        cap.release(x);
        assertTrue(!x[0] && !x[7]);
        assertThrows(IllegalArgumentException.class, () -> cap.release(new boolean[7]));
    }

    /** C(K, j) for every j ≤ K, K ≤ 20, against Pascal's rule computed here: the last entry C(K, K) = 1 included. */
    @Test
    void binomialsAreAWholeRowOfPascalsTriangle() {
        long[] row = {1};
        for (int k = 1; k <= 20; k++) {
            long[] next = new long[k + 1];
            next[0] = 1;
            next[k] = 1;
            for (int j = 1; j < k; j++) {
                next[j] = row[j - 1] + row[j];
            }
            row = next;
            BigInteger[] c = HammingCap.binomials(k);
            assertEquals(k + 1, c.length);
            for (int j = 0; j <= k; j++) {
                assertEquals(BigInteger.valueOf(row[j]), c[j], "C(" + k + ", " + j + ")");
            }
        }
    }

    /**
     * A request of exactly the ε a numerator states gets that numerator (the check is ≤, not &lt;),
     * down to the smallest one above the ball's share; a hair less is refused there.
     */
    @Test
    void aRequestOfExactlyAStatedEpsilonGetsItsNumerator() {
        for (int[] shape : new int[][] {{4, 1}, {8, 1}, {16, 2}, {64, 1}}) {
            BigInteger v = HammingCap.ballSize(HammingCap.binomials(shape[0]), shape[1]);
            long floor = v.shiftLeft(32).shiftRight(shape[0]).longValueExact() + 1;
            for (long m : new long[] {floor, floor + 1, 3_000_000_000L, (1L << 32) - 2, (1L << 32) - 1}) {
                double stated = HammingCap.epsilon(shape[0], shape[1], m);
                if (m < (1L << 32) - 1 && stated == HammingCap.epsilon(shape[0], shape[1], m + 1)) {
                    continue; // two numerators share a double: the larger one is the answer
                }
                assertEquals(m, HammingCap.forEpsilon(shape[0], shape[1], stated, SeededRandom.of(1)).pNumerator(),
                        shape[0] + "/" + shape[1] + " at ε " + stated);
            }
            double least = HammingCap.epsilon(shape[0], shape[1], floor);
            assertThrows(IllegalArgumentException.class,
                    () -> HammingCap.forEpsilon(shape[0], shape[1], Math.nextDown(least), SeededRandom.of(1)));
        }
    }

    /**
     * Bad shapes and numerators are refused by their own checks, with messages that say which bound
     * was broken (the exact arithmetic behind them would also fail, but with a message about fractions).
     */
    @Test
    void badShapesAndNumeratorsAreRefusedWithTheBoundTheyBreak() {
        HammingCap.checkShape(1, 0);
        HammingCap.checkShape(4096, 0);
        HammingCap.checkShape(8, 7);
        assertEquals("need 1 to 4096 bits, was 0", assertThrows(IllegalArgumentException.class, () -> HammingCap.checkShape(0, 0)).getMessage());
        assertEquals("need 1 to 4096 bits, was 4097",
                assertThrows(IllegalArgumentException.class, () -> HammingCap.checkShape(4097, 0)).getMessage());
        assertEquals("radius must be in [0, 8), was 8", assertThrows(IllegalArgumentException.class, () -> HammingCap.checkShape(8, 8)).getMessage());
        assertEquals("radius must be in [0, 8), was -1", assertThrows(IllegalArgumentException.class, () -> HammingCap.checkShape(8, -1)).getMessage());
        assertEquals("radius must be in [0, 8), was 8",
                assertThrows(IllegalArgumentException.class, () -> HammingCap.forEpsilon(8, 8, 10, SeededRandom.of(1))).getMessage());
        assertEquals("radius must be in [0, 8), was 8",
                assertThrows(IllegalArgumentException.class, () -> new HammingCap(8, 8, 1L << 31, SeededRandom.of(1))).getMessage());
        assertEquals("p numerator must be in (0, 2^32), was 0",
                assertThrows(IllegalArgumentException.class, () -> new HammingCap(4, 1, 0, SeededRandom.of(1))).getMessage());
        assertEquals("p numerator must be in (0, 2^32), was 4294967296",
                assertThrows(IllegalArgumentException.class, () -> new HammingCap(4, 1, 1L << 32, SeededRandom.of(1))).getMessage());
    }
}
