package org.privface.agent.privacy;

/**
 * One perturbed face and exactly what it cost.
 *
 * @param vector               the perturbed coordinates
 * @param epsilonPerCoordinate ε each coordinate received
 * @param epsilonPerFace       ε this release spends on the whole face
 * @param noiseScale           Laplace scale b added to every coordinate
 */
public record Release(double[] vector, SensitivityMode mode, double epsilonPerCoordinate, double epsilonPerFace,
                      double noiseScale, String basisId) {
}
