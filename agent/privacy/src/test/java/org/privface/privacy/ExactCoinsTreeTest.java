package org.privface.privacy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Locale;

import org.junit.jupiter.api.Test;
import org.privface.privacy.CoinTree.Mutation;
import org.privface.privacy.CoinTree.Q;

/**
 * The exact coins and the discrete Laplace ({@link ExactCoins}, what {@link SecureLaplace} draws)
 * enumerated coin by coin with {@link CoinTree}: every coin's rate is an exact rational, the
 * enumeration goes deep enough that the unexplored mass is below 1e-5 of every checked
 * probability, and the closed form is bracketed with exact rationals. The same check run on a
 * mutant whose coin, uniform draw or raw bit is 0.1 % off fails.
 */
class ExactCoinsTreeTest {
    static final Q CUTOFF = Q.of(1, 1L << 34);

    /** P(k) = (1 − q)/(1 + q)·q^|k|, q = e^{−1/T}, bracketed with exact rationals. */
    static Q[] laplacePmf(long t, long k) {
        Q[] q = CoinTree.expNegBounds(Q.of(1, t));
        Q[] qk = CoinTree.expNegBounds(Q.of(Math.abs(k), t));
        Q lo = Q.ONE.minus(q[1]).over(Q.ONE.plus(q[1])).times(qk[0]);
        Q hi = Q.ONE.minus(q[0]).over(Q.ONE.plus(q[0])).times(qk[1]);
        return new Q[] {lo, hi};
    }

    static String checkLaplace(long t, Mutation mutation) {
        // The e^-γ coins as one primitive each (checked coin by coin in exponentialCoinsHaveTheirExactRates).
        CoinTree.Result<Long> r = CoinTree.enumerate(bits -> ExactCoins.discreteLaplace(t, bits), CUTOFF, mutation, false, true);
        return CoinTree.checkPmf(r, k -> laplacePmf(t, k), -3 * t, 3 * t);
    }

    @Test
    void theDiscreteLaplaceHasItsClosedFormToTheLastRationalItCanSee() {
        for (long t : new long[] {1}) {
            String failure = checkLaplace(t, Mutation.NONE);
            assertNull(failure, "T = " + t + ": " + failure);
        }
    }

    @Test
    void aLaplaceSamplerWithAnyPrimitiveAThousandthOffFailsTheCheck() {
        for (Mutation m : new Mutation[] {Mutation.COIN_RATE, Mutation.RAW_BIT}) {
            String failure = checkLaplace(1, m);
            assertNotNull(failure, m + " passed");
            assertTrue(!failure.startsWith("too shallow"), m + ": " + failure);
        }
    }

    /**
     * Deep enough for one round: the mass cut off is about 2T·2^-44 (T values of U, a V chain each),
     * below 1e-5 of P(3T) ≈ 0.016/T for every T here (checkPmf enforces it).
     */
    static final Q ROUND_CUTOFF = Q.of(1, 1L << 44);
    /** The scales T &gt; 1 enumerated: small, odd, a power of two, a wider uniform (production T ≈ 2^20 would branch 2^20 ways). */
    static final long[] ROUND_SCALES = {2, 3, 10, 64};

    /** One round's law: P(k) = (1 − e^-1)/(2T)·e^{−|k|/T}, bracketed with exact rationals. */
    static Q[] roundPmf(long t, long k) {
        Q[] e1 = CoinTree.expNegBounds(Q.ONE);
        Q[] ek = CoinTree.expNegBounds(Q.of(Math.abs(k), t));
        Q c = Q.of(1, 2 * t);
        return new Q[] {Q.ONE.minus(e1[1]).times(c).times(ek[0]), Q.ONE.minus(e1[0]).times(c).times(ek[1])};
    }

    static String checkLaplaceRound(long t, Mutation mutation) {
        CoinTree.Result<Long> r = CoinTree.enumerate(bits -> ExactCoins.laplaceRound(t, bits), ROUND_CUTOFF, mutation, false, true);
        return CoinTree.checkPmf(r, k -> roundPmf(t, k), -3 * t, 3 * t);
    }

    /**
     * The discrete Laplace at T &gt; 1, through one round of its loop ({@link ExactCoins#laplaceRound}):
     * rounds draw fresh coins, so the sampler returns the round's law conditioned on not being
     * rejected, and a round's law ∝ e^{−|k|/T} on the integers is exactly the discrete Laplace. One
     * round's paths do not nest retries, so the enumeration reaches 2^-44 and the unexplored mass
     * stays below 1e-5 of every P(k), |k| ≤ 3T (checkPmf enforces it).
     */
    @Test
    void oneLaplaceRoundHasItsClosedFormAtScalesAboveOne() {
        for (long t : ROUND_SCALES) {
            String failure = checkLaplaceRound(t, Mutation.NONE);
            assertNull(failure, "T = " + t + ": " + failure);
        }
        System.out.printf(Locale.ROOT, "[exact-dp] Laplace round enumerated to 2^-44 at T = %s%n", java.util.Arrays.toString(ROUND_SCALES));
    }

    /** The same check fails at T &gt; 1 for a 0.1 % shift of the e^-γ coins, of the uniform U, or of the sign bit. */
    @Test
    void aLaplaceRoundWithAnyPrimitiveAThousandthOffFailsAtScalesAboveOne() {
        for (long t : new long[] {3, 10}) {
            for (Mutation m : new Mutation[] {Mutation.COIN_RATE, Mutation.UNIFORM_ZERO, Mutation.RAW_BIT}) {
                String failure = checkLaplaceRound(t, m);
                assertNotNull(failure, m + " passed at T = " + t);
                assertTrue(!failure.startsWith("too shallow"), m + ": " + failure);
            }
        }
    }

    /** P(x) = (1 − e^{−1/T})·e^{−x/T}, bracketed with exact rationals. */
    static Q[] geometricPmf(long t, long x) {
        Q[] q = CoinTree.expNegBounds(Q.of(1, t));
        Q[] qx = CoinTree.expNegBounds(Q.of(x, t));
        return new Q[] {Q.ONE.minus(q[1]).times(qx[0]), Q.ONE.minus(q[0]).times(qx[1])};
    }

    /**
     * The geometric magnitude alone (KNormGradient's radius): its whole loop, retries included,
     * enumerated with the e^-γ coins as primitives, against its closed form; a coin 0.1 % off fails.
     */
    @Test
    void theGeometricHasItsClosedForm() {
        // T = 2 already retries (U = 1 is rejected with probability 1 − e^{-1/2}); retries do not merge, so T stays small.
        for (long t : new long[] {1, 2}) {
            CoinTree.Result<Long> r = CoinTree.enumerate(bits -> ExactCoins.geometric(t, bits), CUTOFF, Mutation.NONE, false, true);
            String failure = CoinTree.checkPmf(r, x -> geometricPmf(t, x), 0, 3 * t);
            assertNull(failure, "T = " + t + ": " + failure);
        }
        CoinTree.Result<Long> mutant = CoinTree.enumerate(bits -> ExactCoins.geometric(2, bits), CUTOFF, Mutation.COIN_RATE, false, true);
        String caught = CoinTree.checkPmf(mutant, x -> geometricPmf(2, x), 0, 6);
        assertNotNull(caught, "a 0.1% coin passed in the geometric");
        assertTrue(!caught.startsWith("too shallow"), caught);
        assertThrows(IllegalArgumentException.class, () -> ExactCoins.geometric(0, new ExactCoins.Bits(SeededRandom.of(1), 64)));
        assertThrows(IllegalArgumentException.class, () -> ExactCoins.discreteLaplace(0, new ExactCoins.Bits(SeededRandom.of(1), 64)));
    }

    /** Bernoulli(e^{−num/den}) (CKS Algorithm 1, and the loop over whole units) at its exact rate. */
    @Test
    void exponentialCoinsHaveTheirExactRates() {
        long[][] cases = {{0, 1}, {1, 1}, {1, 3}, {2, 3}, {5, 5}, {7, 2}, {3, 1 << 20}};
        for (long[] c : cases) {
            CoinTree.Result<Long> r = CoinTree.enumerate(bits -> ExactCoins.bernoulliExp(c[0], c[1], bits) ? 1L : 0L, CUTOFF,
                    Mutation.NONE);
            Q[] rate = CoinTree.expNegBounds(Q.of(c[0], c[1]));
            Q[] tails = {Q.ONE.minus(rate[1]), Q.ONE.minus(rate[0])};
            String failure = CoinTree.checkPmf(r, k -> k == 1 ? rate : tails, c[0] == 0 ? 1 : 0, 1);
            assertNull(failure, c[0] + "/" + c[1] + ": " + failure);
            if (c[0] > 0 && c[0] < c[1]) {
                CoinTree.Result<Long> mutant = CoinTree.enumerate(bits -> ExactCoins.bernoulliExp(c[0], c[1], bits) ? 1L : 0L,
                        CUTOFF, Mutation.COIN_RATE);
                String caught = CoinTree.checkPmf(mutant, k -> k == 1 ? rate : tails, 0, 1);
                assertNotNull(caught, "a 0.1% coin passed in exp(-" + c[0] + "/" + c[1] + ")");
                assertTrue(!caught.startsWith("too shallow"), caught);
            }
        }
    }

    /** The production uniform and coin, run on scripted raw bits: rejection gives every value the same exact mass. */
    @Test
    void uniformsAndCoinsFromRawBitsAreExact() {
        for (long n = 1; n <= 8; n++) {
            long size = n;
            // Rejection retries branch 2^k ways each, so the tree is cut at 2^-24: what it explored must
            // give every value exactly the same mass, and leave little unexplored.
            CoinTree.Result<Long> r = CoinTree.enumerate(bits -> bits.uniform(size), Q.of(1, 1L << 24), Mutation.NONE, true);
            assertTrue(r.unexplored().compareTo(Q.of(1, 1000)) < 0, "n = " + n + ": " + r.unexplored());
            assertEquals(Q.ONE.minus(r.unexplored()), r.probability(0L).times(Q.of(n, 1)), "n = " + n);
            for (long v = 1; v < n; v++) {
                assertEquals(r.probability(0L), r.probability(v), "n = " + n + ": values " + 0 + " and " + v);
            }
            for (long num = 0; num <= n; num++) {
                long heads = num;
                CoinTree.Result<Long> c = CoinTree.enumerate(bits -> bits.bernoulli(heads, size) ? 1L : 0L, Q.of(1, 1L << 24),
                        Mutation.NONE, true);
                // Explored heads : tails is exactly num : (den − num).
                assertEquals(c.probability(1L).times(Q.of(n - heads, 1)), c.probability(0L).times(Q.of(heads, 1)),
                        "Bernoulli(" + heads + "/" + n + ")");
            }
        }
        // A raw bit a thousandth off shows in the uniform draw built on it.
        CoinTree.Result<Long> mutant = CoinTree.enumerate(bits -> bits.uniform(4), Q.ZERO, Mutation.RAW_BIT, true);
        Q quarter = Q.of(1, 4);
        assertNotNull(CoinTree.checkPmf(mutant, k -> new Q[] {quarter, quarter}, 0, 3));
        assertTrue(mutant.unexplored().num().signum() == 0);
        System.out.printf(Locale.ROOT, "[exact-dp] uniform and Bernoulli from raw bits: n <= 8 checked%n");
    }
}
