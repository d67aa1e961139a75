package org.privface.privacy.aggregate;

import org.privface.privacy.gdp.SecureGaussian;

import java.security.SecureRandom;
import java.util.Arrays;

import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.factory.DecompositionFactory_DDRM;
import org.ejml.interfaces.decomposition.EigenDecomposition_F64;
import org.privface.privacy.Privacy;

/**
 * Central-DP second moment S = (1/n)Σ x xᵀ of one site's clipped offsets x (Gaussian mechanism,
 * μ-GDP), projected onto the PSD cone so that an eigenbasis can be fitted from it; combined with a
 * {@link PrivateMean} release it gives the covariance S − m mᵀ.
 *
 * <p>Neighbouring data sets replace one record; n is public. Offsets are clipped as in
 * {@link PrivateMean#clip}: ‖x‖ ≤ τ about a public centre.
 *
 * <p>Proof sketch. Replacing x by y changes S by (xxᵀ − yyᵀ)/n, and
 * ‖xxᵀ − yyᵀ‖_F² = ‖x‖⁴ + ‖y‖⁴ − 2⟨x,y⟩² ≤ 2τ⁴, so Δ = √2·τ²/n (tight at x ⊥ y; the looser
 * ‖x‖² + ‖y‖² = 2τ² would add 41% noise for nothing). Only the d(d+1)/2 upper-triangle entries are
 * released; their L2 change is at most the Frobenius one, as off-diagonals count once instead of
 * twice. They get {@link SecureGaussian}'s grid Gaussian, calibrated net of the grid's rounding,
 * hence μ-GDP; mirroring and the PSD projection are post-processing.
 */
public final class PrivateCovariance {
    private final SecureGaussian gaussian;

    public PrivateCovariance() {
        this.gaussian = new SecureGaussian();
    }

    /** For statistical tests that need a reproducible stream; production uses the default. */
    public PrivateCovariance(SecureRandom random) {
        this.gaussian = new SecureGaussian(random);
    }

    /** What a site may publish: the PSD-projected noisy second moment of the clipped offsets. */
    public record Release(DMatrixRMaj secondMoment, double[] centre, int n, double tau, double mu, double sigma) {
        public Release {
            secondMoment = secondMoment.copy();
            centre = centre.clone();
        }

        @Override
        public DMatrixRMaj secondMoment() {
            return secondMoment.copy();
        }

        @Override
        public double[] centre() {
            return centre.clone();
        }

        /**
         * Covariance S − m mᵀ of the clipped offsets, from this release and a mean released on the
         * same clipped data (same centre, τ and n), projected onto the PSD cone. Post-processing
         * of both: by composition the pair is √(μ_S² + μ_m²)-GDP.
         */
        public DMatrixRMaj covariance(PrivateMean.Release mean) {
            if (mean.n() != n || mean.tau() != tau || !Arrays.equals(mean.centre(), centre)) {
                throw new IllegalArgumentException("mean and second moment were released on differently clipped data");
            }
            double[] m = mean.offset();
            int d = centre.length;
            DMatrixRMaj c = secondMoment.copy();
            for (int i = 0; i < d; i++) {
                for (int j = 0; j < d; j++) {
                    c.unsafe_set(i, j, c.unsafe_get(i, j) - m[i] * m[j]);
                }
            }
            return projectPsd(c);
        }
    }

    /** Frobenius sensitivity of (1/n)Σ x xᵀ for ‖x‖ ≤ τ, replace-one: √2·τ²/n. */
    public static double sensitivity(int n, double tau) {
        if (n < 1) {
            throw new IllegalArgumentException("need at least one record, was " + n);
        }
        Privacy.checkRadius(tau);
        return Math.sqrt(2) * tau * tau / n;
    }

    /** The second moment of the offsets clipped to radius τ about the centre, released μ-GDP. */
    public Release release(double[][] data, double[] centre, double tau, double mu) {
        Privacy.checkMu(mu);
        double[][] x = PrivateMean.clipAll(data, centre, tau);
        int n = x.length;
        int d = centre.length;
        double[] upper = new double[d * (d + 1) / 2];
        for (double[] xi : x) {
            int k = 0;
            for (int i = 0; i < d; i++) {
                double a = xi[i];
                for (int j = i; j < d; j++) {
                    upper[k++] += a * xi[j];
                }
            }
        }
        for (int k = 0; k < upper.length; k++) {
            upper[k] /= n;
        }
        double delta = sensitivity(n, tau);
        double sigma = PrivateMean.sigma(delta, mu, upper.length);
        double[] noisy = gaussian.addNoise(upper, PrivateMean.filled(upper.length, sigma));
        DMatrixRMaj s = new DMatrixRMaj(d, d);
        int k = 0;
        for (int i = 0; i < d; i++) {
            for (int j = i; j < d; j++) {
                s.unsafe_set(i, j, noisy[k]);
                s.unsafe_set(j, i, noisy[k]);
                k++;
            }
        }
        return new Release(projectPsd(s), centre, n, tau, mu, SecureGaussian.effectiveSigma(sigma));
    }

    /**
     * The nearest PSD matrix in Frobenius norm to a symmetric one: V·max(Λ, 0)·Vᵀ. The result is
     * made exactly symmetric, since the reconstruction's round-off is not.
     */
    public static DMatrixRMaj projectPsd(DMatrixRMaj symmetric) {
        int d = symmetric.numRows;
        if (symmetric.numCols != d) {
            throw new IllegalArgumentException("need a square matrix");
        }
        EigenDecomposition_F64<DMatrixRMaj> dec = DecompositionFactory_DDRM.eig(d, true, true);
        if (!dec.decompose(symmetric.copy())) {
            throw new IllegalStateException("eigen decomposition failed");
        }
        DMatrixRMaj out = new DMatrixRMaj(d, d);
        for (int k = 0; k < dec.getNumberOfEigenvalues(); k++) {
            double lambda = dec.getEigenvalue(k).real;
            if (!(lambda > 0)) {
                continue;
            }
            double[] v = dec.getEigenVector(k).getData();
            double norm2 = 0;
            for (double x : v) {
                norm2 += x * x;
            }
            for (int i = 0; i < d; i++) {
                double li = lambda * v[i] / norm2;
                for (int j = 0; j < d; j++) {
                    out.unsafe_set(i, j, out.unsafe_get(i, j) + li * v[j]);
                }
            }
        }
        for (int i = 0; i < d; i++) {
            for (int j = i + 1; j < d; j++) {
                double a = 0.5 * (out.unsafe_get(i, j) + out.unsafe_get(j, i));
                out.unsafe_set(i, j, a);
                out.unsafe_set(j, i, a);
            }
        }
        return out;
    }
}
