package org.privface.evaluation.papers;

import static org.privface.evaluation.papers.RdpStudy.P;
import static org.privface.evaluation.papers.RdpStudy.filled;

import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import org.jtransforms.dct.DoubleDCT_2D;
import org.privface.evaluation.papers.RdpStudy.Method;
import org.privface.evaluation.papers.RdpStudy.Sanitized;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.rdp.RdpBasis;
import org.privface.privacy.rdp.RdpMechanism;
import org.privface.privacy.rdp.RdpMode;
import org.privface.privacy.rdp.RdpRelease;

/**
 * The sanitizers {@link RdpEvaluation} compares: RDP in its modes and the paper's Pixel-DP and
 * DCT-DP baselines, each in two readings (every pixel or coefficient noised, or a geometric
 * number K of them). All work on [0, 1] pixels at the basis' size; M_P is the basis' size.
 */
final class RdpBaselines {
    private RdpBaselines() {
    }

    /** Every method by name; Δ_i are the paper modes' and baselines' feature sensitivities. */
    static Method method(String name, RdpBasis basis, double[] delta, double eps0, SecureLaplace laplace, DctDp dct) {
        return switch (name) {
            case "pixel-dp" -> face -> all(face.clone(), delta, filled(face.length, 1.0), eps0, laplace, f -> f);
            case "pixel-dp-geo" -> {
                double[][] w = eigenfaces(basis);
                double[] ones = filled(basis.size(), 1.0);
                yield face -> ranked(face.clone(), w, delta, ones, eps0, laplace, f -> f);
            }
            case "dct-dp", "dct-dp-all" -> dct.method(basis, delta, eps0, laplace, name.equals("dct-dp-all"));
            case "rdp-uniform" -> rdp(basis, RdpMode.UNIFORM, delta, eps0, basis.size(), laplace);
            case "rdp-na" -> rdp(basis, RdpMode.NA, delta, eps0, basis.size(), laplace);
            case "rdp-na-rescaled" -> rdp(basis, RdpMode.NA_RESCALED, delta, eps0, basis.size(), laplace);
            case "rdp-lmgd" -> rdp(basis, RdpMode.LMGD, delta, eps0, basis.size(), laplace);
            case "rdp-strict" -> rdp(basis, RdpMode.STRICT, delta, eps0, RdpMechanism.DEFAULT_STRICT_KEEP, laplace);
            default -> throw new IllegalArgumentException("unknown method " + name);
        };
    }

    /** Method names whose release has a finite per-face ε: the "all" readings and STRICT. */
    static final List<String> FINITE = List.of("pixel-dp", "dct-dp-all", "rdp-strict");

    static Method rdp(RdpBasis basis, RdpMode mode, double[] delta, double eps0, int keep, SecureLaplace laplace) {
        RdpMechanism mechanism = new RdpMechanism(basis, mode, eps0, P, keep, laplace, RdpMechanism.LmgdSettings.DEFAULT,
                delta);
        return face -> {
            RdpRelease r = mechanism.sanitize(face, true);
            return new Sanitized(r.image(), r.expectedNoiseEnergy(), r.realNoiseEnergy(), r.epsilonPerFace(),
                    r.epsilonNoised(), r.lmgdIterations(), r.epsilonEq3());
        };
    }

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
    static Sanitized ranked(double[] c, double[][] weights, double[] featureDelta, double[] range, double eps0,
                            SecureLaplace laplace, UnaryOperator<double[]> inverse) {
        RdpMechanism.Ranked r = RdpMechanism.ranked(c, weights, featureDelta, range, RdpMode.UNIFORM, eps0, P, c.length,
                laplace, RdpMechanism.LmgdSettings.DEFAULT);
        return new Sanitized(clip(inverse.apply(r.coefficients())), r.expectedNoiseEnergy(), r.realNoiseEnergy(),
                Double.POSITIVE_INFINITY, r.epsilonNoised(), 0, r.epsilonEq3());
    }

    /**
     * The "all" reading in an orthonormal domain (L470's first sentence for pixels): every
     * coefficient gets Laplace(b̄). With every coefficient noised Eq. 3 has c_k = 1, and the
     * eigenfaces have unit norm in any orthonormal domain, so ε0 = Σ_i Δ_i / b̄. Coefficient k
     * spans range_k over [0, 1] images, so this reading has a finite per-face ε: Σ_k range_k / b̄
     * (the number of pixels over b̄ for Pixel-DP).
     */
    static Sanitized all(double[] c, double[] featureDelta, double[] range, double eps0, SecureLaplace laplace,
                         UnaryOperator<double[]> inverse) {
        double b = Arrays.stream(featureDelta).sum() / eps0;
        double[] noisy = laplace.addNoiseScaled(c, range, filled(c.length, b));
        double real = 0;
        double perFace = 0;
        for (int j = 0; j < noisy.length; j++) {
            real += (noisy[j] - c[j]) * (noisy[j] - c[j]);
            perFace += range[j] / b;
        }
        return new Sanitized(clip(inverse.apply(noisy)), c.length * 2 * b * b, real, perFace, perFace, 0, eps0);
    }

    private static double[] clip(double[] image) {
        for (int j = 0; j < image.length; j++) {
            image[j] = Math.max(0, Math.min(1, image[j]));
        }
        return image;
    }

    /**
     * DCT-DP (L468 only cites Ji et al.): the orthonormal 2D DCT with the eigenfaces' DCT as
     * weights, read as plain RDP's rule (a geometric K of coefficients, ranked by amplitude) or as
     * noise on every coefficient. Range_k, the L1 norm of DCT basis image k, sets the sampler's
     * grid; in the K reading the exact coefficients below rank K leave the per-face ε unbounded.
     */
    static final class DctDp {
        private final Map<Long, DoubleDCT_2D> transforms = new HashMap<>();
        private final Map<Long, double[]> ranges = new HashMap<>();
        private final Map<RdpBasis, double[][]> weights = new IdentityHashMap<>();

        private DoubleDCT_2D transform(int width, int height) {
            return transforms.computeIfAbsent(((long) height << 32) | width, k -> new DoubleDCT_2D(height, width));
        }

        /**
         * ‖ψ_k‖₁ of every DCT basis image at width × height. The 2D basis is the outer product of
         * two 1D ones, so its L1 norm is the product of theirs: no width·height inverse transforms.
         */
        double[] ranges(int width, int height) {
            return ranges.computeIfAbsent(((long) height << 32) | width, k -> {
                double[] rows = RdpBaselines.dctL1(height);
                double[] cols = RdpBaselines.dctL1(width);
                double[] r = new double[width * height];
                for (int v = 0; v < height; v++) {
                    for (int u = 0; u < width; u++) {
                        r[v * width + u] = rows[v] * cols[u];
                    }
                }
                return r;
            });
        }

        Method method(RdpBasis basis, double[] featureDelta, double eps0, SecureLaplace laplace, boolean all) {
            int width = basis.wavelet().width();
            int height = basis.wavelet().height();
            DoubleDCT_2D dct = transform(width, height);
            double[] range = ranges(width, height);
            double[][] w = weights.computeIfAbsent(basis, b -> {
                double[][] rows = eigenfaces(b);
                for (double[] row : rows) {
                    dct.forward(row, true);
                }
                return rows;
            });
            UnaryOperator<double[]> inverse = x -> {
                dct.inverse(x, true);
                return x;
            };
            return face -> {
                double[] c = face.clone();
                dct.forward(c, true);
                return all ? all(c, featureDelta, range, eps0, laplace, inverse)
                        : ranked(c, w, featureDelta, range, eps0, laplace, inverse);
            };
        }
    }

    /** L1 norms of the n orthonormal 1D DCT-II basis vectors. */
    static double[] dctL1(int n) {
        double[] l1 = new double[n];
        for (int u = 0; u < n; u++) {
            double a = Math.sqrt((u == 0 ? 1.0 : 2.0) / n);
            for (int x = 0; x < n; x++) {
                l1[u] += Math.abs(a * Math.cos(Math.PI * (2 * x + 1) * u / (2.0 * n)));
            }
        }
        return l1;
    }
}
