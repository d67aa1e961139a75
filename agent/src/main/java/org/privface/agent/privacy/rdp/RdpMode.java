package org.privface.agent.privacy.rdp;

import java.util.Arrays;

/**
 * How RDP chooses its noise. The first three follow Ou et al. and spend an ε0 that is an
 * <em>expected, weighted</em> cost, not a worst-case bound (docs/privacy-rdp.md); they exist
 * to reproduce the paper and the agent refuses to publish them. STRICT is the honest mode.
 */
public enum RdpMode {
    /** Normalization Approximation: one average scale, weighted by the ranked coefficients' influence. */
    NA("na", true),
    /** Lagrange-multiplier gradient descent: one scale per rank, minimising the expected image noise. */
    LMGD("lmgd", true),
    /** Plain RDP with one scale that ignores the weights: the paper's uniform baseline. */
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
