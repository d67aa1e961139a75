package org.privface.privacy;

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
 * @param delta                δ of an (ε, δ) guarantee; 0 for pure ε-DP mechanisms
 * @param mu                   μ of a μ-GDP release; NaN for mechanisms that are not Gaussian
 */
public record Release(double[] vector, String mechanism, String mode, double epsilonPerCoordinate,
                      double epsilonPerFace, double noiseScale, String basisId, double[] image, double delta,
                      double mu) {
    /** A pure ε-DP release. */
    public Release(double[] vector, String mechanism, String mode, double epsilonPerCoordinate, double epsilonPerFace,
                   double noiseScale, String basisId, double[] image) {
        this(vector, mechanism, mode, epsilonPerCoordinate, epsilonPerFace, noiseScale, basisId, image, 0.0, Double.NaN);
    }
}
