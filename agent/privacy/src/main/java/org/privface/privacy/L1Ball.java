package org.privface.privacy;

/**
 * The L1 clip that PEEP {@code l1-clip}, FISHER and the embedding's Laplace baseline bound their
 * sensitivity with, written once: radial projection onto the ball of radius r, so any two clipped
 * vectors differ by at most 2r in L1.
 */
public final class L1Ball {
    private L1Ball() {
    }

    /** x scaled in place into the L1 ball of radius r (unchanged when inside); returns x. */
    public static double[] clipInPlace(double[] x, double r) {
        double norm = 0;
        for (double v : x) {
            norm += Math.abs(v);
        }
        if (norm > r) {
            for (int i = 0; i < x.length; i++) {
                x[i] *= r / norm;
            }
        }
        return x;
    }
}
