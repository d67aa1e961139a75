package org.privface.privacy.rdp;

import java.util.Arrays;

/**
 * How RDP chooses its noise. All but STRICT follow Ou et al.: they rank the face's own
 * coefficients, noise only the top K ~ Geometric(p) and copy the rest, so their ε0 (Eq. 3) is
 * no per-face bound (docs/privacy-rdp.md); they exist to reproduce the paper and the agent
 * refuses to publish them. STRICT is the honest mode.
 */
public enum RdpMode {
    /** Normalization Approximation as printed (L263): b_k = Σ_i(Δ_i/w_ik)/(ε0 √S); spends less than ε0 under Eq. 3. */
    NA("na", true),
    /** NA's scales rescaled by one factor so that Eq. 3 spends exactly ε0. */
    NA_RESCALED("na-rescaled", true),
    /** Gradient descent on Eq. 4's cost Σ c_k b_k² subject to Eq. 3 = ε0 (Section IV-C2). */
    LMGD("lmgd", true),
    /** Plain RDP (L472): one scale b for every rank, set so that Eq. 3 gives ε0. */
    UNIFORM("uniform", true),
    /**
     * Pure ε-LDP per face: a public, data-independent selection of the highest-weight
     * coefficients, each clamped to a range fixed at fitting time and all of them noised, with
     * scales that minimise the feature noise subject to Σ Δ_k / b_k = ε.
     */
    STRICT("strict", false);

    private final String wireName;
    private final boolean paperReproduction;

    RdpMode(String wireName, boolean paperReproduction) {
        this.wireName = wireName;
        this.paperReproduction = paperReproduction;
    }

    public String wireName() {
        return wireName;
    }

    /** True when the per-face ε is unbounded: some released coefficients carry no noise. */
    public boolean paperReproduction() {
        return paperReproduction;
    }

    public static RdpMode parse(String name) {
        return Arrays.stream(values()).filter(m -> m.wireName.equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown RDP mode '" + name + "'; known: "
                        + Arrays.stream(values()).map(RdpMode::wireName).toList()));
    }
}
