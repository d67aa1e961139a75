package org.privface.privacy.answer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.BigInteger;

import org.junit.jupiter.api.Test;
import org.privface.privacy.CoinTree;
import org.privface.privacy.CoinTree.Q;
import org.privface.privacy.ExactDraws;
import org.privface.privacy.ExactExp;
import org.privface.privacy.SeededRandom;

class RandomizedResponseTest {
    static final double[] PRODUCTION_EPSILONS = {1, 2, 5, 10, 20, 50};

    /**
     * The whole support, exactly: for C = 1 … 12 at each production ε, every answer's output
     * distribution is enumerated through every draw; it must be κ on the answer and (1 − κ)/C on
     * each other output, and the largest ratio between any two answers over any output, an exact
     * fraction, must lie between e^(stated ε − 1e-12) and e^(stated ε) and never above e^(target ε).
     */
    @Test
    void exactDistributionOverTheWholeSupportMeetsTheStatedEpsilon() {
        for (int c = 1; c <= 12; c++) {
            for (double eps : PRODUCTION_EPSILONS) {
                RandomizedResponse rr = RandomizedResponse.forEpsilon(c, eps, SeededRandomDraws.of(0));
                Q[][] p = new Q[c + 1][];
                BigInteger den = rr.channelDenominator();
                for (int x = 0; x <= c; x++) {
                    p[x] = distribution(rr, x);
                    Q total = Q.ZERO;
                    for (int y = 0; y <= c; y++) {
                        assertEquals(Q.of(rr.channelNumerator(x, y), den), p[x][y], "C " + c + " ε " + eps);
                        total = total.plus(p[x][y]);
                    }
                    assertEquals(Q.ONE, total);
                }
                Q worst = Q.ONE;
                for (int x = 0; x <= c; x++) {
                    for (int x2 = 0; x2 <= c; x2++) {
                        for (int y = 0; y <= c; y++) {
                            Q ratio = p[x][y].over(p[x2][y]);
                            if (ratio.compareTo(worst) > 0) {
                                worst = ratio;
                            }
                        }
                    }
                }
                BigDecimal wn = new BigDecimal(worst.num());
                BigDecimal wd = new BigDecimal(worst.den());
                double stated = rr.epsilon();
                assertTrue(stated <= eps, "stated ε " + stated + " above the target " + eps);
                assertTrue(ExactExp.lower(stated).multiply(wd).compareTo(wn) >= 0, "ratio above e^stated, C " + c + " ε " + eps);
                assertTrue(ExactExp.lower(eps).multiply(wd).compareTo(wn) >= 0, "ratio above e^target");
                assertTrue(ExactExp.upper(stated - 1e-12 * stated).multiply(wd).compareTo(wn) < 0,
                        "stated ε more than rounding above the true one, C " + c + " ε " + eps);
                if (eps <= 40) {
                    assertEquals(eps, stated, 1e-9, "the 2^-62 grid costs next to nothing below its cap");
                } else {
                    assertEquals(Math.log(((1L << 62) - 1) * (double) c), stated, 1e-9, "at the grid's cap");
                }
            }
        }
    }

    /**
     * The exact output distribution of one release of the answer over outputs 0 … C: the library's
     * one enumerator of exact coins ({@link CoinTree}) walks every draw of a release with rr's keep
     * numerator, weighting each path by the exact probability of its choices; nothing is cut.
     */
    static Q[] distribution(RandomizedResponse rr, int answer) {
        CoinTree.Result<Integer> r = CoinTree.enumerate(
                bits -> new RandomizedResponse(rr.identities(), rr.keepNumerator(), bits).release(answer), Q.ZERO,
                CoinTree.Mutation.NONE);
        assertEquals(Q.ZERO, r.unexplored(), "every path followed");
        Q[] p = new Q[rr.identities() + 1];
        for (int y = 0; y <= rr.identities(); y++) {
            p[y] = r.probability(y);
        }
        return p;
    }

    @Test
    void keepProbabilityIsTheOptimalOne() {
        RandomizedResponse rr = RandomizedResponse.forEpsilon(14, 10, SeededRandomDraws.of(1));
        assertEquals(Math.exp(10) / (Math.exp(10) + 14), rr.keepProbability(), 1e-12);
        assertEquals(14, rr.identities());
    }

    /**
     * The estimator is unbiased: fed the exact expected output counts of a known population it
     * returns that population (linear, so expectation goes through).
     */
    @Test
    void countEstimateInvertsTheChannel() {
        for (int c : new int[] {1, 3, 12}) {
            for (double eps : PRODUCTION_EPSILONS) {
                RandomizedResponse rr = RandomizedResponse.forEpsilon(c, eps, SeededRandomDraws.of(2));
                long[] truth = new long[c + 1];
                for (int x = 0; x <= c; x++) {
                    truth[x] = 7L * x + 3;
                }
                double[] expected = new double[c + 1];
                for (int y = 0; y <= c; y++) {
                    BigDecimal sum = BigDecimal.ZERO;
                    for (int x = 0; x <= c; x++) {
                        sum = sum.add(new BigDecimal(rr.channelNumerator(x, y).multiply(BigInteger.valueOf(truth[x]))));
                    }
                    expected[y] = sum.divide(new BigDecimal(rr.channelDenominator()), java.math.MathContext.DECIMAL128)
                            .doubleValue();
                }
                double[] t = rr.estimateCounts(expected);
                for (int x = 0; x <= c; x++) {
                    assertEquals(truth[x], t[x], 1e-6 * truth[x], "C " + c + " ε " + eps);
                }
            }
        }
        assertThrows(IllegalArgumentException.class,
                () -> RandomizedResponse.forEpsilon(3, 1, SeededRandomDraws.of(1)).estimateCounts(new double[3]));
    }

    /**
     * The production path (DRBG bits through {@link ExactDraws#secure}): 200,000 releases of one
     * answer at C = 4, ε = 1 against the exact distribution (chi-square, 4 degrees of freedom,
     * 1e-6 quantile about 33), and the same counts must reject a channel with another κ; the
     * estimator recovers the count.
     */
    @Test
    void secureSamplerMatchesTheChannelAndANegativeControlIsRejected() {
        int c = 4;
        RandomizedResponse rr = RandomizedResponse.forEpsilon(c, 1, ExactDraws.secure(SeededRandom.of(11)));
        int n = 200_000;
        double[] counts = new double[c + 1];
        for (int i = 0; i < n; i++) {
            counts[rr.release(2)]++;
        }
        double keep = rr.keepProbability();
        assertTrue(chi(counts, 2, keep, n) < 33, "chi-square " + chi(counts, 2, keep, n));
        assertTrue(chi(counts, 2, keep - 0.02, n) > 33, "negative control not rejected");
        double[] t = rr.estimateCounts(counts);
        assertEquals(n, t[2], 6 * Math.sqrt(n));
        assertEquals(0, t[0], 6 * Math.sqrt(n));
    }

    static double chi(double[] counts, int answer, double keep, int n) {
        double chi = 0;
        for (int y = 0; y < counts.length; y++) {
            double e = n * (y == answer ? keep : (1 - keep) / (counts.length - 1));
            chi += (counts[y] - e) * (counts[y] - e) / e;
        }
        return chi;
    }

    @Test
    void falsePositiveRatesConvertBothWays() {
        RandomizedResponse rr = RandomizedResponse.forEpsilon(5, 10, SeededRandomDraws.of(1));
        double t = rr.decoderFalsePositiveRate(0.01);
        assertEquals(0.01, rr.releasedFalsePositiveRate(t), 1e-12);
        assertTrue(t < 0.01 && t > 0.009);
        // At ε 5 with 5 people a rejected stranger is named with probability 5/(e^5 + 5) > 1 %: unreachable.
        assertTrue(RandomizedResponse.forEpsilon(5, 5, SeededRandomDraws.of(1)).decoderFalsePositiveRate(0.01) < 0);
    }

    @Test
    void badInputIsRefused() {
        ExactDraws d = SeededRandomDraws.of(1);
        assertThrows(IllegalArgumentException.class, () -> RandomizedResponse.forEpsilon(0, 1, d));
        assertThrows(IllegalArgumentException.class, () -> RandomizedResponse.forEpsilon(3, 0, d));
        assertThrows(IllegalArgumentException.class, () -> RandomizedResponse.forEpsilon(3, Double.NaN, d));
        assertThrows(IllegalArgumentException.class, () -> RandomizedResponse.forEpsilon(3, 1e-30, d));
        // κ = 1/4 with 3 identities is exactly uniform over 4 outputs: not a response at all.
        assertThrows(IllegalArgumentException.class, () -> new RandomizedResponse(3, 1L << 60, d));
        RandomizedResponse rr = RandomizedResponse.forEpsilon(3, 1, d);
        assertThrows(IllegalArgumentException.class, () -> rr.release(4));
        assertThrows(IllegalArgumentException.class, () -> rr.release(-1));
        assertArrayEquals(new double[] {0, 0, 0, 0}, rr.estimateCounts(new double[4]));
    }

    /** A wrong number of counts is refused with the number needed: C + 1, one per output. */
    @Test
    void theCountEstimateSaysHowManyCountsItNeeds() {
        RandomizedResponse rr = RandomizedResponse.forEpsilon(3, 1, SeededRandomDraws.of(1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> rr.estimateCounts(new double[3]));
        assertEquals("need 4 counts, was 3", e.getMessage());
    }

    /**
     * What the gateway runs (the system's DRBG): the same keep numerator and ε as with any other
     * draws, its accessors consistent with them, and its releases in [0, C] with C the unknown.
     */
    @Test
    void theGatewaysReleaseOnTheSystemGeneratorHasTheSameChannel() {
        RandomizedResponse rr = RandomizedResponse.forEpsilon(5, 3);
        RandomizedResponse seeded = RandomizedResponse.forEpsilon(5, 3, SeededRandomDraws.of(1));
        assertEquals(seeded.keepNumerator(), rr.keepNumerator());
        assertEquals(seeded.epsilon(), rr.epsilon());
        assertEquals(5, rr.unknown());
        assertEquals(RandomizedResponse.epsilonOf(5, rr.keepNumerator()), rr.epsilon());
        assertEquals(rr.keepNumerator() / (double) (1L << RandomizedResponse.KEEP_BITS), rr.keepProbability());
        // κ = q exactly (a·(C + 1) = 2^62): the channel tells nothing, ε is 0, not a rounding above it.
        assertEquals(0.0, RandomizedResponse.epsilonOf(3, 1L << 60));
        assertTrue(RandomizedResponse.epsilonOf(3, (1L << 60) + 1) > 0);
        assertEquals(BigInteger.valueOf(rr.keepNumerator()).multiply(BigInteger.valueOf(5)), rr.channelNumerator(2, 2));
        boolean[] seen = new boolean[6];
        for (int i = 0; i < 2000; i++) {
            seen[rr.release(rr.unknown())] = true;
        }
        for (int y = 0; y <= 5; y++) {
            assertTrue(seen[y], "output " + y + " never released in 2000 tries at ε 3");
        }
    }

    /** Production draws from a seeded generator, so the statistical tests reproduce. */
    static final class SeededRandomDraws {
        static ExactDraws of(long seed) {
            return ExactDraws.secure(SeededRandom.of(seed));
        }
    }
}
