package org.privface.agent.privacy.rdp;

import java.util.Arrays;

import org.privface.agent.privacy.Privacy;
import org.privface.agent.privacy.SecureLaplace;

/**
 * Ranked differential privacy (Ou, Liao et al., "RDP: Ranked Differential Privacy for Facial
 * Feature Protection in Multiscale Sparsified Subspace"), Algorithm 1 as this project reads it:
 * Haar-transform the 64×64 face, rank its coefficients, keep the top M_P (the sparsified
 * subspace, the rest set to zero), draw K ~ Geometric(p) truncated to [1, M_P], add Laplace
 * noise with scales b_r to the top K ranks, and inverse-transform to the sanitized image P′,
 * whose eigenface features are F′.
 *
 * <p>In NA, LMGD and UNIFORM the ranks K+1..M_P are released without noise and the ranking
 * follows the face's own magnitudes, so their per-face ε is unbounded; {@link RdpRelease}
 * reports that as infinity and also the ε the noised coefficients alone would spend. STRICT is
 * pure ε-LDP (see {@link RdpMode#STRICT} and docs/privacy-rdp.md).
 */
public final class RdpMechanism {
    /** Default geometric parameter: the p = 0.02, so E[K] ≈ 50 noised ranks. */
    public static final double DEFAULT_P = 0.02;
    /** Default M_P: a quarter of a 64×64 face's coefficients keeps SSIM of the sparsified face near 0.9. */
    public static final int DEFAULT_KEEP = 1024;
    /** Default number of coefficients STRICT releases, chosen on lfw5 (docs/privacy-rdp.md). */
    public static final int DEFAULT_STRICT_KEEP = 64;

    /** LMGD settings: the paper's step range, and a tolerance on F = F1 + F2. */
    public record LmgdSettings(double eta, double tolerance, int maxIterations) {
        public static final LmgdSettings DEFAULT = new LmgdSettings(0.05, 1e-10, 20_000);
    }

    private final RdpBasis basis;
    private final RdpMode mode;
    private final double epsilon;
    private final double p;
    private final int keep;
    private final SecureLaplace laplace;
    private final LmgdSettings lmgd;
    private final double[] q;
    /** STRICT's released coefficients, their sensitivities and scales: fixed per basis and ε. */
    private final int[] strictSet;
    private final double[] strictDelta;
    private final double[] strictScales;

    /**
     * @param epsilon ε0 in the paper modes; ε per face in STRICT
     * @param keep    M_P in the paper modes; the number of released coefficients in STRICT
     */
    public RdpMechanism(RdpBasis basis, RdpMode mode, double epsilon, double p, int keep, SecureLaplace laplace,
                        LmgdSettings lmgd) {
        this.basis = basis;
        this.mode = mode;
        this.epsilon = Privacy.checkEpsilon(epsilon);
        if (keep < 1 || keep > basis.size()) {
            throw new IllegalArgumentException("keep must be in [1, " + basis.size() + "], was " + keep);
        }
        this.keep = keep;
        this.p = p;
        this.laplace = laplace;
        this.lmgd = lmgd;
        this.q = mode == RdpMode.STRICT ? null : RdpScales.inclusion(p, keep);
        if (mode == RdpMode.STRICT) {
            strictSet = new int[keep];
            strictDelta = new double[keep];
            double[] omega = new double[keep];
            for (int r = 0; r < keep; r++) {
                int k = basis.rankedByInfluence(r);
                strictSet[r] = k;
                strictDelta[r] = basis.upper(k) - basis.lower(k);
                omega[r] = basis.omega(k);
            }
            strictScales = RdpScales.strict(strictDelta, omega, epsilon);
        } else {
            strictSet = null;
            strictDelta = null;
            strictScales = null;
        }
    }

    public RdpMechanism(RdpBasis basis, RdpMode mode, double epsilon, SecureLaplace laplace) {
        this(basis, mode, epsilon, DEFAULT_P, mode == RdpMode.STRICT ? DEFAULT_STRICT_KEEP : DEFAULT_KEEP, laplace,
                LmgdSettings.DEFAULT);
    }

    /**
     * Sanitizes one face (row-major pixels in [0, 1] at the basis' size).
     *
     * @param withImage also inverse-transform to the sanitized image; STRICT's features do not need it
     */
    public RdpRelease sanitize(double[] face, boolean withImage) {
        return mode == RdpMode.STRICT ? strict(face, withImage) : paper(face);
    }

    private RdpRelease paper(double[] face) {
        int d = basis.size();
        double[] c = basis.wavelet().forward(face);
        int[] rank = rankByMagnitude(c);
        double[] sparse = new double[d];
        double[] a = new double[keep];
        double[] delta = new double[keep];
        double influenceSum = 0;
        for (int r = 0; r < keep; r++) {
            influenceSum += basis.influence(rank[r]);
        }
        for (int r = 0; r < keep; r++) {
            int k = rank[r];
            sparse[k] = c[k];
            delta[r] = basis.sensitivity(k);
            // The ranked coefficients share the budget by influence: weights normalised to sum
            // to 1 over the sparsified subspace. This discount (every weight is below 1) is where
            // ε0 stops being a standard DP bound; see docs/privacy-rdp.md.
            a[r] = basis.influence(k) / influenceSum * delta[r];
        }
        double[] b = new double[keep];
        int iterations = 0;
        switch (mode) {
            // Plain RDP: the same normalised budget, with equal weights 1/M_P instead of ranked ones.
            case UNIFORM -> Arrays.fill(b, RdpScales.uniform(q, delta, epsilon) / keep);
            case NA -> Arrays.fill(b, RdpScales.na(q, a, epsilon));
            case LMGD -> {
                RdpScales.Lmgd r = RdpScales.lmgd(q, a, epsilon, lmgd.eta(), lmgd.tolerance(), lmgd.maxIterations());
                b = r.scales();
                iterations = r.iterations();
            }
            default -> throw new IllegalStateException();
        }
        int kNoised = RdpScales.drawK(p, keep, laplace.uniform());
        double[] values = new double[kNoised];
        double[] sens = new double[kNoised];
        double[] scales = new double[kNoised];
        double spent = 0;
        for (int r = 0; r < kNoised; r++) {
            values[r] = sparse[rank[r]];
            sens[r] = delta[r];
            scales[r] = b[r];
            spent += delta[r] / b[r];
        }
        double[] noisy = laplace.addNoiseScaled(values, sens, scales);
        double[] sanitized = sparse.clone();
        double real = 0;
        for (int r = 0; r < kNoised; r++) {
            sanitized[rank[r]] = noisy[r];
            real += (noisy[r] - values[r]) * (noisy[r] - values[r]);
        }
        double expected = 0;
        for (int r = 0; r < keep; r++) {
            expected += q[r] * 2 * b[r] * b[r];
        }
        double[] image = basis.wavelet().inverse(sanitized);
        double[] features = basis.eigen().project(image);
        return new RdpRelease(clip(image), features, mode, epsilon, Double.POSITIVE_INFINITY, spent, kNoised,
                mean(b), expected, real, iterations);
    }

    private RdpRelease strict(double[] face, boolean withImage) {
        double[] c = basis.wavelet().forward(face);
        double[] clamped = new double[keep];
        for (int r = 0; r < keep; r++) {
            int k = strictSet[r];
            clamped[r] = Math.max(basis.lower(k), Math.min(basis.upper(k), c[k]));
        }
        // Clamping to ranges fixed at fitting time makes Δ_k = upper − lower hold for any two faces.
        double[] noisy = laplace.addNoiseScaled(clamped, strictDelta, strictScales);
        int nc = basis.eigen().dimension();
        double[] features = new double[nc];
        double real = 0;
        for (int r = 0; r < keep; r++) {
            int k = strictSet[r];
            double dev = noisy[r] - basis.meanCoefficient(k);
            for (int i = 0; i < nc; i++) {
                features[i] += basis.weight(i, k) * dev;
            }
            real += (noisy[r] - clamped[r]) * (noisy[r] - clamped[r]);
        }
        double expected = 0;
        for (double b : strictScales) {
            expected += 2 * b * b;
        }
        double[] image = null;
        if (withImage) {
            double[] all = new double[basis.size()];
            for (int k = 0; k < all.length; k++) {
                all[k] = basis.meanCoefficient(k);
            }
            for (int r = 0; r < keep; r++) {
                all[strictSet[r]] = noisy[r];
            }
            image = clip(basis.wavelet().inverse(all));
        }
        return new RdpRelease(image, features, mode, epsilon, epsilon, epsilon, keep, mean(strictScales), expected, real, 0);
    }

    /** Indices by descending |c|, ties by index; one primitive sort of packed keys, no boxing. */
    public static int[] rankByMagnitude(double[] c) {
        long[] keys = new long[c.length];
        for (int k = 0; k < c.length; k++) {
            // |c| as float bits is order-preserving for non-negative floats; invert for descending.
            long mag = Float.floatToIntBits((float) Math.abs(c[k]));
            keys[k] = ((0x7fffffffL - mag) << 20) | k;
        }
        Arrays.sort(keys);
        int[] rank = new int[c.length];
        for (int r = 0; r < rank.length; r++) {
            rank[r] = (int) (keys[r] & 0xfffff);
        }
        return rank;
    }

    private static double[] clip(double[] x) {
        for (int j = 0; j < x.length; j++) {
            x[j] = Math.max(0, Math.min(1, x[j]));
        }
        return x;
    }

    private static double mean(double[] b) {
        double s = 0;
        for (double v : b) {
            s += v;
        }
        return s / b.length;
    }

    public RdpMode mode() { return mode; }
    public RdpBasis basis() { return basis; }
    public double epsilon() { return epsilon; }
    public int keep() { return keep; }

    /** ε a release spends on the whole face: ε in STRICT, unbounded in the paper modes. */
    public double epsilonPerFace() {
        return mode == RdpMode.STRICT ? epsilon : Double.POSITIVE_INFINITY;
    }
}
