package org.privface.agent.privacy;

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

    /** Laplace scale b = Δ/ε. */
    public static double laplaceScale(double l1Sensitivity, double epsilon) {
        return checkSensitivity(l1Sensitivity) / checkEpsilon(epsilon);
    }
}
