package org.privface.privacy.rdp;

import java.util.Arrays;

import org.privface.privacy.EigenBasis;
import org.privface.privacy.HaarWavelet;

/**
 * Everything RDP precomputes per basis: the Haar transform, the eigenface feature map
 * F = Uᵀ(x − μ), and the weights w_ik = ∂F_i/∂C_k. Because x = Hᵀ C, the weights are
 * W = Uᵀ Hᵀ, whose row i is the forward Haar transform of eigenface i (H is orthonormal).
 * Nothing here depends on a face being perturbed: ranges are fixed from the fitting faces, or
 * ({@link #withFullRanges}) from no face at all.
 */
public final class RdpBasis {
    private final HaarWavelet wavelet;
    private final EigenBasis eigen;
    /** W, nc × d, row-major by feature. */
    private final double[][] weights;
    /** w̃_k = ‖W[:,k]‖₂ / max_j ‖W[:,j]‖₂: coefficient k's influence on the feature vector, in (0, 1]. */
    private final double[] influence;
    /** ω_k = ‖W[:,k]‖₂²: the feature noise energy one unit of noise on coefficient k causes. */
    private final double[] omega;
    /** Δ_k = ‖ψ_k‖₁, the range of coefficient k over all images with pixels in [0, 1] (2^level for Haar). */
    private final double[] sensitivity;
    /** Per-coefficient clamp range from the fitting faces (or the full range), for STRICT. */
    private final double[] lower;
    private final double[] upper;
    /** H μ: the mean face's coefficients, used where STRICT releases nothing. */
    private final double[] meanCoefficients;
    /** Δ_i read as the range of feature i over the fitting faces (Def. 2 over the faces at hand). */
    private final double[] featureRange;
    /** Δ_i read as the worst case over all images in [0, 1]: ‖u_i‖₁ of eigenface i. */
    private final double[] featureBound;
    /** Coefficients by descending influence: a public ranking that no face can change. */
    private final int[] byInfluence;

    private RdpBasis(HaarWavelet wavelet, EigenBasis eigen, double[][] faces) {
        this.wavelet = wavelet;
        this.eigen = eigen;
        int nc = eigen.dimension();
        int d = eigen.width() * eigen.height();
        weights = new double[nc][];
        for (int i = 0; i < nc; i++) {
            weights[i] = wavelet.forward(eigen.component(i));
        }
        omega = new double[d];
        for (double[] row : weights) {
            for (int k = 0; k < d; k++) {
                omega[k] += row[k] * row[k];
            }
        }
        double max = Arrays.stream(omega).max().orElseThrow();
        influence = new double[d];
        for (int k = 0; k < d; k++) {
            influence[k] = Math.sqrt(omega[k] / max);
        }
        sensitivity = new double[d];
        // Coefficient k = ⟨ψ_k, x⟩ over all images x ∈ [0,1]^d spans [Σ min(ψ_k,0), Σ max(ψ_k,0)].
        double[] lowest = new double[d];
        double[] highest = new double[d];
        double[] unit = new double[d];
        for (int k = 0; k < d; k++) {
            unit[k] = 1;
            double l1 = 0;
            for (double v : wavelet.inverse(unit)) {
                l1 += Math.abs(v);
                lowest[k] += Math.min(v, 0);
                highest[k] += Math.max(v, 0);
            }
            unit[k] = 0;
            sensitivity[k] = l1;
        }
        lower = faces == null ? lowest : new double[d];
        upper = faces == null ? highest : new double[d];
        if (faces != null) {
            Arrays.fill(lower, Double.POSITIVE_INFINITY);
            Arrays.fill(upper, Double.NEGATIVE_INFINITY);
        }
        for (double[] f : faces == null ? new double[0][] : faces) {
            double[] c = wavelet.forward(f);
            for (int k = 0; k < d; k++) {
                lower[k] = Math.min(lower[k], c[k]);
                upper[k] = Math.max(upper[k], c[k]);
            }
        }
        for (int k = 0; k < d; k++) {
            // A coefficient constant over the fitting faces still needs a positive range to noise.
            if (upper[k] - lower[k] < 1e-6) {
                upper[k] = lower[k] + 1e-6;
            }
        }
        meanCoefficients = wavelet.forward(eigen.mean());
        featureRange = new double[nc];
        featureBound = new double[nc];
        double[] lo = new double[nc];
        double[] hi = new double[nc];
        Arrays.fill(lo, Double.POSITIVE_INFINITY);
        Arrays.fill(hi, Double.NEGATIVE_INFINITY);
        for (double[] f : faces == null ? new double[0][] : faces) {
            double[] x = eigen.project(f);
            for (int i = 0; i < nc; i++) {
                lo[i] = Math.min(lo[i], x[i]);
                hi[i] = Math.max(hi[i], x[i]);
            }
        }
        for (int i = 0; i < nc; i++) {
            featureBound[i] = Arrays.stream(eigen.component(i)).map(Math::abs).sum();
            // Without fitting faces (withFullRanges) no face may shape Δ_i: the worst case over all images stands in.
            featureRange[i] = faces == null ? featureBound[i] : hi[i] - lo[i];
        }
        byInfluence = java.util.stream.IntStream.range(0, d).boxed()
                .sorted((a, b) -> Double.compare(omega[b], omega[a])).mapToInt(Integer::intValue).toArray();
    }

    /**
     * Fits nc eigenfaces and the clamp ranges to faces of width × height pixels in [0, 1].
     *
     * @param levels Haar levels; both sides must be divisible by 2^levels
     */
    public static RdpBasis fit(double[][] faces, int nc, int width, int height, int levels) {
        HaarWavelet w = new HaarWavelet(width, height, levels);
        return new RdpBasis(w, EigenBasis.fit(faces, nc, width, height), faces);
    }

    /**
     * A basis whose ranking comes from a given eigenbasis (fitted on a public set, or privately)
     * and whose clamp ranges are every coefficient's full range over all images with pixels in
     * [0, 1]: no face shapes them. Wider ranges than a fit's, so more noise per coefficient.
     *
     * @param levels Haar levels; both sides of the eigenbasis must be divisible by 2^levels
     */
    public static RdpBasis withFullRanges(EigenBasis eigen, int levels) {
        return new RdpBasis(new HaarWavelet(eigen.width(), eigen.height(), levels), eigen, null);
    }

    public HaarWavelet wavelet() { return wavelet; }
    public EigenBasis eigen() { return eigen; }
    public int size() { return influence.length; }
    public double influence(int k) { return influence[k]; }
    public double omega(int k) { return omega[k]; }
    public double sensitivity(int k) { return sensitivity[k]; }
    public double lower(int k) { return lower[k]; }
    public double upper(int k) { return upper[k]; }
    public double meanCoefficient(int k) { return meanCoefficients[k]; }
    /** The paper modes' Δ_i (never stated in the paper): feature ranges over the fitting faces. */
    public double[] featureRanges() { return featureRange.clone(); }
    /** Δ_i as the worst case over every image in [0, 1]: the L1 norm of eigenface i. */
    public double[] featureBounds() { return featureBound.clone(); }
    /** The k-th most influential coefficient's index. */
    public int rankedByInfluence(int r) { return byInfluence[r]; }

    /** All weights, W[i][k]; the caller must not modify the array. */
    double[][] weightRows() { return weights; }
    /** All coefficient ranges Δ_k; the caller must not modify the array. */
    double[] sensitivities() { return sensitivity; }

    /** w_ik for feature i and coefficient k. */
    public double weight(int i, int k) {
        return weights[i][k];
    }

    public String id() {
        return "rdp-" + wavelet.levels() + "-" + eigen.id();
    }
}
