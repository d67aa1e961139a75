package org.privface.evaluation;

import java.math.BigDecimal;
import java.util.Locale;

/** How the evaluations print a number in a CSV, a label or a file name: one rule for every harness. */
final class Figures {
    private Figures() {
    }

    /**
     * "inf" for infinity, whole numbers without a decimal point, anything else to six significant
     * digits without trailing zeros (0.5, 0.333333, 1e-5 as 0.00001). FrontierEvaluation's seeds
     * hash this text, so its rule is the one kept.
     */
    static String fmt(double v) {
        if (Double.isInfinite(v)) {
            return "inf";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return new BigDecimal(String.format(Locale.ROOT, "%.6g", v)).stripTrailingZeros().toPlainString();
    }
}
