package org.privface.agent.policy;

import java.util.Arrays;
import java.util.Locale;

/** The local-DP mechanisms a site can choose; the name travels in every record. */
public enum Mechanism {
    /** Eigenface perturbation (Chamikara et al. 2020); modes are {@link org.privface.agent.privacy.SensitivityMode}s. */
    PEEP,
    /** Ranked DP on Haar wavelets (Ou et al.); modes are {@link org.privface.agent.privacy.rdp.RdpMode}s. */
    RDP;

    public static Mechanism parse(String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException("unknown mechanism '" + name + "'; known: " + Arrays.toString(values()));
        }
    }
}
