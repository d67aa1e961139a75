package org.privface.privacy.aggregate;

import java.security.SecureRandom;
import java.util.Locale;

import org.privface.privacy.Privacy;

/**
 * The K-norm gradient mechanism (KNG; Reimherr and Awan 2019; on manifolds Soto, Bharath, Reimherr
 * and Slavković 2022) for a site's private mean, ε-DP, replace-one neighbours, n public. KNG
 * releases η with density ∝ exp(−‖∇F_D(η)‖/σ), σ = 2Δ/ε, where F_D is the objective the mean
 * minimises and Δ ≥ sup_η ‖∇F_D(η) − ∇F_D'(η)‖ over neighbours D, D'.
 *
 * <p><b>Euclidean</b> (K the L2 ball). F_D(θ) = (1/2n)Σ‖θ − x_i‖², x_i the records clipped to norm
 * τ about a public centre, so ∇F_D(θ) = θ − x̄_D and Δ = sup ‖x̄_D − x̄_D'‖ = 2τ/n. The density
 * ∝ exp(−‖θ − x̄‖/σ) is sampled as radius ~ Gamma(d, σ) (the radial density ∝ r^{d−1}e^{−r/σ}),
 * a sum of d exponentials, times a direction uniform on S^{d−1}, a normalised Gaussian vector.
 * Proof sketch: the ratio of unnormalised densities is ≤ exp(Δ/σ) and, as the normaliser is
 * translation invariant, that is the whole privacy loss: ε/2. KNG's factor 2 (for normalisers that
 * depend on D, as on the sphere) is kept so both releases read the same way; Hardt and Talwar's
 * K-norm mechanism would allow σ = Δ/ε. Floating point: x̄ is rounded to a power-of-two grid
 * g ≈ σ·2^-20 (Δ grows by √d·g to cover it) and the noise is rounded to whole grid steps, which are
 * data-independent integers; the output is exactly (round(x̄/g) + k)·g.
 *
 * <p>What the sampler guarantees. Each exponential is h·(G + V) with G an exact geometric and no
 * tail cut ({@link SecureDraws}, h = 2^-32): with V continuous its density is within e^{±h} of
 * Exp(1)'s, so the radius's is within e^{±dh} of Gamma(d)'s and the noise density within e^{±dh}
 * of the target; the privacy loss is then at most ε/2 + 2dh, which the unused half of ε covers
 * ({@link #release} refuses ε &lt; 4dh). Not exact: V and the direction come from 53-bit uniforms
 * and double-precision Box–Muller. Their distance from the continuous laws (δ_fp in total
 * variation) is not bounded here, so strictly the release is (ε, (1 + e^ε)·δ_fp)-DP. The old
 * radius, −ln U by inversion, cut each exponential's tail at 36.7 with holes beyond about 23,
 * the defect of the old Laplace sampler.
 *
 * <p><b>Unit sphere</b> S^{d−1} for L2-normalised features, the Fréchet mean. Records are clipped
 * to the geodesic ball B_r(c) about a public centre c, r &lt; π/4; F_D(η) = (1/2n)Σρ(η, x_i)²,
 * ∇F_D(η) = −(1/n)Σ log_η(x_i), and the support of η is B_r(c), where Soto et al. bound
 * ‖∇F_D(η) − ∇F_D'(η)‖ ≤ 2r(2 − h(2r, κ))/n with h(D, κ) = D√κ·cot(D√κ), κ = 1 here.
 * Proof sketch: f_D(η)/f_D'(η) ≤ exp(Δ/σ)·Z_D'/Z_D ≤ exp(Δ/σ)·exp(Δ/σ) = exp(ε) on a common
 * support. It is sampled by Metropolis–Hastings, so the sample is <b>approximate</b>; see
 * {@link #approximation()}.
 *
 * <p>The accept step is exact. Each state's energy E = ‖∇F(η)‖/σ is put on the dyadic grid
 * L = ⌊E·2^32⌋/2^32 ∈ (E − 2^-32, E], and a proposal is accepted with probability
 * min(1, exp(−(L′ − L))) by exact coins ({@link org.privface.privacy.ExactCoins#bernoulliExp}), so
 * the chain's stationary law is exactly ∝ exp(−L(η)) on B_r(c): no double exp, no 53-bit uniform.
 * The grid moves the density ratio by less than e^{2^-32} and the normalisers' ratio by as much, so
 * the target's loss is at most 2Δ/σ + 2^-31; σ = 2Δ/(ε − 2^-31) charges it ({@link #sphereScale}).
 * (The energies themselves are double-precision evaluations of ‖∇F‖: their rounding is not bounded
 * here.)
 */
public final class KNormGradient {
    /** Steps per burn-in stage and the minimum length of the final stage, in units of (m + 1). */
    static final int STAGE_STEPS_PER_DIM = 20;
    static final int FINAL_STEPS_PER_DIM = 200;
    static final int MIN_FINAL_STEPS = 2000;
    /** Roberts, Gelman and Gilks' optimal random-walk scaling 2.38/√m. */
    static final double RWM_SCALE = 2.38;
    /** The accept step compares energies on a grid of 2^-32 (class comment). */
    static final int ENERGY_BITS = 32;
    static final long ENERGY_STEPS = 1L << ENERGY_BITS;
    /** What the energy grid can add to ε: one step in the density ratio and one in the normalisers' ratio. */
    static final double ENERGY_GRID_COST = 0x1.0p-31;

    private final SecureDraws random;

    public KNormGradient() {
        this(org.privface.privacy.Drbg.create());
    }

    /** For statistical tests that need a reproducible stream; production uses the default. */
    public KNormGradient(SecureRandom random) {
        this.random = new SecureDraws(random);
    }

    // ---------------------------------------------------------------- Euclidean

    /** Δ for the clipped mean: sup_θ ‖∇F_D(θ) − ∇F_D'(θ)‖ = ‖x̄_D − x̄_D'‖ ≤ 2τ/n. */
    public static double meanSensitivity(int n, double tau) {
        return PrivateMean.sensitivity(n, tau);
    }

    /** KNG scale σ = 2Δ/ε. */
    public static double scale(double l2Sensitivity, double epsilon) {
        return 2 * Privacy.checkSensitivity(l2Sensitivity) / Privacy.checkEpsilon(epsilon);
    }

    /** The mean of the records clipped to radius τ about the centre, released ε-DP (in fact ε/2, see above). */
    public double[] releaseMean(double[][] data, double[] centre, double tau, double epsilon) {
        double[][] x = PrivateMean.clipAll(data, centre, tau);
        int d = centre.length;
        double[] m = new double[d];
        for (double[] xi : x) {
            for (int j = 0; j < d; j++) {
                m[j] += xi[j] / x.length;
            }
        }
        double[] noisy = release(m, meanSensitivity(x.length, tau), epsilon);
        for (int j = 0; j < d; j++) {
            noisy[j] += centre[j];
        }
        return noisy;
    }

    /**
     * KNG for a statistic whose gradient sensitivity is Δ (for a mean: the mean's L2 sensitivity):
     * the value plus noise of density ∝ exp(−‖z‖/σ), on a power-of-two grid.
     *
     * @return a new array, every entry a multiple of the grid
     */
    public double[] release(double[] value, double l2Sensitivity, double epsilon) {
        int d = value.length;
        if (d < 1) {
            throw new IllegalArgumentException("need at least one coordinate");
        }
        double g = SecureDraws.granularity(scale(l2Sensitivity, epsilon));
        double sigma = scale(l2Sensitivity + Math.sqrt(d) * g, epsilon);
        if (4 * d * SecureDraws.EXPONENTIAL_GRID > epsilon) {
            throw new IllegalArgumentException("epsilon " + epsilon + " is below what the radius grid costs for d = " + d);
        }
        double[] z = noise(d, sigma);
        double[] out = new double[d];
        for (int j = 0; j < d; j++) {
            out[j] = (SecureDraws.onGrid(value[j], g, j) + Math.round(z[j] / g)) * g;
        }
        return out;
    }

    /** The σ {@link #release} uses for d coordinates: 2(Δ + √d·g)/ε. */
    public static double actualScale(double l2Sensitivity, double epsilon, int d) {
        double g = SecureDraws.granularity(scale(l2Sensitivity, epsilon));
        return scale(l2Sensitivity + Math.sqrt(d) * g, epsilon);
    }

    /** z with density ∝ exp(−‖z‖/σ) on R^d: Gamma(d, σ) radius times a uniform direction. */
    double[] noise(int d, double sigma) {
        double radius = gamma(d, sigma);
        double[] u = direction(d);
        for (int j = 0; j < d; j++) {
            u[j] *= radius;
        }
        return u;
    }

    /** Gamma(shape, scale) for integer shape: scale·Σ of shape Exp(1) draws, each without a cut tail (see the class comment). */
    double gamma(int shape, double scale) {
        double s = 0;
        for (int i = 0; i < shape; i++) {
            s += random.exponential();
        }
        return scale * s;
    }

    /** Uniform on S^{d−1}: a normalised standard Gaussian vector (redrawn in the never-seen zero case). */
    double[] direction(int d) {
        while (true) {
            double[] u = new double[d];
            for (int j = 0; j < d; j++) {
                u[j] = random.normal();
            }
            double n = Sphere.norm(u);
            if (n > 0 && Double.isFinite(n)) {
                for (int j = 0; j < d; j++) {
                    u[j] /= n;
                }
                return u;
            }
        }
    }

    // ---------------------------------------------------------------- Sphere

    /**
     * Soto et al.'s curvature term h(D, κ) = D√κ·cot(D√κ) for a ball of diameter D on a space of
     * constant curvature κ &gt; 0 (h → 1 as D → 0, the flat limit). The sensitivities below use
     * D = 2r; h must stay positive, hence r &lt; π/(4√κ).
     */
    public static double curvatureTerm(double diameter, double kappa) {
        if (!(kappa > 0) || !Double.isFinite(kappa)) {
            throw new IllegalArgumentException("only positive curvature is supported, was " + kappa);
        }
        double a = diameter * Math.sqrt(kappa);
        if (!(a > 0) || !(a < Math.PI / 2)) {
            throw new IllegalArgumentException("need 0 < D√κ < π/2, was " + a);
        }
        return a / Math.tan(a);
    }

    private static double checkBallRadius(double r) {
        if (!(r > 0) || !(r < Math.PI / 4)) {
            throw new IllegalArgumentException("ball radius must be in (0, π/4), was " + r);
        }
        return r;
    }

    /** KNG sensitivity of the Fréchet mean's gradient on S^{d−1}: Δ = 2r(2 − h(2r, 1))/n. */
    public static double sphereSensitivity(int n, double r) {
        checkN(n);
        checkBallRadius(r);
        return 2 * r * (2 - curvatureTerm(2 * r, 1)) / n;
    }

    /**
     * Sensitivity of the Fréchet mean itself in geodesic distance, for the Riemannian Laplace
     * mechanism (Reimherr, Bharath and Soto 2021): Δ = 2r(2 − h(2r, 1))/(n·h(2r, 1)), the gradient
     * bound divided by the strong convexity h of F on the ball. For comparison; not sampled here.
     */
    public static double riemannianLaplaceSensitivity(int n, double r) {
        return sphereSensitivity(n, r) / curvatureTerm(2 * checkBallRadius(r), 1);
    }

    private static void checkN(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("need at least one record, was " + n);
        }
    }

    /** Public chain settings: they depend on d, r and σ only, never on the data. */
    public record Settings(int burnInStages, int stageSteps, int finalSteps, double startStep, double finalStep) {
        public int totalSteps() {
            return burnInStages * stageSteps + finalSteps;
        }
    }

    /**
     * The chain for dimension d (m = d − 1 on the sphere), ball radius r and scale σ. The target's
     * per-coordinate spread is w = min(σ√(m+1), r/√(m+2)) (near the mode ‖∇F‖ is about the distance
     * to it, so η − η̂ is K-norm-like with E‖·‖² = m(m+1)σ²; at most the ball's); the final step is
     * 2.38·w/√m. Burn-in starts at the ball's scale 2.38·r/√(m(m+2)) and halves the step each stage
     * down to the final one, so a chain started at c reaches a narrow mode in few steps.
     */
    public static Settings settings(int d, double r, double sigma) {
        if (d < 2) {
            throw new IllegalArgumentException("the sphere needs d ≥ 2, was " + d);
        }
        int m = d - 1;
        double ball = r / Math.sqrt(m + 2.0);
        double w = Math.min(sigma * Math.sqrt(m + 1.0), ball);
        double start = RWM_SCALE * ball / Math.sqrt(m);
        double fin = RWM_SCALE * w / Math.sqrt(m);
        int stages = (int) Math.ceil(Math.log(start / fin) / Math.log(2) - 1e-9);
        stages = Math.max(0, Math.min(stages, 60));
        return new Settings(stages, STAGE_STEPS_PER_DIM * (m + 1), Math.max(MIN_FINAL_STEPS, FINAL_STEPS_PER_DIM * (m + 1)), start, fin);
    }

    /** What the sphere release approximates, and what that costs the guarantee. */
    public String approximation() {
        return "Metropolis-Hastings random walk on S^{d-1}, m = d-1, targeting the KNG density "
                + "exp(-||grad F(eta)||/sigma), sigma = 2*Delta/(epsilon - 2^-31), restricted to B_r(c); energies on a 2^-32 grid, "
                + "accepted by exact coins. Proposal exp_eta(s*xi), "
                + "xi standard Gaussian in T_eta (symmetric: its density depends on geodesic distance only); "
                + "proposals outside B_r(c) are rejected. Started at the public centre c. Burn-in: K stages of "
                + STAGE_STEPS_PER_DIM + "(m+1) steps, the step halving each stage from 2.38 r/sqrt(m(m+2)) down to "
                + "s = 2.38 min(sigma sqrt(m+1), r/sqrt(m+2))/sqrt(m), K = ceil(log2 of their ratio); then max("
                + MIN_FINAL_STEPS + ", " + FINAL_STEPS_PER_DIM + "(m+1)) steps at s; the final state is released. "
                + "Approximate: every stage leaves the target invariant, but after finitely many steps the law of the "
                + "output is only close to it, at a total-variation distance delta_MH that is not bounded here. The "
                + "release is therefore (epsilon, (1+e^epsilon)*delta_MH)-DP, not pure epsilon-DP.";
    }

    /**
     * The Fréchet mean of the records (normalised, then clipped to B_r(c)) released by KNG with
     * the approximate MH sampler of {@link #approximation()}. Costs O(totalSteps·n·d).
     */
    public double[] releaseSphereMean(double[][] data, double[] centre, double r, double epsilon) {
        return sphereChain(data, centre, r, epsilon).point();
    }

    /** A finished chain; the acceptance count depends on the data and stays inside the package. */
    record Chain(double[] point, int accepted, int steps) {
    }

    Chain sphereChain(double[][] data, double[] centre, double r, double epsilon) {
        checkN(data.length);
        double delta = sphereSensitivity(data.length, r);
        double sigma = sphereScale(delta, epsilon);
        if (2 * r / sigma >= 0x1.0p29) {
            throw new IllegalArgumentException("epsilon " + epsilon + " is too large for the chain's energy grid (2r/sigma >= 2^29)");
        }
        double[] c = Sphere.normalize(centre);
        double[][] x = new double[data.length][];
        for (int i = 0; i < data.length; i++) {
            double n = Sphere.norm(data[i]);
            if (data[i].length != c.length) {
                throw new IllegalArgumentException("record " + i + " has dimension " + data[i].length + ", centre " + c.length);
            }
            // Zero or broken records carry no direction: they count as the centre.
            double[] u = n > 0 && Double.isFinite(n) ? Sphere.normalize(data[i]) : c.clone();
            x[i] = Sphere.clipToBall(c, u, r);
        }
        Settings s = settings(c.length, r, sigma);
        double[] eta = c.clone();
        long energy = energyLevel(gradientNorm(eta, x) / sigma);
        int accepted = 0;
        int steps = 0;
        double[] scratch = new double[c.length];
        for (int stage = 0; stage <= s.burnInStages(); stage++) {
            boolean last = stage == s.burnInStages();
            double step = last ? s.finalStep() : s.startStep() * Math.pow(0.5, stage);
            int count = last ? s.finalSteps() : s.stageSteps();
            for (int t = 0; t < count; t++, steps++) {
                for (int j = 0; j < scratch.length; j++) {
                    scratch[j] = step * random.normal();
                }
                double[] proposal = Sphere.exp(eta, scratch);
                if (Sphere.distance(c, proposal) > r) {
                    continue;
                }
                long e = energyLevel(gradientNorm(proposal, x) / sigma);
                // Accept with probability min(1, exp(−(e − energy)/2^32)), by exact coins.
                if (e <= energy || random.bernoulliExp(e - energy, ENERGY_STEPS)) {
                    eta = proposal;
                    energy = e;
                    accepted++;
                }
            }
        }
        return new Chain(eta, accepted, steps);
    }

    /**
     * The sphere's σ = 2Δ/(ε − 2^-31): the energy grid of the accept step costs at most 2^-31 of ε
     * (class comment), charged here so the release spends at most ε.
     */
    public static double sphereScale(double delta, double epsilon) {
        return scale(delta, Privacy.checkEpsilon(epsilon) - ENERGY_GRID_COST);
    }

    /** ⌊E·2^32⌋: the energy on its dyadic grid, below it by less than one step (E ≥ 0, below 2^30). */
    static long energyLevel(double energy) {
        if (!(energy >= 0) || !(energy < 0x1.0p30)) {
            throw new IllegalStateException("chain energy out of range: " + energy);
        }
        return (long) Math.floor(Math.scalb(energy, ENERGY_BITS));
    }

    /** ‖∇F(η)‖ = ‖(1/n)Σ log_η x_i‖, fused from {@link Sphere#log} to allocate nothing per record. */
    static double gradientNorm(double[] eta, double[][] x) {
        int d = eta.length;
        double[] g = new double[d];
        double[] w = new double[d];
        for (double[] xi : x) {
            double dot = 0;
            double minus = 0;
            double plus = 0;
            for (int j = 0; j < d; j++) {
                double a = eta[j] - xi[j];
                double b = eta[j] + xi[j];
                dot += eta[j] * xi[j];
                minus += a * a;
                plus += b * b;
            }
            double theta = 2 * Math.atan2(Math.sqrt(minus), Math.sqrt(plus));
            double sign = dot >= 0 ? -1 : 1;
            double we = 0;
            for (int j = 0; j < d; j++) {
                w[j] = xi[j] + sign * eta[j];
                we += w[j] * eta[j];
            }
            double nu = 0;
            for (int j = 0; j < d; j++) {
                w[j] -= we * eta[j];
                nu += w[j] * w[j];
            }
            if (nu == 0) {
                continue; // x_i = η contributes nothing; antipodes cannot occur inside B_r(c), r < π/4
            }
            double f = theta / Math.sqrt(nu);
            for (int j = 0; j < d; j++) {
                g[j] += f * w[j];
            }
        }
        return Sphere.norm(g) / x.length;
    }
}
