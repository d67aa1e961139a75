package org.privface.privacy;

/**
 * The one interval the project puts on a measured rate (a false-positive rate on public
 * strangers, faces taken as independent): the 95 % Wilson score interval. The gallery's threshold
 * rule ({@code wilson}, carried in signed galleries), the recognizer's open-set report and the
 * demo all use it, so a rate reads the same wherever it is shown. Wilson rather than the exact
 * Clopper–Pearson: its coverage is close to nominal at the 0.5–2 % rates and thousands of
 * strangers measured here, where Clopper–Pearson is systematically wider, and it needs no beta
 * quantiles.
 */
public final class Proportions {
    /** Two-sided 95 % quantile of the standard normal. */
    public static final double Z95 = 1.959963984540054;

    private Proportions() {
    }

    /** The 95 % Wilson score interval {low, high} of the proportion x/n. */
    public static double[] wilson95(long x, long n) {
        if (n <= 0 || x < 0 || x > n) {
            throw new IllegalArgumentException("need 0 ≤ x ≤ n, n > 0, was " + x + "/" + n);
        }
        double z = Z95;
        double p = x / (double) n;
        double z2n = z * z / n;
        double centre = (p + z2n / 2) / (1 + z2n);
        double half = z / (1 + z2n) * Math.sqrt(p * (1 - p) / n + z2n / (4 * n));
        return new double[] {Math.max(0, centre - half), Math.min(1, centre + half)};
    }
}
