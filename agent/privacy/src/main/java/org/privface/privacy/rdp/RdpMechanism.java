package org.privface.privacy.rdp;

import java.util.Arrays;

import org.privface.privacy.Privacy;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.SpentEpsilon;

/**
 * Ranked differential privacy (Ou, Liao et al., "RDP: Ranked Differential Privacy for Facial
 * Feature Protection in Multiscale Sparsified Subspace"), Algorithm 1: Haar-transform the face,
 * rank every coefficient by amplitude, draw K ~ Geometric(p) truncated to [1, M_P], add Laplace
 * noise with scales b_k (chosen by the mode from Eq. 3) to the top K ranks, copy every other
 * coefficient unchanged, and inverse-transform to the sanitized image P′, whose eigenface
 * features are F′.
 *
 * <p>In the paper modes the ranks below K are released exact and the ranking follows the face's
 * own amplitudes, so their per-face ε is unbounded; {@link RdpRelease} reports that as infinity
 * next to Eq. 3's ε0. STRICT is pure ε-LDP (see {@link RdpMode#STRICT} and docs/privacy-rdp.md).
 */
public final class RdpMechanism {
    /** Default geometric parameter: the p = 0.02, so E[K] ≈ 50 noised ranks. */
    public static final double DEFAULT_P = 0.02;
    /** Default number of coefficients STRICT releases, chosen on lfw5 (docs/privacy-rdp.md). */
    public static final int DEFAULT_STRICT_KEEP = 64;

    /** LMGD settings: the paper's step range, and a tolerance on F = F1 + F2. */
    public record LmgdSettings(double eta, double tolerance, int maxIterations) {
        public static final LmgdSettings DEFAULT = new LmgdSettings(0.05, 1e-12, 400);
    }

    private final RdpBasis basis;
    private final RdpMode mode;
    private final double epsilon;
    private final double p;
    private final int keep;
    private final SecureLaplace laplace;
    private final LmgdSettings lmgd;
    /** The paper modes' Δ_i per feature (the paper never gives a value; see RdpBasis). */
    private final double[] featureDelta;
    /** STRICT's released coefficients, their sensitivities and scales: fixed per basis and ε. */
    private final int[] strictSet;
    private final double[] strictDelta;
    private final double[] strictScales;
    /** STRICT's stated ε: Σ Δ_k/b_k rounded up, at most ε ({@link SpentEpsilon}); NaN in the paper modes. */
    private final double strictSpent;

    /**
     * @param epsilon ε0 in the paper modes; ε per face in STRICT
     * @param keep    M_P in the paper modes (K is truncated to [1, M_P]; nothing is dropped); the
     *                number of released coefficients in STRICT
     */
    public RdpMechanism(RdpBasis basis, RdpMode mode, double epsilon, double p, int keep, SecureLaplace laplace,
                        LmgdSettings lmgd) {
        this(basis, mode, epsilon, p, keep, laplace, lmgd, basis.featureRanges());
    }

    /** @param featureDelta Δ_i of the paper modes, one per eigenface feature */
    public RdpMechanism(RdpBasis basis, RdpMode mode, double epsilon, double p, int keep, SecureLaplace laplace,
                        LmgdSettings lmgd, double[] featureDelta) {
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
        if (featureDelta.length != basis.eigen().dimension()) {
            throw new IllegalArgumentException("need one feature sensitivity per eigenface, got " + featureDelta.length);
        }
        this.featureDelta = featureDelta.clone();
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
            strictSpent = SpentEpsilon.checkWithin(SpentEpsilon.quotientSumUp(strictDelta, strictScales), epsilon);
        } else {
            strictSpent = Double.NaN;
            strictSet = null;
            strictDelta = null;
            strictScales = null;
        }
    }

    public RdpMechanism(RdpBasis basis, RdpMode mode, double epsilon, SecureLaplace laplace) {
        this(basis, mode, epsilon, DEFAULT_P, mode == RdpMode.STRICT ? DEFAULT_STRICT_KEEP : basis.size(), laplace,
                LmgdSettings.DEFAULT);
    }

    /**
     * The ε per face the mechanism above would state, without building it: STRICT's rounded-up sum
     * over its kept features (at most ε), unbounded for the paper modes.
     */
    public static double statedEpsilon(RdpBasis basis, RdpMode mode, double epsilon) {
        Privacy.checkEpsilon(epsilon);
        if (mode != RdpMode.STRICT) {
            return Double.POSITIVE_INFINITY;
        }
        int keep = DEFAULT_STRICT_KEEP;
        if (keep < 1 || keep > basis.size()) {
            throw new IllegalArgumentException("keep must be in [1, " + basis.size() + "], was " + keep);
        }
        double[] delta = new double[keep];
        double[] omega = new double[keep];
        for (int r = 0; r < keep; r++) {
            int k = basis.rankedByInfluence(r);
            delta[r] = basis.upper(k) - basis.lower(k);
            omega[r] = basis.omega(k);
        }
        return SpentEpsilon.checkWithin(SpentEpsilon.quotientSumUp(delta, RdpScales.strict(delta, omega, epsilon)), epsilon);
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
        double[] c = basis.wavelet().forward(face);
        Ranked r = ranked(c, basis.weightRows(), featureDelta, basis.sensitivities(), mode, epsilon, p, keep, laplace,
                lmgd);
        double[] image = basis.wavelet().inverse(r.coefficients());
        double[] features = basis.eigen().project(image);
        return new RdpRelease(clip(image), features, mode, epsilon, Double.POSITIVE_INFINITY, r.epsilonNoised(),
                r.epsilonEq3(), r.noised(), mean(r.scales()), r.expectedNoiseEnergy(), r.realNoiseEnergy(),
                r.iterations());
    }

    /** Ranks the paper modes optimise: past it c_k &lt; 1e-9 and K reaches it with probability below 1e-9. */
    static int paperRanks(double p, int mP) {
        return Math.max(1, Math.min(mP, (int) Math.ceil(Math.log(1e-9) / Math.log1p(-p))));
    }

    /**
     * One ranked release in an orthonormal domain, shared by the paper modes (Haar) and the
     * evaluation's baselines (DCT, pixels).
     *
     * @param coefficients the released coefficients: the top K ranks noised, all others copied
     * @param scales       b_k by rank for the ranks the scales were optimised over
     * @param epsilonEq3   Eq. 3 for those scales: ε0 for UNIFORM, NA_RESCALED and LMGD
     */
    public record Ranked(double[] coefficients, int noised, double[] scales, double epsilonEq3, double epsilonNoised,
                         double expectedNoiseEnergy, double realNoiseEnergy, int iterations) {
    }

    /**
     * Algorithm 1 on coefficients c with weights W[i][k] = ∂F_i/∂c_k (unranked), feature
     * sensitivities Δ_i and each coefficient's own range (which only sets the sampler's grid).
     */
    public static Ranked ranked(double[] c, double[][] weights, double[] featureDelta, double[] coefficientRange,
                                RdpMode mode, double eps0, double p, int mP, SecureLaplace laplace, LmgdSettings lmgd) {
        int[] rank = rankByMagnitude(c);
        int m = paperRanks(p, mP);
        double[][] w = new double[weights.length][m];
        for (int i = 0; i < w.length; i++) {
            for (int r = 0; r < m; r++) {
                w[i][r] = weights[i][rank[r]];
            }
        }
        double[] cw = RdpScales.paperWeights(p, mP, m);
        double[] b;
        int iterations = 0;
        switch (mode) {
            case UNIFORM -> {
                b = new double[m];
                Arrays.fill(b, RdpScales.plain(w, featureDelta, cw, eps0));
            }
            case NA -> b = RdpScales.naPrinted(w, featureDelta, p, mP, m, eps0);
            case NA_RESCALED -> b = RdpScales.rescaled(w, featureDelta, cw,
                    RdpScales.naPrinted(w, featureDelta, p, mP, m, eps0), eps0);
            case LMGD -> {
                RdpScales.Lmgd r = RdpScales.lmgd(w, featureDelta, cw, eps0, lmgd.eta(), lmgd.tolerance(),
                        lmgd.maxIterations());
                b = r.scales();
                iterations = r.iterations();
            }
            default -> throw new IllegalArgumentException(mode + " is not a ranked paper mode");
        }
        double[] bf = b;
        int k = RdpScales.drawK(p, mP, laplace.uniform());
        // LMGD may set a scale to zero: that rank is released exact, as its cost term asks.
        int[] noisedRanks = java.util.stream.IntStream.range(0, k).filter(r -> bf[Math.min(r, m - 1)] > 0).toArray();
        double[] values = new double[noisedRanks.length];
        double[] sens = new double[noisedRanks.length];
        double[] scales = new double[noisedRanks.length];
        double spent = 0;
        for (int j = 0; j < noisedRanks.length; j++) {
            int r = noisedRanks[j];
            values[j] = c[rank[r]];
            sens[j] = coefficientRange[rank[r]];
            // Ranks past m reuse the last scale; K gets there with probability below 1e-9.
            scales[j] = b[Math.min(r, m - 1)];
            spent += sens[j] / scales[j];
        }
        double[] noisy = laplace.addNoiseScaled(values, sens, scales);
        double[] out = c.clone();
        double real = 0;
        for (int j = 0; j < noisedRanks.length; j++) {
            out[rank[noisedRanks[j]]] = noisy[j];
            real += (noisy[j] - values[j]) * (noisy[j] - values[j]);
        }
        double tail = Math.pow(1 - p, mP);
        double expected = 0;
        for (int r = 0; r < m; r++) {
            double q = (Math.pow(1 - p, r) - tail) / (1 - tail);
            expected += q * 2 * b[r] * b[r];
        }
        return new Ranked(out, noisedRanks.length, b, RdpScales.epsilon(w, featureDelta, cw, b), spent, expected, real,
                iterations);
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
        return new RdpRelease(image, features, mode, epsilon, strictSpent, strictSpent, strictSpent, keep, mean(strictScales), expected,
                real, 0);
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

    /** ε a release spends on the whole face: Σ Δ_k/b_k rounded up (≤ ε) in STRICT, unbounded in the paper modes. */
    public double epsilonPerFace() {
        return mode == RdpMode.STRICT ? strictSpent : Double.POSITIVE_INFINITY;
    }
}
