package org.privface.privacy.gdp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Locale;

import org.junit.jupiter.api.Test;
import org.privface.privacy.CoinTree;
import org.privface.privacy.ExactCoins;
import org.privface.privacy.CoinTree.Mutation;
import org.privface.privacy.CoinTree.Q;

/**
 * The discrete Gaussian ({@link SecureGaussian#discreteGaussian}) checked by its components, each
 * enumerated coin by coin with {@link CoinTree} and compared as exact rational brackets.
 *
 * <p>How they compose. The sampler returns the first round ({@link SecureGaussian#trial}) that is
 * not rejected, and rounds draw fresh coins, so P(output = y) = P(round = y)/P(round not
 * rejected). A round is one discrete Laplace round at t = s + 1 ({@link
 * org.privface.privacy.ExactCoins#laplaceRound}), which returns y with probability
 * (1 − e^-1)/(2t)·e^{−|y|/t} (checked exactly at T = 2, 3, 10, 64 in ExactCoinsTreeTest), followed,
 * on fresh coins, by the acceptance coin Bernoulli(exp(−(a/b)²/2)), a = | |y|·t − s² |, b = s·t
 * (checked here). The product is (1 − e^-1)/(2t)·e^{−s²/(2t²)}·e^{−y²/(2s²)}, since
 * (|y| − s²/t)²/(2s²) = y²/(2s²) − |y|/t + s²/(2t²); so the output is exactly N_Z(0, s²).
 *
 * <p>Not enumerated as one tree: a whole round. The acceptance coin's paths do not merge; at
 * c = ⌈a/b⌉ = 3 (m = 5 factors) the tree needs about 56,000 paths to leave 1e-5 unexplored, and a
 * round at s = 1 to 2^-26 still left 1.4e-3 unexplored (66,000 paths, 73 s here). So the acceptance
 * coin is enumerated here for c ≤ 2, the shapes with m ≤ 2 factors, which cover every candidate
 * |y| ≤ 2 at s = 1 and |y| ≤ 5 at s = 2; larger c runs the same loop code m times.
 */
class SecureGaussianExactTest {
    /** Deep enough that the unexplored mass is below 1e-5 of both outcomes (checkPmf enforces it). */
    static final Q CUTOFF = Q.of(1, 1L << 30);

    /** Bernoulli(exp(−(a/b)²/2)) at its exact rate, and a 0.1 % coin in it fails the check. */
    @Test
    void theAcceptanceCoinHasItsExactRate() {
        // (a, b): b = 2 is s = 1 (a = 1, 1, 3 for |y| = 0, 1, 2); b = 6 is s = 2 (a = 4, 1, 2, 5, 8, 11).
        long[][] cases = {{0, 1}, {1, 2}, {3, 2}, {4, 2}, {1, 6}, {2, 6}, {4, 6}, {5, 6}, {8, 6}, {11, 6}, {12, 6}};
        for (long[] c : cases) {
            CoinTree.Result<Long> r = CoinTree.enumerate(bits -> SecureGaussian.bernoulliExpHalfSquare(c[0], c[1], bits) ? 1L : 0L,
                    CUTOFF, Mutation.NONE);
            Q[] rate = CoinTree.expNegBounds(Q.of(c[0] * c[0], 2 * c[1] * c[1]));
            Q[] tails = {Q.ONE.minus(rate[1]), Q.ONE.minus(rate[0])};
            String failure = CoinTree.checkPmf(r, k -> k == 1 ? rate : tails, c[0] == 0 ? 1 : 0, 1);
            assertNull(failure, c[0] + "/" + c[1] + ": " + failure);
            if (c[0] > 0) {
                CoinTree.Result<Long> mutant = CoinTree.enumerate(
                        bits -> SecureGaussian.bernoulliExpHalfSquare(c[0], c[1], bits) ? 1L : 0L, CUTOFF, Mutation.COIN_RATE);
                String caught = CoinTree.checkPmf(mutant, k -> k == 1 ? rate : tails, 0, 1);
                assertNotNull(caught, "a 0.1% coin passed in the acceptance coin " + c[0] + "/" + c[1]);
                assertTrue(!caught.startsWith("too shallow"), caught);
            }
        }
        System.out.printf(Locale.ROOT, "[exact-dp] Gaussian acceptance coin enumerated to 2^-30 for c <= 2%n");
    }

    /**
     * Scripted primitives for one round: U, then V successes of the e^-1 coin, the sign bit, then the
     * given answers to the acceptance coin's Bernoulli draws (false once they run out), each of which
     * is recorded as num/den.
     */
    static final class Script extends ExactCoins.Bits {
        final long u;
        final long v;
        final long sign;
        final java.util.ArrayDeque<Boolean> answers;
        final java.util.List<String> coins = new java.util.ArrayList<>();
        private long expCoins;

        Script(long u, long v, long sign, Boolean... answers) {
            this.u = u;
            this.v = v;
            this.sign = sign;
            this.answers = new java.util.ArrayDeque<>(java.util.List.of(answers));
        }

        @Override
        public long uniform(long n) {
            return u;
        }

        @Override
        public boolean bernoulliExpAtMostOne(long num, long den) {
            return expCoins++ <= v; // U's coin, then V successes, then the failure that ends V
        }

        @Override
        public long bits(int k) {
            return sign;
        }

        @Override
        public boolean bernoulli(long num, long den) {
            coins.add(num + "/" + den);
            return !answers.isEmpty() && answers.poll();
        }
    }

    /**
     * The acceptance coin is the documented product: m = ⌈c²/2⌉ factors, c = ⌈a/b⌉, factor coin k
     * Bernoulli(c²/(2mk))·Bernoulli(a/(bc))². Any c ≥ a/b and m ≥ c²/2 would give the same law, only
     * more coins, so the law alone cannot pin them: the coins drawn are checked one by one.
     */
    @Test
    void theAcceptanceCoinDrawsTheDocumentedFactors() {
        // a = 5, b = 2: c = 3, m = 5, bc = 6. Every first coin false: each factor ends at k = 1 (odd), accept.
        Script s = new Script(0, 0, 0);
        assertTrue(SecureGaussian.bernoulliExpHalfSquare(5, 2, s));
        assertEquals(java.util.Collections.nCopies(5, "9/10"), s.coins);
        // Three heads then a tail: k = 2 in the first factor (even), reject.
        s = new Script(0, 0, 0, true, true, true);
        assertFalse(SecureGaussian.bernoulliExpHalfSquare(5, 2, s));
        assertEquals(java.util.List.of("9/10", "5/6", "5/6", "9/20"), s.coins);
        // a = 7, b = 2: c = 4 (even), m = 8; a = 7, b = 3: c = 3, m = 5, bc = 9.
        s = new Script(0, 0, 0);
        assertTrue(SecureGaussian.bernoulliExpHalfSquare(7, 2, s));
        assertEquals(java.util.Collections.nCopies(8, "16/16"), s.coins);
        s = new Script(0, 0, 0, true, false);
        assertTrue(SecureGaussian.bernoulliExpHalfSquare(7, 3, s));
        assertEquals(java.util.List.of("9/10", "7/9", "9/10", "9/10", "9/10", "9/10"), s.coins);
        s = new Script(0, 0, 0);
        assertTrue(SecureGaussian.bernoulliExpHalfSquare(0, 3, s));
        assertEquals(java.util.List.of(), s.coins);
    }

    /**
     * A round hands its candidate ±(U + tV) to the acceptance coin up to |y| = 2^40 steps and redraws
     * beyond, at the largest s = 2^20 (t = 2^20 + 1, so U = 1, V = 2^20 − 1 is exactly 2^40); an
     * accepted candidate keeps its sign.
     */
    @Test
    void aRoundTestsCandidatesUpToTheCapAndRedrawsBeyond() {
        long s = 1L << 20;
        long v = s - 1;
        Script atCap = new Script(1, v, 0, true, true, true);
        assertEquals(ExactCoins.REJECTED, SecureGaussian.trial(s, atCap));
        // a = 2^40·t − s² = 2^60, b = s·t, c = ⌈a/b⌉ = 2^20, m = 2^39: factor coins 2^40/(2^40·k), a/(b·c).
        String abc = (1L << 60) + "/" + (1L << 40) * (s + 1);
        assertEquals(java.util.List.of((1L << 40) + "/" + (1L << 40), abc, abc, (1L << 40) + "/" + (1L << 41)), atCap.coins,
                "the candidate at 2^40 steps goes to the acceptance coin");
        Script beyond = new Script(2, v, 0, true, true, true);
        assertEquals(ExactCoins.REJECTED, SecureGaussian.trial(s, beyond));
        assertEquals(java.util.List.of(), beyond.coins, "the candidate at 2^40 + 1 steps is redrawn untested");
        // s = 2, t = 3: U = 1, V = 0 is |y| = 1, a = |3 − 4| = 1, b = 6, c = 1, m = 1: one coin 1/2, tails, accept.
        Script small = new Script(1, 0, 1);
        assertEquals(-1, SecureGaussian.trial(2, small));
        assertEquals(java.util.List.of("1/2"), small.coins);
        assertEquals(1, SecureGaussian.trial(2, new Script(1, 0, 0)));
    }
}
