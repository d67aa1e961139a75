package org.privface.privacy.gdp;

import java.util.Objects;

import org.privface.privacy.EigenBasis;
import org.privface.privacy.FaceMechanism;
import org.privface.privacy.Privacy;
import org.privface.privacy.Release;

/**
 * The Gaussian mechanism on eigenface coordinates: the finite-dimensional case of the functional
 * Gaussian mechanism of Soto et al. ("Shape and structure preserving differential privacy"), with
 * the PCA covariance as the noise's covariance.
 *
 * <p>A face x gives c = Uᵀ(x − mean) ({@link EigenBasis#project}), clipped to the L2 ball of radius
 * τ = {@link EigenBasis#l2Radius()} fixed when the basis was fitted. The release is
 * S·c + k·C^{1/2}·ξ with C = diag(λ_i) the PCA eigenvalues, S = C(C + φI)^{-1} = diag(λ_i/(λ_i + φ)),
 * ξ standard normal (exact discrete Gaussian on a grid, {@link SecureGaussian}) and k = Δ/(μ − r).
 * Noise follows the faces' own covariance, so it is large along directions faces vary in and small
 * where they do not; φ ≥ 0 shrinks the low-variance coordinates, whose sensitivity would otherwise
 * dominate Δ.
 *
 * <p>Proof sketch (μ-GDP). Any two faces give clipped c, c′ with ‖c‖₂, ‖c′‖₂ ≤ τ. Both releases are
 * Gaussian with covariance k²C, so telling them apart is exactly telling N(0,1) from N(μ′,1) with
 * μ′ = ‖(kC^{1/2})^{-1}(Sc − Sc′)‖₂ = ‖C^{-1/2}S(c − c′)‖₂ / k (whiten, then project on the mean
 * difference; Dong, Roth, Su). C^{-1/2}S is diagonal with entries w_i = √λ_i/(λ_i + φ), so
 * ‖C^{-1/2}S(c − c′)‖₂ ≤ max_i w_i · ‖c − c′‖₂ ≤ 2τ·max_i w_i =: Δ, with equality at c = τe_j,
 * c′ = −τe_j for j = argmax w_i: Δ is the exact sensitivity in the Mahalanobis norm of C^{1/2}.
 * The grid rounding adds at most r = √nc·2^-19 to μ′ ({@link SecureGaussian#roundingMu}), so
 * μ′ ≤ Δ/k + r = μ. Equivalently the sensitivity charged, grid included, is Δ + k·r = k·μ.
 * Compared with the functional setting: there the noise is a Gaussian process with covariance C
 * and the same bound is taken in the Cameron-Martin norm ‖C^{-1/2}·‖; on nc coordinates that norm
 * is the weighted L2 norm above.
 */
public final class GaussianMechanism implements FaceMechanism {
    public static final String MECHANISM = "GAUSSIAN";
    public static final String MODE = "gdp";

    private final EigenBasis basis;
    private final double mu;
    private final double phi;
    private final SecureGaussian gaussian;
    private final double tau;
    private final double[] shrink;
    private final double sensitivity;
    private final double[] sigmas;
    private final double epsilonPerFace;
    private final double epsilonPerCoordinate;
    private final double noiseScale;

    /**
     * @param mu  μ-GDP one release spends on a whole face
     * @param phi ridge φ ≥ 0 of the shrinkage S = C(C + φI)^{-1}; 0 leaves c unshrunk
     */
    public GaussianMechanism(EigenBasis basis, double mu, double phi, SecureGaussian gaussian) {
        this.basis = Objects.requireNonNull(basis, "basis");
        this.mu = Privacy.checkMu(mu);
        if (!(phi >= 0) || !Double.isFinite(phi)) {
            throw new IllegalArgumentException("phi must be non-negative and finite, was " + phi);
        }
        this.phi = phi;
        this.gaussian = Objects.requireNonNull(gaussian, "gaussian");
        int nc = basis.dimension();
        double[] lambda = basis.eigenvalues();
        this.tau = basis.l2Radius();
        this.shrink = new double[nc];
        for (int i = 0; i < nc; i++) {
            shrink[i] = lambda[i] / (lambda[i] + phi);
        }
        this.sensitivity = sensitivity(lambda, phi, tau);
        double r = SecureGaussian.roundingMu(nc);
        if (!(mu > 2 * r)) {
            throw new IllegalArgumentException("mu " + mu + " is below what the noise grid alone costs (" + 2 * r + ")");
        }
        double k = sensitivity / (mu - r);
        this.sigmas = new double[nc];
        double sum = 0;
        for (int i = 0; i < nc; i++) {
            sigmas[i] = k * Math.sqrt(lambda[i]);
            sum += sigmas[i];
        }
        this.noiseScale = sum / nc;
        this.epsilonPerFace = MuGdp.epsilonFor(mu, MuGdp.DEFAULT_DELTA);
        // Under the L2 clip one coordinate can carry the whole sensitivity: per coordinate, the whole ε.
        this.epsilonPerCoordinate = epsilonPerFace;
    }

    /** Δ = 2τ·max_i √λ_i/(λ_i + φ): the sup of ‖C^{-1/2}S(c − c′)‖₂ over the τ-ball (see the class comment). */
    public static double sensitivity(double[] eigenvalues, double phi, double tau) {
        Privacy.checkSensitivity(tau);
        double maxWeight = 0;
        for (double lambda : eigenvalues) {
            if (!(lambda > 0) || !Double.isFinite(lambda)) {
                throw new IllegalArgumentException("eigenvalues must be positive and finite, was " + lambda);
            }
            maxWeight = Math.max(maxWeight, Math.sqrt(lambda) / (lambda + phi));
        }
        return 2 * tau * maxWeight;
    }

    /**
     * Radial projection onto the L2 ball of radius τ, a hair inside so that the rounding of the
     * scaling cannot leave the ball. Returns a new array.
     */
    public static double[] clip(double[] c, double tau) {
        double norm = 0;
        for (double x : c) {
            norm += x * x;
        }
        norm = Math.sqrt(norm);
        double[] out = c.clone();
        if (norm > tau) {
            double scale = tau / norm * (1 - 0x1.0p-50);
            for (int i = 0; i < out.length; i++) {
                out[i] *= scale;
            }
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

    /** Perturbs one face given as pixels in [0,1], row-major, at the basis' size. */
    @Override
    public Release perturb(double[] facePixels) {
        double[] c = clip(basis.project(facePixels), tau);
        for (int i = 0; i < c.length; i++) {
            c[i] *= shrink[i];
        }
        double[] noisy = gaussian.addNoise(c, sigmas);
        return new Release(noisy, MECHANISM, MODE, epsilonPerCoordinate, epsilonPerFace, noiseScale, basis.id(), null,
                MuGdp.DEFAULT_DELTA, mu);
    }

    /** ε one release spends on a whole face, at δ = {@link MuGdp#DEFAULT_DELTA}. */
    @Override
    public double epsilonPerFace() {
        return epsilonPerFace;
    }

    /** The worst-case ε of one coordinate: the whole per-face ε, since one coordinate can carry all of Δ. */
    public double epsilonPerCoordinate() {
        return epsilonPerCoordinate;
    }

    /** μ one release spends on a whole face: what a {@link GaussianAccountant} should record. */
    public double mu() {
        return mu;
    }

    public double phi() {
        return phi;
    }

    /** τ, the clip radius. */
    public double clipRadius() {
        return tau;
    }

    /** Δ without the grid's share. */
    public double sensitivity() {
        return sensitivity;
    }

    /** Noise standard deviation per coordinate, k·√λ_i. */
    public double[] sigmas() {
        return sigmas.clone();
    }

    /** Diagonal of S. */
    public double[] shrinkage() {
        return shrink.clone();
    }

    public EigenBasis basis() {
        return basis;
    }
}
