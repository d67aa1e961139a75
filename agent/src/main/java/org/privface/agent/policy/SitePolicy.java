package org.privface.agent.policy;

import java.time.Duration;

import org.privface.privacy.Privacy;
import org.privface.privacy.SensitivityMode;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.privacy.rdp.RdpMode;
import org.privface.agent.track.BudgetPolicy;

/**
 * What a site's cameras do with each face: mechanism, its mode, and the ε a person's appearance
 * (one track) may spend per window under the budget policy. Immutable and always valid: every
 * way of building one (local configuration, REST, control topic) goes through this constructor.
 *
 * @param epsilon      ε per track per window: the guarantee a person gets for one appearance
 * @param budget       a {@link BudgetPolicy} spec: "once", "max-k:k=3,every=5", "every-n:n=10,epsilon=0.5"
 * @param imageRelease publish RDP's sanitized image beside the vector; only local configuration can enable it
 */
public record SitePolicy(Mechanism mechanism, String mode, double epsilon, String budget, Duration window,
                         boolean imageRelease) {
    public SitePolicy {
        if (mechanism == null) {
            throw new IllegalArgumentException("mechanism missing");
        }
        checkMode(mechanism, mode);
        Privacy.checkEpsilon(epsilon);
        if (window == null || window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("budget window must be a positive duration, was " + window);
        }
        // Parsing validates k, n and ε per release against ε per track, in the one place they live.
        BudgetPolicy.parse(budget).checkFor(epsilon);
        if (paperReproduction(mechanism, mode)) {
            // A per-track budget is only meaningful when a release's ε is its real per-face ε.
            throw new IllegalArgumentException(mechanism + " mode " + mode + " reproduces a paper and spends far more"
                    + " per face than its nominal epsilon (unbounded for RDP); the agent publishes only per-face modes:"
                    + " PEEP vector or l1-clip, RDP strict. The paper modes live in the evaluation harnesses.");
        }
        if (imageRelease && mechanism != Mechanism.RDP) {
            throw new IllegalArgumentException("image release exists only for RDP, whose output image is what it protects");
        }
    }

    private static boolean paperReproduction(Mechanism mechanism, String mode) {
        return mechanism == Mechanism.PEEP && SensitivityMode.fromWireName(mode).paperReproduction()
                || mechanism == Mechanism.RDP && RdpMode.parse(mode).paperReproduction();
    }

    public BudgetPolicy budgetPolicy() {
        return BudgetPolicy.parse(budget);
    }

    private static void only(Mechanism mechanism, String mode, String known) {
        if (!mode.equals(known)) {
            throw new IllegalArgumentException("unknown " + mechanism + " mode '" + mode + "'; known: [" + known + "]");
        }
    }

    static void checkMode(Mechanism mechanism, String mode) {
        if (mode == null) {
            throw new IllegalArgumentException("mode missing for " + mechanism);
        }
        switch (mechanism) {
            case PEEP -> SensitivityMode.fromWireName(mode);
            case RDP -> RdpMode.parse(mode);
            case GAUSSIAN -> only(mechanism, mode, "gdp");
            case FISHER -> only(mechanism, mode, "l1-clip");
            case EMBEDDING -> {
                EmbeddingMechanism.Noise.parse(mode);
                if (mode.trim().endsWith(EmbeddingMechanism.ENROLLMENT_SUFFIX)) {
                    throw new IllegalArgumentException("EMBEDDING mode '" + mode + "' (enrollment-fitted, query faces"
                            + " only) is measured by the frontier but not offered by the agent; use the public-basis modes");
                }
            }
        }
    }
}
