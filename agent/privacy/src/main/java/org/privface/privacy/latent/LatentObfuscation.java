package org.privface.privacy.latent;

import org.privface.privacy.EigenBasis;
import org.privface.privacy.FaceMechanism;
import org.privface.privacy.Privacy;
import org.privface.privacy.Release;
import org.privface.privacy.SecureLaplace;

/**
 * DP obfuscation in a generative model's latent space (Croft, Sack, Shi, "Obfuscation of images
 * via differential privacy: from facial images to general images", 2019), with the eigenface
 * model as the generator: encode c = Uᵀ(x − μ), clamp each coordinate to [min_i, max_i] fixed
 * from the fitting faces, add Laplace noise with scale σ_i = n·(max_i − min_i)/ε, clamp the
 * output, and decode x′ = μ + U c′.
 *
 * <p>Proof sketch (their Theorem 1). With the normalised distance
 * d(c, c′) = (1/n) Σ_i |c_i − c′_i| / (max_i − min_i), coordinate i's privacy loss is at most
 * |c_i − c′_i| / σ_i = ε |c_i − c′_i| / (n (max_i − min_i)); summing gives ε·d(c, c′): metric
 * DP. Clamped inputs have d ≤ 1 for any two faces, so the release is also pure ε-LDP per face.
 * The output clamp and the decoding are post-processing. On the power-of-two grid the sampler's
 * rounding is added to each Δ_i (see {@link SecureLaplace#addNoiseScaled}).
 *
 * <p>Up to the output clamp and the decoding, this is PEEP's {@code vector} mode: scaling each
 * coordinate to [0, 1] and adding Laplace(n/ε) is the same noise.
 */
public final class LatentObfuscation implements FaceMechanism {
    private final EigenBasis basis;
    private final double epsilon;
    private final SecureLaplace laplace;
    private final double[] range;
    private final double[] scale;

    public LatentObfuscation(EigenBasis basis, double epsilon, SecureLaplace laplace) {
        this.basis = basis;
        this.epsilon = Privacy.checkEpsilon(epsilon);
        this.laplace = laplace;
        int n = basis.dimension();
        range = new double[n];
        scale = new double[n];
        for (int i = 0; i < n; i++) {
            range[i] = basis.upper(i) - basis.lower(i);
            scale[i] = n * range[i] / epsilon;
        }
    }

    /** The obfuscated latent vector c′, clamped to the fitted ranges. */
    public double[] obfuscate(double[] face) {
        double[] c = clamp(basis.project(face));
        return clamp(laplace.addNoiseScaled(c, range, scale));
    }

    /** The sanitized image μ + U c′, pixels clipped to [0, 1]. */
    public double[] decode(double[] latent) {
        double[] x = basis.reconstruct(latent);
        for (int j = 0; j < x.length; j++) {
            x[j] = Math.max(0, Math.min(1, x[j]));
        }
        return x;
    }

    @Override
    public Release perturb(double[] face) {
        double[] c = obfuscate(face);
        double mean = 0;
        for (double s : scale) {
            mean += s / scale.length;
        }
        return new Release(c, "LATENT", "croft", epsilon / c.length, epsilon, mean, basis.id(), null);
    }

    /** Laplace scale of coordinate i; exposed for the exact privacy-loss check. */
    public double scale(int i) {
        return scale[i];
    }

    /** The normalised distance d under which the release is ε·d-private. */
    public double distance(double[] c, double[] cPrime) {
        double d = 0;
        for (int i = 0; i < c.length; i++) {
            d += Math.abs(c[i] - cPrime[i]) / range[i];
        }
        return d / c.length;
    }

    public double[] clamp(double[] c) {
        double[] out = new double[c.length];
        for (int i = 0; i < c.length; i++) {
            out[i] = Math.max(basis.lower(i), Math.min(basis.upper(i), c[i]));
        }
        return out;
    }

    @Override
    public int width() {
        return basis.width();
    }

    @Override
    public int height() {
        return basis.height();
    }

    @Override
    public double epsilonPerFace() {
        return epsilon;
    }

    public EigenBasis basis() {
        return basis;
    }
}
