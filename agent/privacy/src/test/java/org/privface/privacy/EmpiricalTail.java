package org.privface.privacy;

/** Tails of an empirical distribution, for the statistical privacy tests. */
public final class EmpiricalTail {
    private EmpiricalTail() {
    }

    /** The share of {@code sorted} (ascending) strictly above {@code t}, by binary search. */
    public static double fractionAbove(double[] sorted, double t) {
        int lo = 0;
        int hi = sorted.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sorted[mid] <= t) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return (double) (sorted.length - lo) / sorted.length;
    }
}
