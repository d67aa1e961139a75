package org.privface.agent.privacy;

/**
 * One perturbed face and exactly what it cost.
 *
 * @param vector               the perturbed coordinates
 * @param mechanism            PEEP, RDP or GAUSSIAN
 * @param mode                 the mechanism's mode (a PEEP sensitivity mode, an RDP mode)
 * @param epsilonPerCoordinate ε each coordinate received (for RDP, the mean over the noised coefficients)
 * @param epsilonPerFace       ε this release spends on the whole face (for GAUSSIAN, at δ = 1e-5 from its μ)
 * @param noiseScale           Laplace scale b of the noise (for RDP, the mean over the noised coefficients; for
 *                             GAUSSIAN, the mean standard deviation)
 * @param image                RDP's sanitized image when the site enables image release, else null
 */
public record Release(double[] vector, String mechanism, String mode, double epsilonPerCoordinate,
                      double epsilonPerFace, double noiseScale, String basisId, double[] image) {
}
