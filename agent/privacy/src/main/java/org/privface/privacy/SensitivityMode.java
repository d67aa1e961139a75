package org.privface.privacy;

import java.util.Arrays;

/**
 * How PEEP bounds the sensitivity of a face's coordinates, and so what ε a record really spends.
 * The name travels in every record and metric.
 */
public enum SensitivityMode {
    /**
     * ε-LDP for the whole face (production default). Coordinates are clamped to fixed ranges and
     * scaled to [0,1]^nc, whose L1 diameter is nc, so every coordinate gets Laplace(nc/ε). The
     * configured ε is the per-face ε.
     */
    VECTOR("vector", false),
    /**
     * ε-LDP for the whole face with a tighter bound: the centred coordinates are clipped to an L1
     * ball of radius C fixed at fitting time, so Δ1 = 2C and every coordinate gets Laplace(2C/ε).
     * The configured ε is the per-face ε.
     */
    L1_CLIP("l1-clip", false),
    /**
     * The PEEP paper's reading on projected coordinates: each coordinate, min-max scaled to [0,1]
     * with ranges fixed at fitting time, gets Laplace(1/ε) as if it alone were released. The
     * configured ε is per coordinate; a face spends nc·ε. For reproducing the paper only.
     */
    PAPER_PCA("paper-pca", true),
    /**
     * The PEEP paper's other reading, the one its reconstruction attack (Section 5.5) uses: each
     * pixel of the mean-centred face, scaled to [0,1], gets Laplace(1/ε) before projection. The
     * configured ε is per pixel; a face spends d·ε (2,914·ε at 47×62). For reproduction only.
     */
    PAPER_PIXEL("paper-pixel", true);

    private final String wireName;
    private final boolean paperReproduction;

    SensitivityMode(String wireName, boolean paperReproduction) {
        this.wireName = wireName;
        this.paperReproduction = paperReproduction;
    }

    public String wireName() {
        return wireName;
    }

    /** True for modes kept to reproduce a paper, whose per-face ε is far larger than their name suggests. */
    public boolean paperReproduction() {
        return paperReproduction;
    }

    public static SensitivityMode fromWireName(String name) {
        return Arrays.stream(values()).filter(m -> m.wireName.equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown sensitivity mode '" + name + "'; known: "
                        + Arrays.stream(values()).map(SensitivityMode::wireName).toList()));
    }
}
