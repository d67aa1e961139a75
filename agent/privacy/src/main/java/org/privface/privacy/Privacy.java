package org.privface.privacy;

/** Preconditions shared by every mechanism, in one place. */
public final class Privacy {
    private Privacy() {
    }

    /** ε must be a positive finite number; 0, negatives, NaN and infinity are configuration errors. */
    public static double checkEpsilon(double epsilon) {
        if (!(epsilon > 0) || !Double.isFinite(epsilon)) {
            throw new IllegalArgumentException("epsilon must be positive and finite, was " + epsilon);
        }
        return epsilon;
    }

    public static double checkSensitivity(double sensitivity) {
        if (!(sensitivity > 0) || !Double.isFinite(sensitivity)) {
            throw new IllegalArgumentException("sensitivity must be positive and finite, was " + sensitivity);
        }
        return sensitivity;
    }

    /** μ of μ-GDP must be positive and finite: μ = 0 would mean no noise budget at all, infinity no privacy. */
    public static double checkMu(double mu) {
        if (!(mu > 0) || !Double.isFinite(mu)) {
            throw new IllegalArgumentException("mu must be positive and finite, was " + mu);
        }
        return mu;
    }

    /** δ must lie strictly between 0 and 1: δ = 0 has no finite ε for a Gaussian, δ = 1 promises nothing. */
    public static double checkDelta(double delta) {
        if (!(delta > 0 && delta < 1)) {
            throw new IllegalArgumentException("delta must be in (0, 1), was " + delta);
        }
        return delta;
    }

    /** A noise standard deviation: positive and finite. */
    public static double checkSigma(double sigma) {
        if (!(sigma > 0) || !Double.isFinite(sigma)) {
            throw new IllegalArgumentException("sigma must be positive and finite, was " + sigma);
        }
        return sigma;
    }

    /** Laplace scale b = Δ/ε. */
    public static double laplaceScale(double l1Sensitivity, double epsilon) {
        return checkSensitivity(l1Sensitivity) / checkEpsilon(epsilon);
    }

    /** A clipping radius: positive and finite, or clipping bounds nothing. */
    public static double checkRadius(double radius) {
        if (!(radius > 0) || !Double.isFinite(radius)) {
            throw new IllegalArgumentException("clipping radius must be positive and finite, was " + radius);
        }
        return radius;
    }
}
