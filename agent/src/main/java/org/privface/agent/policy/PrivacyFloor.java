package org.privface.agent.policy;

import org.privface.agent.privacy.Privacy;

/**
 * The gateway's own bounds on ε per track, set in its local configuration. The cloud is
 * untrusted, so no remote instruction (REST or control topic) can move ε outside [min, max]:
 * a request below is raised to min, above is lowered to max, and the clamp is reported.
 */
@io.micronaut.serde.annotation.Serdeable
public record PrivacyFloor(double epsilonMin, double epsilonMax) {
    public PrivacyFloor {
        Privacy.checkEpsilon(epsilonMin);
        Privacy.checkEpsilon(epsilonMax);
        if (epsilonMin > epsilonMax) {
            throw new IllegalArgumentException("privacy floor: epsilon-min " + epsilonMin + " exceeds epsilon-max " + epsilonMax);
        }
    }

    /** ε requested remotely, brought inside the floor; NaN, infinities and non-positive values are refused. */
    public double clamp(double requested) {
        Privacy.checkEpsilon(requested);
        return Math.max(epsilonMin, Math.min(epsilonMax, requested));
    }

    public boolean contains(double epsilon) {
        return epsilon >= epsilonMin && epsilon <= epsilonMax;
    }
}
