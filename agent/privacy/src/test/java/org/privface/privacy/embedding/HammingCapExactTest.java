package org.privface.privacy.embedding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;

import org.junit.jupiter.api.Test;
import org.privface.privacy.CoinTree;
import org.privface.privacy.CoinTree.Mutation;
import org.privface.privacy.CoinTree.Q;
import org.privface.privacy.SeededRandom;

/**
 * {@link HammingCap#release} run on scripted coins ({@link CoinTree}) along every path, for every
 * K ≤ 10 and r &lt; K: its exact output distribution for two inputs, compared as exact rationals
 * with the closed form (binomials computed here, not by the class) and, through the worst ratio
 * over all outputs, with e^ε for the ε the cap states. The tree is finite, so nothing is left
 * unexplored; a sampler with any coin 0.1 % off fails the same check.
 */
class HammingCapExactTest {
    /** The ε tried per shape: the first the shape accepts (large balls need a large ε). */
    static final double[] EPSILONS = {2, 8, 20};
    /**
     * The largest K enumerated: 10 in {@code mvn verify}; the PIT profile sets
     * {@code privface.hammingcap.maxK} lower so each mutant costs seconds, not the full enumeration.
     */
    static final int MAX_K = Integer.getInteger("privface.hammingcap.maxK", 10);

    @Test
    void everyShapeUpToTenBitsReleasesExactlyTheStatedDistribution() {
        int checked = 0;
        for (int k = 1; k <= MAX_K; k++) {
            for (int r = 0; r < k; r++) {
                HammingCap cap = firstAccepted(k, r);
                assertNotNull(cap, "no ε accepted for K = " + k + ", r = " + r);
                String failure = check(cap, Mutation.NONE);
                assertNull(failure, failure);
                checked++;
            }
        }
        assertEquals(MAX_K * (MAX_K + 1) / 2, checked);
    }

    /** The same check on a sampler whose coins (all of the cap's draws are coins) are 0.1 % off: it must fail. */
    @Test
    void theCheckFailsForAMutantSamplerWhoseCoinIsAThousandthOff() {
        for (int[] shape : new int[][] {{4, 1}, {6, 0}, {7, 3}}) {
            HammingCap cap = firstAccepted(shape[0], shape[1]);
            assertNotNull(check(cap, Mutation.COIN_RATE), "a 0.1% coin shift passed for " + shape[0] + "/" + shape[1]);
        }
    }

    /** p = m/2^32 must lie strictly inside (0, 1): p = 0 and p = 1 are refused, their neighbours accepted (kills PIT's boundary mutants). */
    @Test
    void theKeepNumeratorMustLieStrictlyInsideTheUnitInterval() {
        assertThrows(IllegalArgumentException.class, () -> new HammingCap(4, 1, 0, SeededRandom.of(1)));
        assertThrows(IllegalArgumentException.class, () -> new HammingCap(4, 1, 1L << 32, SeededRandom.of(1)));
        assertEquals(1, new HammingCap(4, 1, 1, SeededRandom.of(1)).pNumerator());
        assertEquals((1L << 32) - 1, new HammingCap(4, 1, (1L << 32) - 1, SeededRandom.of(1)).pNumerator());
    }

    /** The reproduction: the ε ≥ 35 preset shape at this ε used to spend 4.7e-7 more than asked. */
    @Test
    void theSpentEpsilonNeverExceedsTheRequestedOne() {
        double requested = 62.36774159047502;
        HammingCap cap = HammingCap.forEpsilon(64, 1, requested, SeededRandom.of(1));
        assertTrue(cap.epsilon() <= requested, "spent " + cap.epsilon() + " > requested " + requested);
        // Exactly: e^stated ≥ the exact ratio, and the next numerator would spend more than asked.
        assertTrue(ratio(64, 1, cap.pNumerator()).compareTo(CoinTree.expBounds(CoinTree.exact(cap.epsilon()), 200)[0]) <= 0);
        assertTrue(HammingCap.epsilon(64, 1, cap.pNumerator() + 1) > requested);
        System.out.printf("forEpsilon(64, 1, %s): m = %d, stated ε %s (requested − stated = %.3g)%n", requested,
                cap.pNumerator(), cap.epsilon(), requested - cap.epsilon());
    }

    private static HammingCap firstAccepted(int k, int r) {
        for (double eps : EPSILONS) {
            try {
                return HammingCap.forEpsilon(k, r, eps, SeededRandom.of(1));
            } catch (IllegalArgumentException tooSmall) {
                // this ε cannot favour a ball this large on p's grid; try the next
            }
        }
        return null;
    }

    /** m(2^K − V) / ((2^32 − m)V): the worst ratio P(y | x)/P(y | x′), from binomials computed here. */
    static Q ratio(int k, int r, long m) {
        BigInteger v = ball(k, r);
        BigInteger rest = BigInteger.ONE.shiftLeft(k).subtract(v);
        return Q.of(BigInteger.valueOf(m).multiply(rest), BigInteger.ONE.shiftLeft(32).subtract(BigInteger.valueOf(m)).multiply(v));
    }

    /** Σ_{j ≤ r} C(K, j) by Pascal's rule. */
    static BigInteger ball(int k, int r) {
        BigInteger[] row = {BigInteger.ONE};
        for (int n = 1; n <= k; n++) {
            BigInteger[] next = new BigInteger[n + 1];
            for (int j = 0; j <= n; j++) {
                next[j] = (j == 0 || j == n) ? BigInteger.ONE : row[j - 1].add(row[j]);
            }
            row = next;
        }
        BigInteger v = BigInteger.ZERO;
        for (int j = 0; j <= r; j++) {
            v = v.add(row[j]);
        }
        return v;
    }

    /**
     * Null when the cap's release, run on the (possibly mutated) coins along every path, gives
     * exactly P(y | x) = p/V inside B(x, r) and (1 − p)/(2^K − V) outside for x = 0 and x = 1…1,
     * and the worst ratio R over both inputs and all outputs satisfies e^{ε − 1e-12} &lt; R ≤ e^ε
     * for the stated ε; otherwise what failed.
     */
    static String check(HammingCap cap, Mutation mutation) {
        int k = cap.bits();
        int r = cap.radius();
        BigInteger two32 = BigInteger.ONE.shiftLeft(32);
        BigInteger m = BigInteger.valueOf(cap.pNumerator());
        BigInteger v = ball(k, r);
        BigInteger rest = BigInteger.ONE.shiftLeft(k).subtract(v);
        Q inside = Q.of(m, two32.multiply(v));
        Q outside = Q.of(two32.subtract(m), two32.multiply(rest));
        Q[][] p = new Q[2][];
        for (int input = 0; input < 2; input++) {
            boolean[] x = new boolean[k];
            java.util.Arrays.fill(x, input == 1);
            CoinTree.Result<Integer> result = CoinTree.enumerate(coins -> code(cap.release(x, coins)), Q.ZERO, mutation);
            if (result.unexplored().num().signum() != 0) {
                return "the tree is finite, yet mass was left unexplored";
            }
            p[input] = new Q[1 << k];
            for (int y = 0; y < 1 << k; y++) {
                p[input][y] = result.probability(y);
                int distance = Integer.bitCount(input == 1 ? ~y & ((1 << k) - 1) : y);
                Q expected = distance <= r ? inside : outside;
                if (p[input][y].compareTo(expected) != 0) {
                    return "K " + k + " r " + r + " x " + input + " y " + y + ": P = " + p[input][y] + ", exact " + expected;
                }
            }
        }
        Q worst = Q.ONE;
        for (int y = 0; y < 1 << k; y++) {
            Q a = p[0][y].over(p[1][y]);
            Q b = p[1][y].over(p[0][y]);
            worst = a.compareTo(worst) > 0 ? a : worst;
            worst = b.compareTo(worst) > 0 ? b : worst;
        }
        double eps = cap.epsilon();
        int terms = (int) (2 * eps + 40);
        if (worst.compareTo(CoinTree.expBounds(CoinTree.exact(eps), terms)[0]) > 0) {
            return "K " + k + " r " + r + ": worst ratio " + worst + " above e^" + eps;
        }
        double below = eps - 1e-12 * Math.max(1, eps);
        if (worst.compareTo(CoinTree.expBounds(CoinTree.exact(below), terms)[1]) <= 0) {
            return "K " + k + " r " + r + ": stated ε " + eps + " is not tight, the worst ratio is " + worst;
        }
        return null;
    }

    private static int code(boolean[] y) {
        int c = 0;
        for (int i = 0; i < y.length; i++) {
            c |= y[i] ? 1 << i : 0;
        }
        return c;
    }
}
