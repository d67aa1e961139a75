package org.privface.privacy;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * Rigorous bounds on e^x for tests that check a stated ε against exact ratios: the Taylor series
 * of e^(x/2^20), rounded down (or up, with its tail bound), then squared 20 times with the same
 * rounding.
 */
public final class ExactExp {
    private static final int HALVINGS = 20;
    private static final int TERMS = 40;

    private ExactExp() {
    }

    /** A number ≤ e^x (0 ≤ x ≤ 200). */
    public static BigDecimal lower(double x) {
        return bound(x, new MathContext(90, RoundingMode.DOWN), false);
    }

    /** A number ≥ e^x (0 ≤ x ≤ 200). */
    public static BigDecimal upper(double x) {
        return bound(x, new MathContext(90, RoundingMode.UP), true);
    }

    private static BigDecimal bound(double x, MathContext mc, boolean up) {
        if (!(x >= 0 && x <= 200)) {
            throw new IllegalArgumentException("x out of range: " + x);
        }
        // x/2^20 is exact in decimal.
        BigDecimal r = new BigDecimal(x).divide(BigDecimal.valueOf(1L << HALVINGS));
        BigDecimal sum = BigDecimal.ONE;
        BigDecimal term = BigDecimal.ONE;
        for (int i = 1; i <= TERMS; i++) {
            term = term.multiply(r, mc).divide(BigDecimal.valueOf(i), mc);
            sum = sum.add(term, mc);
        }
        if (up) {
            // r < 2^-12: the tail after TERMS terms is below twice the next term, which is below term·r.
            sum = sum.add(term.multiply(r, mc).multiply(BigDecimal.valueOf(2), mc), mc);
        }
        for (int i = 0; i < HALVINGS; i++) {
            sum = sum.multiply(sum, mc);
        }
        return sum;
    }
}
