package org.privface.privacy.answer;

import java.math.BigInteger;
import java.util.Objects;

import org.privface.privacy.ExactDraws;
import org.privface.privacy.Privacy;
import org.privface.privacy.SpentEpsilon;

/**
 * k-ary randomized response over C identities plus "unknown" (C + 1 outputs), with an exact
 * sampler and an exactly stated ε. The optimal mechanism for a small output set at a given ε
 * (Kairouz, Bonawitz, Ramage 2016, "Discrete distribution estimation under local privacy").
 *
 * <p>Mechanism. The input is an answer x ∈ {0, …, C} (C stands for unknown), any function of the
 * face. With probability κ = a/2^62 the output is x; otherwise it is uniform over the C other
 * outputs. So P(y | x) = κ when y = x and q = (1 − κ)/C = (2^62 − a)/(C·2^62) when y ≠ x.
 *
 * <p>Privacy (pure ε-LDP, proof sketch in the style of OpenDP's proofs).
 * <ol>
 *   <li>For inputs x, x′ and an output y, P(y | x)/P(y | x′) is 1 (y equal to both or to neither),
 *       κ/q (y = x ≠ x′) or q/κ (y = x′ ≠ x). With κ ≥ q the largest is κ/q = a·C/(2^62 − a), and
 *       it is reached (C ≥ 1 gives two distinct inputs), so the mechanism is ε*-LDP with exactly
 *       ε* = ln(a·C/(2^62 − a)), and for no smaller ε.</li>
 *   <li>{@link #forEpsilon} takes the largest integer a whose ε*, bounded from above by
 *       {@link SpentEpsilon#lnRatioUp} on the integers a·C and 2^62 − a, is at most the target ε;
 *       the stated {@link #epsilon()} is that upper bound, so the stated ε ≥ ε* and ≤ the target.</li>
 *   <li>The sampler meets P(y | x) exactly: the keep coin is {@link ExactDraws#bernoulli}(a, 2^62)
 *       and the other output is x's successor skip over a uniform integer below C
 *       ({@link ExactDraws#uniform}), both exact integer draws (rejection from raw bits), so no
 *       floating-point number enters the draw.</li>
 *   <li>The answer is post-processing of the face through a gallery the gateway received
 *       (whatever it holds), and randomized response bounds the ratio for every pair of answers,
 *       so the release is ε*-LDP for the query face whatever gallery the cloud sent.</li>
 * </ol>
 * κ's grid caps the reachable ε at ln((2^62 − 1)·C) ≈ 43 + ln C; a larger target states that.
 */
public final class RandomizedResponse {
    /** κ is a multiple of 2^-62: the keep coin is one exact draw below 2^62. */
    public static final int KEEP_BITS = 62;
    static final long KEEP_DENOMINATOR = 1L << KEEP_BITS;
    private static final BigInteger DENOMINATOR = BigInteger.valueOf(KEEP_DENOMINATOR);

    private final int identities;
    private final long keepNumerator;
    private final double epsilon;
    private final ExactDraws draws;

    /**
     * The largest keep probability on the 2^-62 grid whose ε, computed from the integers, is at most
     * the target; C + 1 outputs.
     */
    public static RandomizedResponse forEpsilon(int identities, double epsilon, ExactDraws draws) {
        Privacy.checkEpsilon(epsilon);
        checkIdentities(identities);
        // ε(b) = ln((2^62 − b)·C/b) falls as b = 2^62 − a grows: the smallest b with ε(b) ≤ target.
        long lo = 1;
        long hi = KEEP_DENOMINATOR / (identities + 1L) * identities; // κ ≈ q there: ε ≈ 0
        if (!(epsilonOf(identities, KEEP_DENOMINATOR - hi) <= epsilon)) {
            throw new IllegalArgumentException("ε " + epsilon + " is too small for " + identities + " identities");
        }
        while (lo < hi) {
            long mid = lo + (hi - lo) / 2;
            if (epsilonOf(identities, KEEP_DENOMINATOR - mid) <= epsilon) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return new RandomizedResponse(identities, KEEP_DENOMINATOR - lo, draws);
    }

    /** As above with draws from the system's DRBG: what the gateway runs. */
    public static RandomizedResponse forEpsilon(int identities, double epsilon) {
        return forEpsilon(identities, epsilon, ExactDraws.secure());
    }

    /** κ = keepNumerator/2^62; it must give the true answer more than the others' share. */
    public RandomizedResponse(int identities, long keepNumerator, ExactDraws draws) {
        checkIdentities(identities);
        if (keepNumerator <= 0 || keepNumerator >= KEEP_DENOMINATOR) {
            throw new IllegalArgumentException("keep numerator must be in (0, 2^62), was " + keepNumerator);
        }
        // κ > q ⇔ a·C > 2^62 − a ⇔ a·(C + 1) > 2^62.
        if (BigInteger.valueOf(keepNumerator).multiply(BigInteger.valueOf(identities + 1L)).compareTo(DENOMINATOR) <= 0) {
            throw new IllegalArgumentException("the keep probability must exceed 1/(C + 1)");
        }
        this.identities = identities;
        this.keepNumerator = keepNumerator;
        this.epsilon = epsilonOf(identities, keepNumerator);
        this.draws = Objects.requireNonNull(draws, "draws");
    }

    private static void checkIdentities(int identities) {
        if (identities < 1 || identities > 1_000_000) {
            throw new IllegalArgumentException("need 1 to 1,000,000 identities, was " + identities);
        }
    }

    /** ln(a·C/(2^62 − a)) from the integers, rounded up ({@link SpentEpsilon#lnRatioUp}). */
    public static double epsilonOf(int identities, long keepNumerator) {
        BigInteger num = BigInteger.valueOf(keepNumerator).multiply(BigInteger.valueOf(identities));
        BigInteger den = DENOMINATOR.subtract(BigInteger.valueOf(keepNumerator));
        if (num.compareTo(den) <= 0) {
            return 0;
        }
        return SpentEpsilon.lnRatioUp(num, den);
    }

    /**
     * Releases an answer: an identity index in [0, C) or {@link #unknown()}. Returns an output in
     * the same range.
     */
    public int release(int answer) {
        if (answer < 0 || answer > identities) {
            throw new IllegalArgumentException("answer must be in [0, " + identities + "], was " + answer);
        }
        if (draws.bernoulli(keepNumerator, KEEP_DENOMINATOR)) {
            return answer;
        }
        int other = (int) draws.uniform(identities);
        return other < answer ? other : other + 1;
    }

    /**
     * P(output | answer) as an exact fraction over {@link #channelDenominator()} = C·2^62:
     * a·C when they agree, 2^62 − a when not.
     */
    public BigInteger channelNumerator(int answer, int output) {
        return answer == output ? BigInteger.valueOf(keepNumerator).multiply(BigInteger.valueOf(identities))
                : DENOMINATOR.subtract(BigInteger.valueOf(keepNumerator));
    }

    public BigInteger channelDenominator() {
        return DENOMINATOR.multiply(BigInteger.valueOf(identities));
    }

    /**
     * Unbiased estimate of how many released faces had each answer, from the counts of each output
     * (length C + 1): E[n_y] = κ·t_y + q·(N − t_y), so t̂_y = (n_y − q·N)/(κ − q). Each estimate is
     * unbiased and may be negative; their sum is N.
     */
    public double[] estimateCounts(double[] outputCounts) {
        if (outputCounts.length != identities + 1) {
            throw new IllegalArgumentException("need " + (identities + 1) + " counts, was " + outputCounts.length);
        }
        double n = 0;
        for (double c : outputCounts) {
            if (!(c >= 0) || !Double.isFinite(c)) {
                throw new IllegalArgumentException("counts must be finite and non-negative, was " + c);
            }
            n += c;
        }
        // In units of 1/(C·2^62): κ − q = ((C + 1)·a − 2^62)/(C·2^62), q = (2^62 − a)/(C·2^62).
        double scale = (double) KEEP_DENOMINATOR * identities;
        double q = (KEEP_DENOMINATOR - keepNumerator) / scale;
        double gap = ((identities + 1.0) * keepNumerator - KEEP_DENOMINATOR) / scale;
        double[] t = new double[outputCounts.length];
        for (int y = 0; y < t.length; y++) {
            t[y] = (outputCounts[y] - q * n) / gap;
        }
        return t;
    }

    /**
     * The decoder's false-positive rate that gives a stranger's release the target rate of naming
     * someone: a stranger decoded as an identity is named unless turned into unknown (1 − q), one
     * decoded as unknown is named with probability 1 − κ = C·q, so the release's rate is
     * t·(1 − q) + (1 − t)·C·q. Negative when the target is below C·q: no decoder reaches it.
     */
    public double decoderFalsePositiveRate(double releasedRate) {
        double q = (1 - keepProbability()) / identities;
        return (releasedRate - identities * q) / (1 - q - identities * q);
    }

    /** The release's false-positive rate for a decoder false-positive rate t. */
    public double releasedFalsePositiveRate(double decoderRate) {
        double q = (1 - keepProbability()) / identities;
        return decoderRate * (1 - q) + (1 - decoderRate) * identities * q;
    }

    /** C: the outputs are 0 … C − 1 and {@link #unknown()}. */
    public int identities() {
        return identities;
    }

    /** The output that means "not one of the enrolled people": C. */
    public int unknown() {
        return identities;
    }

    /** a of κ = a/2^62. */
    public long keepNumerator() {
        return keepNumerator;
    }

    public double keepProbability() {
        return keepNumerator / (double) KEEP_DENOMINATOR;
    }

    /** The ε one release spends, from the integers, never below the true ε. */
    public double epsilon() {
        return epsilon;
    }
}
