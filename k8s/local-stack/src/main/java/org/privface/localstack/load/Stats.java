package org.privface.localstack.load;

import java.util.Arrays;
import java.util.List;

/** Percentiles, medians and least-squares slopes over the samples of a load run. */
final class Stats {
    private Stats() {
    }

    /** The q-quantile (0..1) by nearest rank; NaN for no values. */
    static double percentile(double[] values, double q) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] s = values.clone();
        Arrays.sort(s);
        int rank = (int) Math.ceil(q * s.length);
        return s[Math.max(0, Math.min(s.length - 1, rank - 1))];
    }

    static double percentile(List<Double> values, double q) {
        return percentile(values.stream().mapToDouble(Double::doubleValue).toArray(), q);
    }

    /** Median of the finite values; NaN when there are none. */
    static double median(double[] values) {
        return percentile(Arrays.stream(values).filter(Double::isFinite).toArray(), 0.5);
    }

    /** Least-squares slope of y over x, skipping pairs where y is not finite; NaN with fewer than 3 points. */
    static double slope(double[] x, double[] y) {
        double sx = 0;
        double sy = 0;
        int n = 0;
        for (int i = 0; i < x.length; i++) {
            if (Double.isFinite(y[i])) {
                sx += x[i];
                sy += y[i];
                n++;
            }
        }
        if (n < 3) {
            return Double.NaN;
        }
        double mx = sx / n;
        double my = sy / n;
        double sxy = 0;
        double sxx = 0;
        for (int i = 0; i < x.length; i++) {
            if (Double.isFinite(y[i])) {
                sxy += (x[i] - mx) * (y[i] - my);
                sxx += (x[i] - mx) * (x[i] - mx);
            }
        }
        return sxx == 0 ? Double.NaN : sxy / sxx;
    }
}
