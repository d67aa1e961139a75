package org.privface.evaluation;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.Locale;

/**
 * How the evaluations summarise and print their figures: one rule for every harness (mean, sample
 * standard deviation, and a number in a CSV, a label or a file name).
 */
public final class Figures {
    private Figures() {
    }

    public static double mean(double[] a) {
        return Arrays.stream(a).average().orElse(Double.NaN);
    }

    /** The sample standard deviation (n − 1), 0 below two values. */
    public static double sd(double[] a) {
        double m = mean(a);
        return a.length < 2 ? 0 : Math.sqrt(Arrays.stream(a).map(x -> (x - m) * (x - m)).sum() / (a.length - 1));
    }

    /**
     * "inf" for infinity, whole numbers without a decimal point, anything else to six significant
     * digits without trailing zeros (0.5, 0.333333, 1e-5 as 0.00001). FrontierEvaluation's seeds
     * hash this text, so its rule is the one kept.
     */
    public static String fmt(double v) {
        if (Double.isInfinite(v)) {
            return "inf";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return new BigDecimal(String.format(Locale.ROOT, "%.6g", v)).stripTrailingZeros().toPlainString();
    }
}
