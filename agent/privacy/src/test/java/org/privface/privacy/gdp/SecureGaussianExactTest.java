package org.privface.privacy.gdp;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Locale;

import org.junit.jupiter.api.Test;
import org.privface.privacy.CoinTree;
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
}
