package org.privface.privacy.gdp;

import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.factory.DecompositionFactory_DDRM;
import org.ejml.interfaces.decomposition.EigenDecomposition_F64;
import org.privface.privacy.Privacy;

/**
 * Soto, Reimherr, Slavković, Shriver's functional mechanism (Section 4.1 and 5): the regularised
 * mean of n closed curves f_i : [0,1] → ℝ in the RKHS of the periodic powered-exponential kernel
 * k(s,t) = exp(−d_S¹(s,t)/ρ), h = Σ_j λ_j/(λ_j+φ) ⟨f̄, b_j⟩ b_j, released as h + (Δ/μ) Z with Z the
 * Gaussian process of covariance C (the kernel's integral operator) and Δ² = 4τ²/(n²φ), τ a bound on
 * every curve's L² norm. This is a <b>summary of n curves</b>, μ-GDP with respect to replacing one
 * curve; it is not a per-face release.
 *
 * <p>Discretised on the paper's grid t_i = i/m, i = 0..m (m = 80 in the paper): the operator's
 * eigenpairs are those of K/(m+1), so ⟨f, b_j⟩ is a dot product with K's unit eigenvector scaled by
 * 1/√(m+1). Noise is drawn in that Karhunen–Loève basis (N(0, (Δ/μ)² λ_j) per coefficient, from
 * {@link SecureGaussian}) and mapped back to the grid, which is post-processing. The paper's Δ is
 * twice the tight one: ‖S(f−f′)/n‖²_K ≤ max_j λ_j/(λ_j+φ)² · 4τ²/n² ≤ τ²/(n²φ). Paper mode keeps the
 * printed bound.
 */
public final class RkhsMean {
    private final int points;
    private final double phi;
    private final double[] lambda;
    /** Unit eigenvectors of K, one per row. */
    private final double[][] vectors;
    private final SecureGaussian gaussian;

    /**
     * @param m   grid fineness: the curve is sampled at m + 1 points i/m
     * @param rho the kernel's range
     * @param phi the smoothing penalty φ
     */
    public RkhsMean(int m, double rho, double phi, SecureGaussian gaussian) {
        if (m < 2 || !(rho > 0) || !(phi > 0)) {
            throw new IllegalArgumentException("need m >= 2, rho > 0, phi > 0");
        }
        this.points = m + 1;
        this.phi = phi;
        this.gaussian = gaussian;
        DMatrixRMaj k = new DMatrixRMaj(points, points);
        for (int a = 0; a < points; a++) {
            for (int b = 0; b < points; b++) {
                double gap = Math.abs(a - b) / (double) m;
                double arc = 2 * Math.PI * Math.min(gap, 1 - gap);
                k.set(a, b, Math.exp(-arc / rho));
            }
        }
        EigenDecomposition_F64<DMatrixRMaj> eig = DecompositionFactory_DDRM.eig(points, true, true);
        if (!eig.decompose(k)) {
            throw new IllegalStateException("kernel eigendecomposition failed");
        }
        lambda = new double[points];
        vectors = new double[points][];
        for (int j = 0; j < points; j++) {
            lambda[j] = Math.max(0, eig.getEigenvalue(j).getReal()) / points;
            vectors[j] = eig.getEigenVector(j).getData().clone();
        }
    }

    /** The paper's bound: Δ = 2τ/(n√φ). */
    public double sensitivity(int n, double tau) {
        return 2 * tau / (n * Math.sqrt(phi));
    }

    /** L² norm on [0,1] of a curve given on the grid. */
    public static double norm(double[] f) {
        double s = 0;
        for (double v : f) {
            s += v * v;
        }
        return Math.sqrt(s / f.length);
    }

    /** The regularised mean h of the curves, without noise. */
    public double[] smoothMean(double[][] curves) {
        return fromCoefficients(shrunkCoefficients(curves));
    }

    /**
     * The μ-GDP release of the regularised mean, with τ given by the caller. Curves whose L² norm
     * exceeds τ are scaled down to it, so Δ holds whatever τ is.
     */
    public double[] release(double[][] curves, double tau, double mu) {
        Privacy.checkMu(mu);
        double left = mu - SecureGaussian.roundingMu(points);
        if (!(left > 0)) {
            throw new IllegalArgumentException("mu " + mu + " is below the grid's own " + SecureGaussian.roundingMu(points));
        }
        double[][] clipped = new double[curves.length][];
        for (int i = 0; i < curves.length; i++) {
            double nrm = norm(curves[i]);
            double f = nrm > tau ? tau / nrm : 1;
            clipped[i] = curves[i].clone();
            for (int t = 0; t < points; t++) {
                clipped[i][t] *= f;
            }
        }
        double[] c = shrunkCoefficients(clipped);
        double scale = sensitivity(curves.length, tau) / left;
        double[] sigmas = new double[points];
        for (int j = 0; j < points; j++) {
            // A zero eigenvalue carries no noise and no signal (its shrunk coefficient is 0).
            sigmas[j] = Math.max(scale * Math.sqrt(lambda[j]), Double.MIN_NORMAL);
        }
        return fromCoefficients(gaussian.addNoise(c, sigmas));
    }

    /** b_j on the grid, unit in L²[0,1] (for tests of the sensitivity). */
    double[] basisFunction(int j) {
        double[] b = vectors[j].clone();
        for (int t = 0; t < b.length; t++) {
            b[t] *= Math.sqrt(points);
        }
        return b;
    }

    /** The operator's eigenvalues λ_j (for tests of the sensitivity). */
    double[] eigenvalues() {
        return lambda.clone();
    }

    /** ⟨h, b_j⟩ of the regularised mean, before noise (for tests of the sensitivity). */
    double[] shrunkCoefficients(double[][] curves) {
        if (curves.length < 1) {
            throw new IllegalArgumentException("need at least one curve");
        }
        double[] mean = new double[points];
        for (double[] f : curves) {
            if (f.length != points) {
                throw new IllegalArgumentException("curve has " + f.length + " points, expected " + points);
            }
            for (int t = 0; t < points; t++) {
                mean[t] += f[t] / curves.length;
            }
        }
        double[] c = new double[points];
        for (int j = 0; j < points; j++) {
            double dot = 0;
            for (int t = 0; t < points; t++) {
                dot += vectors[j][t] * mean[t];
            }
            c[j] = lambda[j] / (lambda[j] + phi) * dot / Math.sqrt(points);
        }
        return c;
    }

    private double[] fromCoefficients(double[] c) {
        double[] f = new double[points];
        for (int j = 0; j < points; j++) {
            for (int t = 0; t < points; t++) {
                f[t] += c[j] * vectors[j][t] * Math.sqrt(points);
            }
        }
        return f;
    }
}
