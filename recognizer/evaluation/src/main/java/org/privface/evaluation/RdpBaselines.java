package org.privface.evaluation;

import static org.privface.evaluation.RdpEvaluation.KEEP;
import static org.privface.evaluation.RdpEvaluation.P;
import static org.privface.evaluation.RdpEvaluation.PIXELS;
import static org.privface.evaluation.RdpEvaluation.SIDE;
import static org.privface.evaluation.RdpEvaluation.filled;
import static org.privface.evaluation.RdpEvaluation.laplace;

import java.util.Arrays;
import java.util.Map;

import org.jtransforms.dct.DoubleDCT_2D;
import org.privface.evaluation.RdpEvaluation.Method;
import org.privface.evaluation.RdpEvaluation.Sanitized;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.rdp.RdpBasis;
import org.privface.privacy.rdp.RdpMechanism;
import org.privface.privacy.rdp.RdpMode;
import org.privface.privacy.rdp.RdpRelease;

/** The sanitizers {@link RdpEvaluation} compares: RDP in its modes and the paper's Pixel-DP and DCT-DP baselines. */
final class RdpBaselines {
    private RdpBaselines() {
    }

    static Method method(String name, RdpBasis basis, double eps0, SecureLaplace laplace, DctDp dct) {
        return switch (name) {
            case "pixel-dp" -> face -> pixelDp(face, basis.featureRanges(), eps0, laplace);
            case "pixel-dp-geo" -> {
                double[][] w = eigenfaces(basis);
                double[] delta = basis.featureRanges();
                yield face -> ranked(face.clone(), w, delta, ONES, eps0, laplace, f -> f);
            }
            case "dct-dp" -> dct.method(basis, eps0, laplace);
            case "rdp-uniform" -> rdp(basis, RdpMode.UNIFORM, eps0, KEEP, laplace);
            case "rdp-na" -> rdp(basis, RdpMode.NA, eps0, KEEP, laplace);
            case "rdp-na-rescaled" -> rdp(basis, RdpMode.NA_RESCALED, eps0, KEEP, laplace);
            case "rdp-lmgd" -> rdp(basis, RdpMode.LMGD, eps0, KEEP, laplace);
            case "rdp-strict" -> rdp(basis, RdpMode.STRICT, eps0, RdpMechanism.DEFAULT_STRICT_KEEP, laplace);
            default -> throw new IllegalArgumentException("unknown method " + name);
        };
    }

    static Method rdp(RdpBasis basis, RdpMode mode, double eps0, int keep, SecureLaplace laplace) {
        RdpMechanism mechanism = new RdpMechanism(basis, mode, eps0, P, keep, laplace, RdpMechanism.LmgdSettings.DEFAULT);
        return face -> {
            RdpRelease r = mechanism.sanitize(face, true);
            return new Sanitized(r.image(), r.expectedNoiseEnergy(), r.realNoiseEnergy(), r.epsilonPerFace(),
                    r.epsilonNoised(), r.lmgdIterations(), r.epsilonEq3());
        };
    }

    static final double[] ONES = filled(PIXELS, 1.0);

    /** The eigenfaces as rows: the weights ∂F_i/∂x_k in the pixel domain. */
    static double[][] eigenfaces(RdpBasis basis) {
        double[][] u = new double[basis.eigen().dimension()][];
        for (int i = 0; i < u.length; i++) {
            u[i] = basis.eigen().component(i).clone();
        }
        return u;
    }

    /**
     * Plain RDP's rule in another orthonormal domain (pixels or DCT): rank the face's own
     * coefficients, one scale from Eq. 3 with that domain's weights, noise the top K, copy the rest.
     */
    static Sanitized ranked(double[] c, double[][] weights, double[] featureDelta, double[] range,
                                      double eps0, SecureLaplace laplace, java.util.function.UnaryOperator<double[]> inverse) {
        RdpMechanism.Ranked r = RdpMechanism.ranked(c, weights, featureDelta, range, RdpMode.UNIFORM, eps0, P, KEEP,
                laplace, RdpMechanism.LmgdSettings.DEFAULT);
        double[] image = inverse.apply(r.coefficients());
        for (int j = 0; j < image.length; j++) {
            image[j] = Math.max(0, Math.min(1, image[j]));
        }
        return new Sanitized(image, r.expectedNoiseEnergy(), r.realNoiseEnergy(), Double.POSITIVE_INFINITY,
                r.epsilonNoised(), 0, r.epsilonEq3());
    }

    /**
     * Pixel-DP read as "noise on all pixels" (L470): every pixel gets Laplace(b̄_P), and with
     * every pixel noised Eq. 3 has c_k = 1 and unit eigenfaces, so ε0 = Σ_i Δ_i / b̄_P. Each pixel
     * has range 1, so this reading does have a finite per-face ε: 4096 / b̄_P.
     */
    static Sanitized pixelDp(double[] face, double[] featureDelta, double eps0, SecureLaplace laplace) {
        double b = java.util.Arrays.stream(featureDelta).sum() / eps0;
        double[] noisy = laplace.addNoiseScaled(face, ONES, filled(PIXELS, b));
        double real = 0;
        for (int j = 0; j < noisy.length; j++) {
            double n = noisy[j] - face[j];
            real += n * n;
            noisy[j] = Math.max(0, Math.min(1, noisy[j]));
        }
        return new Sanitized(noisy, face.length * 2 * b * b, real, face.length / b, face.length / b, 0, eps0);
    }

    /**
     * DCT-DP (L468 cites it only): plain RDP's rule in the orthonormal 2D DCT. The weights are the
     * eigenfaces' DCT; Δ_k, the L1 norm of DCT basis image k, only sets the sampler's grid. Like
     * the paper modes, the exact coefficients below rank K leave the per-face ε unbounded.
     */
    static final class DctDp {
        private final DoubleDCT_2D dct = new DoubleDCT_2D(SIDE, SIDE);
        private final double[] delta = new double[PIXELS];
        private final Map<RdpBasis, double[][]> weights = new java.util.IdentityHashMap<>();

        DctDp() {
            for (int k = 0; k < PIXELS; k++) {
                double[] unit = new double[PIXELS];
                unit[k] = 1;
                dct.inverse(unit, true);
                double l1 = 0;
                for (double v : unit) {
                    l1 += Math.abs(v);
                }
                delta[k] = l1;
            }
        }

        double sensitivity(int k) {
            return delta[k];
        }

        Method method(RdpBasis basis, double eps0, SecureLaplace laplace) {
            double[][] w = weights.computeIfAbsent(basis, b -> {
                double[][] rows = eigenfaces(b);
                for (double[] row : rows) {
                    dct.forward(row, true);
                }
                return rows;
            });
            double[] featureDelta = basis.featureRanges();
            return face -> {
                double[] c = face.clone();
                dct.forward(c, true);
                return ranked(c, w, featureDelta, delta, eps0, laplace, x -> {
                    dct.inverse(x, true);
                    return x;
                });
            };
        }
    }
}
