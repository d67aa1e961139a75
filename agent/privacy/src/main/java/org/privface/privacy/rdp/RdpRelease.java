package org.privface.privacy.rdp;

/**
 * One RDP release and what it cost.
 *
 * @param image                  the sanitized image P′ in [0, 1], or null when not computed
 * @param features               F′, the eigenface features of P′: what the agent publishes
 * @param epsilonNominal         ε0 as configured (the paper's expected, weighted budget; ε in STRICT)
 * @param epsilonPerFace         the worst-case per-face ε: infinite when coefficients were released without noise
 * @param epsilonNoised          Σ Δ_k / b_k over the coefficients that did get noise (Δ_k their own range)
 * @param epsilonEq3             the paper's Eq. 3 for the scales used (ε in STRICT)
 * @param noised                 how many coefficients were noised (K, or the STRICT set)
 * @param meanScale              the mean Laplace scale over the ranks
 * @param expectedNoiseEnergy    the theoretical variance Σ q_r 2 b_r² of the coefficient noise
 * @param realNoiseEnergy        the noise energy actually added in this release
 * @param lmgdIterations         iterations LMGD took (0 for the other modes)
 */
public record RdpRelease(double[] image, double[] features, RdpMode mode, double epsilonNominal, double epsilonPerFace,
                         double epsilonNoised, double epsilonEq3, int noised, double meanScale, double expectedNoiseEnergy,
                         double realNoiseEnergy, int lmgdIterations) {
}
