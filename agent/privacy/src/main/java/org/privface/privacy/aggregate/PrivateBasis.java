package org.privface.privacy.aggregate;

import org.ejml.data.DMatrixRMaj;
import org.privface.privacy.EigenBasis;

/**
 * The top-nc eigenfaces of a site fitted from its private mean and second moment only, so the basis
 * can be published or shared across sites with a stated guarantee.
 *
 * <p>Guarantee: the mean (μ_m-GDP) and second moment (μ_S-GDP) are two releases on the same data;
 * by GDP composition (Dong, Roth and Su 2022, Cor. 3.3) together they are √(μ_m² + μ_S²)-GDP, and
 * everything here is post-processing of them. Unlike {@code EigenBasis} it fixes no clamp ranges:
 * those would be read off the raw faces and spend privacy this basis does not account for.
 */
public final class PrivateBasis {
    private final double[] mean;
    private final double[][] components;
    private final double[] eigenvalues;
    private final double mu;

    private PrivateBasis(double[] mean, double[][] components, double[] eigenvalues, double mu) {
        this.mean = mean;
        this.components = components;
        this.eigenvalues = eigenvalues;
        this.mu = mu;
    }

    /** Top nc eigenvectors of the private covariance S − m mᵀ, in descending eigenvalue order. */
    public static PrivateBasis fit(PrivateMean.Release mean, PrivateCovariance.Release secondMoment, int nc) {
        DMatrixRMaj cov = secondMoment.covariance(mean);
        int d = cov.numRows;
        if (nc < 1 || nc > d) {
            throw new IllegalArgumentException("nc must be in [1, " + d + "], was " + nc);
        }
        EigenBasis.Top top = EigenBasis.symmetricTop(cov, nc);
        double[][] comps = top.vectors();
        double[] eig = new double[nc];
        for (int k = 0; k < nc; k++) {
            eig[k] = Math.max(0, top.values()[k]);
        }
        double mu = Math.hypot(mean.mu(), secondMoment.mu());
        return new PrivateBasis(mean.mean(), comps, eig, mu);
    }

    /** The private mean in the original coordinates. */
    public double[] mean() {
        return mean.clone();
    }

    /** Eigenface k, unit length. */
    public double[] component(int k) {
        return components[k].clone();
    }

    public double[] eigenvalues() {
        return eigenvalues.clone();
    }

    public int dimension() {
        return components.length;
    }

    /** μ of the μ-GDP guarantee of everything this basis reveals. */
    public double mu() {
        return mu;
    }

    public String guarantee() {
        return String.format(java.util.Locale.ROOT,
                "%.6g-GDP (mean and second moment composed); replace-one neighbours, n public", mu);
    }
}
