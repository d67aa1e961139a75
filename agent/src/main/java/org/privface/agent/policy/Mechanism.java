package org.privface.agent.policy;

import java.util.Arrays;
import java.util.Locale;

/** The local-DP mechanisms a site can choose; the name travels in every record. */
public enum Mechanism {
    /** Eigenface perturbation (Chamikara et al. 2020); modes are {@link org.privface.privacy.SensitivityMode}s. */
    PEEP,
    /** Ranked DP on Haar wavelets (Ou et al.); modes are {@link org.privface.privacy.rdp.RdpMode}s. */
    RDP,
    /**
     * Gaussian DP on eigen-coordinates (Soto et al.), mode {@code gdp}: ε is per track at
     * δ = {@link org.privface.privacy.gdp.MuGdp#DEFAULT_DELTA}, and a track's releases compose
     * as μ-GDP, √(Σμ²), far tighter than summed ε when a person is released several times.
     */
    GAUSSIAN,
    /**
     * The frontier's best vector preset (docs/frontier.md): Fisher coordinates fitted on the
     * labelled enrollment faces, L1 clip and Laplace noise, mode {@code l1-clip}; pure ε-LDP per face.
     */
    FISHER,
    /**
     * A deep face embedding projected on a public basis and released on the unit sphere; modes are
     * {@link org.privface.privacy.embedding.EmbeddingMechanism.Noise}s (docs/privacy.md).
     */
    EMBEDDING;

    public static Mechanism parse(String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException("unknown mechanism '" + name + "'; known: " + Arrays.toString(values()));
        }
    }
}
