package org.privface.privacy.embedding;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;

import org.privface.privacy.Drbg;
import org.privface.privacy.FaceMechanism;
import org.privface.privacy.L1Ball;
import org.privface.privacy.Privacy;
import org.privface.privacy.Release;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.gdp.MuGdp;
import org.privface.privacy.gdp.SecureGaussian;

/**
 * Local DP on a deep face embedding (issue 16): the embedding is projected on k directions of an
 * {@link EmbeddingBasis}, normalised to a unit vector u (the embedding's direction is what
 * identifies; its length does not), and released by one of three mechanisms, each ε-LDP (the
 * Gaussian: (ε, δ)) for every face whatever its embedding:
 * <ul>
 *   <li>{@code sign-cap}: the k signs of u, released through {@link HammingCap} (PrivUnit's cap on
 *       the Hamming cube, exact sampler, exact ε). The recognizer gets ±1/√k per coordinate, a unit
 *       vector. The winner of the frontier (docs/frontier.md).</li>
 *   <li>{@code lap-l1}: u clipped to the public L1 radius R ({@link EmbeddingBasis#l1Radius}), plus
 *       Laplace(2R/ε) per coordinate from {@link SecureLaplace} (any two clipped vectors differ by
 *       at most 2R in L1). Baseline.</li>
 *   <li>{@code gauss-l2}: u itself (‖u‖₂ = 1 by construction, so two faces differ by at most 2 in
 *       L2) plus N(0, σ²) per coordinate from {@link SecureGaussian}, σ = 2/(μ − √k·2^-19), μ from
 *       {@link MuGdp#muFor}(ε, δ = 1e-5). Baseline.</li>
 * </ul>
 *
 * <p>Who the guarantee covers depends on the basis, and the record says which in its mode: with a
 * public basis (the bundled {@code lfw-public} file) no face shapes its own mechanism, so every
 * face, enrolled or queried, gets the stated ε. With a basis fitted on the gateway's enrollment
 * ({@code -enrollment} suffix) the enrolled faces shaped the projection that releases them: the
 * stated ε then holds for query faces only, and nothing is promised for the enrolled ones.
 *
 * <p>{@link #width()} is the embedding's dimension and {@link #height()} is 1: this mechanism takes
 * an embedding vector, not pixels.
 */
public final class EmbeddingMechanism implements FaceMechanism {
    public static final String MECHANISM = "EMBEDDING";
    /** δ of the Gaussian baseline. */
    public static final double GAUSSIAN_DELTA = MuGdp.DEFAULT_DELTA;
    /** Mode suffix when the basis was fitted on the gateway's enrollment. */
    public static final String ENROLLMENT_SUFFIX = "-enrollment";

    public enum Noise {
        SIGN_CAP("sign-cap"), LAPLACE("lap-l1"), GAUSSIAN("gauss-l2");

        public final String wireName;

        Noise(String wireName) {
            this.wireName = wireName;
        }

        /** A policy mode: a noise name, optionally with the enrollment suffix. */
        public static Noise parse(String mode) {
            String m = Objects.requireNonNull(mode, "mode").trim().toLowerCase(Locale.ROOT);
            if (m.endsWith(ENROLLMENT_SUFFIX)) {
                m = m.substring(0, m.length() - ENROLLMENT_SUFFIX.length());
            }
            for (Noise n : values()) {
                if (n.wireName.equals(m)) {
                    return n;
                }
            }
            throw new IllegalArgumentException("unknown EMBEDDING mode '" + mode + "'; known: "
                    + Arrays.stream(values()).map(n -> n.wireName).toList() + " (each optionally with '"
                    + ENROLLMENT_SUFFIX + "')");
        }
    }

    /**
     * Release shape per ε: k coordinates and, for the cap, the ball radius r. Chosen on
     * {@code lfw-public} people held out of the basis fit (DeepFrontierEvaluation's selection, see
     * docs/frontier.md), never on the data sets the frontier reports.
     */
    public record Preset(int k, int radius) {
        public static Preset forEpsilon(Noise noise, double epsilon) {
            Privacy.checkEpsilon(epsilon);
            // Read off docs/results/deep-selection.csv (the best validation F1 at ε 5, 10, 20, 50, 100).
            return switch (noise) {
                case SIGN_CAP -> epsilon < 7.5 ? new Preset(8, 1) : epsilon < 15 ? new Preset(16, 1)
                        : epsilon < 35 ? new Preset(24, 0) : new Preset(64, 1);
                case LAPLACE -> epsilon < 35 ? new Preset(8, 0) : epsilon < 75 ? new Preset(16, 0) : new Preset(24, 0);
                case GAUSSIAN -> epsilon < 35 ? new Preset(16, 0) : epsilon < 75 ? new Preset(32, 0) : new Preset(48, 0);
            };
        }
    }

    private final EmbeddingBasis basis;
    private final boolean publicBasis;
    private final Noise noise;
    private final int k;
    private final double epsilon;
    private final HammingCap cap;
    private final SecureLaplace laplace;
    private final SecureGaussian gaussian;
    private final double sigma;
    private final double mu;

    /**
     * @param publicBasis true when no enrolled face took part in fitting the basis (the bundled
     *                    public file); false for an enrollment-fitted one (query faces only)
     * @param radius      the cap's Hamming radius (sign-cap only)
     */
    public EmbeddingMechanism(EmbeddingBasis basis, boolean publicBasis, Noise noise, int k, int radius,
                              double epsilon, SecureRandom random) {
        this.basis = Objects.requireNonNull(basis, "basis");
        this.publicBasis = publicBasis;
        this.noise = Objects.requireNonNull(noise, "noise");
        if (k < 1 || k > basis.maxDirections()) {
            throw new IllegalArgumentException("k must be in [1, " + basis.maxDirections() + "], was " + k);
        }
        this.k = k;
        Privacy.checkEpsilon(epsilon);
        switch (noise) {
            case SIGN_CAP -> {
                this.cap = HammingCap.forEpsilon(k, radius, epsilon, random);
                this.epsilon = cap.epsilon();
                this.laplace = null;
                this.gaussian = null;
                this.sigma = Double.NaN;
                this.mu = Double.NaN;
            }
            case LAPLACE -> {
                this.cap = null;
                this.epsilon = epsilon;
                this.laplace = new SecureLaplace(random);
                this.gaussian = null;
                this.sigma = 2 * basis.l1Radius(k) / epsilon;
                this.mu = Double.NaN;
            }
            case GAUSSIAN -> {
                this.cap = null;
                this.epsilon = epsilon;
                this.laplace = null;
                this.gaussian = new SecureGaussian(random);
                this.mu = MuGdp.muFor(epsilon, GAUSSIAN_DELTA);
                double usable = mu - SecureGaussian.roundingMu(k);
                if (!(usable > 0)) {
                    throw new IllegalArgumentException("ε " + epsilon + " is too small for a Gaussian release");
                }
                this.sigma = 2 / usable;
            }
            default -> throw new IllegalStateException(noise.toString());
        }
    }

    /** The bundled public basis, the preset's shape, a DRBG: what the agent runs. */
    public static EmbeddingMechanism publicPreset(String modelId, Noise noise, double epsilon) {
        return publicPreset(modelId, noise, epsilon, epsilon);
    }

    /**
     * As above, with the shape taken from the policy's nominal ε: enrollment and queries of one
     * policy must land in one release space even when a release spends less than the nominal ε.
     */
    public static EmbeddingMechanism publicPreset(String modelId, Noise noise, double epsilon, double presetEpsilon) {
        Preset preset = Preset.forEpsilon(noise, presetEpsilon);
        return new EmbeddingMechanism(EmbeddingBasis.bundled(modelId), true, noise, preset.k(), preset.radius(),
                epsilon, Drbg.create());
    }

    /**
     * The ε a {@link #publicPreset} at this noise, shape and ε would state, without building it:
     * the sign-cap's exact bound (at most ε), the whole ε for Laplace and Gaussian noise.
     */
    public static double statedEpsilon(Noise noise, Preset preset, double epsilon) {
        Privacy.checkEpsilon(epsilon);
        return noise == Noise.SIGN_CAP ? HammingCap.statedEpsilon(preset.k(), preset.radius(), epsilon) : epsilon;
    }

    /**
     * The sign-cap a gallery's templates are released at, for {@code people} enrolled people at ε
     * per enrolled image ({@link TemplatePresets}): another shape than the query vector's preset.
     */
    public static EmbeddingMechanism templatePreset(String modelId, double epsilon, int people) {
        Preset preset = TemplatePresets.forGallery(modelId, epsilon, people).preset();
        return new EmbeddingMechanism(EmbeddingBasis.bundled(modelId), true, Noise.SIGN_CAP, preset.k(), preset.radius(),
                epsilon, Drbg.create());
    }

    /**
     * The unit direction of the embedding's first k public coordinates. The embedding is scaled to
     * unit length first (embedders emit unit vectors; this only keeps a hostile input from
     * overflowing), and the zero vector maps to e₁.
     */
    public double[] direction(double[] embedding) {
        for (double v : embedding) {
            if (!Double.isFinite(v)) {
                throw new IllegalArgumentException("embedding holds a non-finite value");
            }
        }
        return unit(basis.project(unit(embedding.clone()), k));
    }

    /** z scaled to unit L2 length, in place (by its largest entry first, so no square overflows); the zero vector becomes e₁. */
    public static double[] unit(double[] z) {
        double max = 0;
        for (double v : z) {
            max = Math.max(max, Math.abs(v));
        }
        if (max == 0) {
            z[0] = 1; // a fixed public point: still one of the inputs the guarantee covers
            return z;
        }
        double n = 0;
        for (int i = 0; i < z.length; i++) {
            z[i] /= max;
            n += z[i] * z[i];
        }
        n = Math.sqrt(n);
        for (int i = 0; i < z.length; i++) {
            z[i] /= n;
        }
        return z;
    }

    /** Releases one embedding (its length must be the basis's input dimension). */
    @Override
    public Release perturb(double[] embedding) {
        double[] u = direction(embedding);
        return switch (noise) {
            case SIGN_CAP -> {
                boolean[] code = new boolean[k];
                for (int i = 0; i < k; i++) {
                    code[i] = u[i] >= 0;
                }
                boolean[] out = cap.release(code);
                double[] v = new double[k];
                double s = 1 / Math.sqrt(k);
                for (int i = 0; i < k; i++) {
                    v[i] = out[i] ? s : -s;
                }
                yield new Release(v, MECHANISM, mode(), epsilon, epsilon, 1 - cap.p(), releaseSpace(), null);
            }
            case LAPLACE -> {
                double r = basis.l1Radius(k);
                double[] c = clipL1(u, r);
                yield new Release(laplace.addNoise(c, 2 * r, epsilon), MECHANISM, mode(), epsilon, epsilon, sigma,
                        releaseSpace(), null);
            }
            case GAUSSIAN -> {
                double[] s = new double[k];
                Arrays.fill(s, sigma);
                yield new Release(gaussian.addNoise(u, s), MECHANISM, mode(), epsilon, epsilon, sigma, releaseSpace(),
                        null, GAUSSIAN_DELTA, mu);
            }
        };
    }

    /**
     * The record's basisId: the basis file's id and k, e.g. {@code fr_feature-e03564a54e1fc106/k24}.
     * The recognizer keeps one model per basisId, and releases with different k are not comparable.
     */
    public String releaseSpace() {
        return basis.id() + ".k" + k;
    }

    /** x scaled into the L1 ball of radius r (unchanged when inside). */
    public static double[] clipL1(double[] x, double r) {
        Privacy.checkRadius(r);
        return L1Ball.clipInPlace(x.clone(), r);
    }

    /**
     * What the record's mode says: noise, k, the cap's radius and p, and whose faces the ε covers,
     * e.g. {@code sign-cap-k32-r2-p0.98.every-face} or {@code …-enrollment.query-faces-only}; the wire allows only [A-Za-z0-9._-] in a mode.
     */
    public String mode() {
        String shape = noise == Noise.SIGN_CAP
                ? String.format(Locale.ROOT, "%s-k%d-r%d-p%.6g", noise.wireName, k, cap.radius(), cap.p())
                : noise.wireName + "-k" + k;
        return publicBasis ? shape + ".every-face" : shape + ENROLLMENT_SUFFIX + ".query-faces-only";
    }

    public Noise noise() {
        return noise;
    }

    public int k() {
        return k;
    }

    public boolean publicBasis() {
        return publicBasis;
    }

    public EmbeddingBasis basis() {
        return basis;
    }

    /** Laplace scale or Gaussian σ of the baselines; NaN for the cap. */
    public double sigma() {
        return sigma;
    }

    @Override
    public int width() {
        return basis.inputDimension();
    }

    @Override
    public int height() {
        return 1;
    }

    @Override
    public double epsilonPerFace() {
        return epsilon;
    }
}
