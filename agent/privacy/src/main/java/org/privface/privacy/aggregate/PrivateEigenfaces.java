package org.privface.privacy.aggregate;

import org.privface.privacy.EigenBasis;
import org.privface.privacy.Privacy;

/**
 * An eigenface basis a gateway may fit on its own enrolled faces and then release those faces
 * through: mean, components, eigenvalues, clamp ranges and clip radii all come from one μ-GDP
 * release of the faces ({@link PrivateBasis}), so what the basis reveals about an enrolled face is
 * bounded by μ, which the caller charges to that face (issue 17, item 4).
 *
 * <p>The fit runs in a public, data-independent subspace: pixels averaged over {@value #BLOCK}×
 * {@value #BLOCK} blocks, scaled to unit norm (z_B = Σ_{p∈B} x_p / √|B|). These block vectors are
 * orthonormal in pixel space, so eigenvectors lift back to unit eigenfaces, and the d×d second
 * moment shrinks from 2914² entries to 48² at 47×62 pixels: its noise grows with its dimension. On
 * the 65 synthetic enrollment faces at μ = 2, 8×8 blocks recover 0.27 of the clean 8-component
 * subspace (‖U′ᵀU‖²/nc) against 0.08 with 4×4 blocks; pooling alone caps it near 0.65.
 *
 * <p>Bounds are post-processing of the private eigenvalues λ_k, never of the faces: component k
 * is clamped to ±{@value #RANGE_SDS}·√λ_k, the l1-clip radius is Σ√λ_k (a Gaussian coordinate's
 * mean |c| is 0.8√λ), the l2-clip radius {@value #L2_FACTOR}·√Σλ_k. The clip radius of the private
 * statistics themselves is a public constant about the grey face.
 */
public final class PrivateEigenfaces {
    /** Side of the public pooling blocks, in pixels. */
    public static final int BLOCK = 8;
    /** Public clip radius about the grey face 0.5, as a fraction of the largest possible norm 0.5·√d. */
    static final double TAU_FRACTION = 0.3;
    static final double RANGE_SDS = 3;
    static final double L2_FACTOR = 1.25;
    /** Floor on a private eigenvalue (coordinates in pixel units), so every clamp range is non-empty. */
    static final double MIN_EIGENVALUE = 1e-6;

    private PrivateEigenfaces() {
    }

    /** A private basis and the μ of the μ-GDP guarantee it carries for every face it was fitted on. */
    public record Fit(EigenBasis basis, double mu, int n) {
    }

    /**
     * Fits nc eigenfaces to faces (rows, pixels in [0,1], width × height) at μ-GDP: μ/√2 for the
     * mean, μ/√2 for the second moment, which compose to μ.
     */
    public static Fit fit(double[][] faces, int width, int height, int nc, double mu, PrivateMean means,
                          PrivateCovariance moments) {
        Privacy.checkMu(mu);
        int[] block = blocks(width, height);
        int pooledDim = block[block.length - 1] + 1;
        if (nc < 1 || nc > pooledDim) {
            throw new IllegalArgumentException("nc must be in [1, " + pooledDim + "], was " + nc);
        }
        double[] size = new double[pooledDim];
        for (int b : block) {
            size[b]++;
        }
        double[][] z = new double[faces.length][];
        for (int i = 0; i < faces.length; i++) {
            if (faces[i].length != block.length) {
                throw new IllegalArgumentException("face of " + faces[i].length + " pixels, expected " + block.length);
            }
            z[i] = new double[pooledDim];
            for (int p = 0; p < block.length; p++) {
                z[i][block[p]] += faces[i][p] / Math.sqrt(size[block[p]]);
            }
        }
        double[] centre = new double[pooledDim];
        for (int b = 0; b < pooledDim; b++) {
            centre[b] = 0.5 * Math.sqrt(size[b]);
        }
        double tau = TAU_FRACTION * 0.5 * Math.sqrt(block.length);
        double part = mu / Math.sqrt(2);
        PrivateMean.Release m = means.release(z, centre, tau, part);
        PrivateCovariance.Release s = moments.release(z, centre, tau, part);
        PrivateBasis pb = PrivateBasis.fit(m, s, nc);

        double[] mean = lift(pb.mean(), block, size);
        double[][] comps = new double[nc][];
        double[] eig = new double[nc];
        for (int k = 0; k < nc; k++) {
            comps[k] = lift(pb.component(k), block, size);
            eig[k] = Math.max(MIN_EIGENVALUE, pb.eigenvalues()[k]);
        }
        return new Fit(bounded(width, height, mean, comps, eig), pb.mu(), faces.length);
    }

    /** The basis with its bounds fixed from its eigenvalues alone (class doc). */
    static EigenBasis bounded(int width, int height, double[] mean, double[][] comps, double[] eig) {
        int nc = comps.length;
        double[] lo = new double[nc];
        double[] hi = new double[nc];
        double l1 = 0;
        double sum = 0;
        for (int k = 0; k < nc; k++) {
            double sd = Math.sqrt(eig[k]);
            lo[k] = -RANGE_SDS * sd;
            hi[k] = RANGE_SDS * sd;
            l1 += sd;
            sum += eig[k];
        }
        return EigenBasis.withBounds(width, height, mean, comps, eig, lo, hi, l1, L2_FACTOR * Math.sqrt(sum));
    }

    /** Each pixel's block index, row-major; the last pixel's is the largest. */
    static int[] blocks(int width, int height) {
        int across = (width + BLOCK - 1) / BLOCK;
        int[] b = new int[width * height];
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                b[y * width + x] = (y / BLOCK) * across + x / BLOCK;
            }
        }
        return b;
    }

    /** The pixel-space vector Σ_B v_B·1_B/√|B| of a pooled vector. */
    private static double[] lift(double[] v, int[] block, double[] size) {
        double[] x = new double[block.length];
        for (int p = 0; p < block.length; p++) {
            x[p] = v[block[p]] / Math.sqrt(size[block[p]]);
        }
        return x;
    }
}
