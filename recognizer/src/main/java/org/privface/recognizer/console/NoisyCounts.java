package org.privface.recognizer.console;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import org.privface.privacy.Proportions;

/**
 * What the console shows for a count released with noise: a non-negative estimate and an
 * approximate 95 % interval, instead of the raw release (which may read −2 people). Pure
 * post-processing of what was released, so it costs no ε.
 *
 * <p>Two kinds of release reach the console:
 * <ul>
 *   <li>a gateway's status count: a running total of noisy increments, one per release window,
 *   each with discrete Laplace noise P(k) ∝ exp(−|k|/t) (the agent's StatusCounts), so the total's
 *   noise is a sum of N independent draws of variance 2α/(1−α)², α = e^(−1/t);</li>
 *   <li>a k-RR answer count inverted without bias ({@code RandomizedResponse#estimateCounts}):
 *   its variance is that of the multinomial count divided by the channel's gap κ − q squared.</li>
 * </ul>
 * Both intervals use the normal approximation (a sum of many draws; counts of many answers). Where
 * an input is missing the interval is null and only the clipped estimate is shown.
 */
final class NoisyCounts {
    private NoisyCounts() {
    }

    /** Variance of one discrete Laplace draw with P(k) ∝ exp(−|k|/t). */
    static double discreteLaplaceVariance(double t) {
        if (!(t > 0)) {
            throw new IllegalArgumentException("scale must be positive, was " + t);
        }
        double a = Math.exp(-1 / t);
        return 2 * a / ((1 - a) * (1 - a));
    }

    /**
     * The most releases a gateway's running total can hold: one per release window since the
     * gateway started, plus the one at its start. An upper bound (a window without a report
     * releases nothing), so the interval is conservative.
     */
    static long releasesSince(Instant startedAt, Instant reportedAt, Duration window) {
        if (startedAt == null || reportedAt == null || window == null || window.isZero() || window.isNegative()
                || reportedAt.isBefore(startedAt)) {
            return -1;
        }
        return Duration.between(startedAt, reportedAt).toMillis() / window.toMillis() + 1;
    }

    /**
     * The noise variance of a gateway's status total, from the count's noise section ({@code
     * epsilonPerCount} = 1/t, {@code window}) and the gateway's start and report times; NaN when
     * something needed is missing.
     */
    static double statusVariance(Object noise, Object startedAt, Instant reportedAt) {
        if (!(noise instanceof Map<?, ?> n) || !(n.get("epsilonPerCount") instanceof Number eps)
                || !(n.get("window") instanceof String w) || !(startedAt instanceof String s)) {
            return Double.NaN;
        }
        try {
            long releases = releasesSince(Instant.parse(s), reportedAt, Duration.parse(w));
            return releases < 0 || !(eps.doubleValue() > 0) ? Double.NaN
                    : releases * discreteLaplaceVariance(1 / eps.doubleValue());
        } catch (RuntimeException badField) {
            return Double.NaN; // an unparsable time or duration: show the estimate without an interval
        }
    }

    /** A released total with its noise variance (NaN: unknown), clipped below at 0. */
    static Map<String, Object> total(double released, double variance) {
        return interval(released, variance, Double.POSITIVE_INFINITY);
    }

    /**
     * An identity's unbiased k-RR estimate with its interval, clipped to [0, answers]: {@code named}
     * of {@code answers} answers named it, each released by k-RR over {@code identities} + 1
     * outputs at {@code epsilon}: κ = e^ε/(e^ε + C), q = 1/(e^ε + C).
     */
    static Map<String, Object> randomizedResponse(double estimated, double named, double answers, int identities,
                                                  double epsilon) {
        double variance = Double.NaN;
        if (answers > 0 && identities > 0 && epsilon > 0) {
            double e = Math.exp(Math.min(epsilon, 700));
            double gap = (e - 1) / (e + identities);
            // Adding one count to each side keeps the interval from collapsing at 0 or all answers.
            double p = (named + 1) / (answers + 2);
            variance = answers * p * (1 - p) / (gap * gap);
        }
        return interval(estimated, variance, answers);
    }

    private static Map<String, Object> interval(double value, double variance, double max) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("estimate", clip(value, max));
        if (Double.isFinite(variance)) {
            double half = Proportions.Z95 * Math.sqrt(variance);
            m.put("low", clip(value - half, max));
            m.put("high", clip(value + half, max));
        }
        return m;
    }

    private static double clip(double v, double max) {
        return Math.max(0, Math.min(max, v));
    }
}
