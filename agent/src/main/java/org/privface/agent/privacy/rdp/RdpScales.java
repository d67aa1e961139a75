package org.privface.agent.privacy.rdp;

import org.privface.agent.privacy.Privacy;

/**
 * Noise scales for RDP's ranked coefficients.
 *
 * <p>Rank r (1-based) is noised with probability q_r = P(K ≥ r), K ~ Geometric(p) truncated to
 * [1, M]. With a_r = w̃_r·Δ_r (influence weight times sensitivity), the paper's budget is the
 * expected weighted cost Σ q_r a_r / b_r = ε0 and its utility the expected noise energy
 * Σ q_r · 2 b_r², which is the image MSE because the Haar transform is orthonormal.
 *
 * <p>Proof sketch of the optimum: the Lagrangian Σ q_r 2b_r² + λ(Σ q_r a_r / b_r − ε0) is
 * stationary at b_r³ = λ a_r / 4, so b_r ∝ a_r^{1/3}; the constraint fixes the constant:
 * b_r = a_r^{1/3} · Σ_j q_j a_j^{2/3} / ε0. {@link #lagrange} returns it; LMGD must reach it.
 */
public final class RdpScales {
    private RdpScales() {
    }

    /** q_r = P(K ≥ r) for r = 1..m, K ~ Geometric(p) on {1, 2, ...} truncated to [1, m]. */
    public static double[] inclusion(double p, int m) {
        if (!(p > 0 && p < 1)) {
            throw new IllegalArgumentException("geometric p must be in (0, 1), was " + p);
        }
        if (m < 1) {
            throw new IllegalArgumentException("M_P must be at least 1, was " + m);
        }
        double tail = Math.pow(1 - p, m);
        double[] q = new double[m];
        for (int r = 1; r <= m; r++) {
            q[r - 1] = (Math.pow(1 - p, r - 1) - tail) / (1 - tail);
        }
        return q;
    }

    /** K ~ Geometric(p) truncated to [1, m], by inversion of a uniform u in (0, 1]. */
    public static int drawK(double p, int m, double u) {
        double tail = Math.pow(1 - p, m);
        // P(K ≤ k) = (1 − (1−p)^k) / (1 − tail); invert for the smallest k with CDF ≥ 1 − u.
        double target = (1 - u) * (1 - tail);
        int k = (int) Math.ceil(Math.log1p(-target) / Math.log1p(-p));
        return Math.max(1, Math.min(m, k));
    }

    /** The uniform baseline: one scale b = Σ q_r Δ_r / ε0, blind to the weights. */
    public static double uniform(double[] q, double[] delta, double eps0) {
        Privacy.checkEpsilon(eps0);
        double s = 0;
        for (int r = 0; r < q.length; r++) {
            s += q[r] * delta[r];
        }
        return s / eps0;
    }

    /** NA: the identical average scale that meets the weighted budget, b̄ = Σ q_r a_r / ε0. */
    public static double na(double[] q, double[] a, double eps0) {
        return uniform(q, a, eps0);
    }

    /** The exact optimum of the expected-MSE problem (see the class comment). */
    public static double[] lagrange(double[] q, double[] a, double eps0) {
        Privacy.checkEpsilon(eps0);
        double s = 0;
        for (int r = 0; r < q.length; r++) {
            s += q[r] * Math.cbrt(a[r] * a[r]);
        }
        double[] b = new double[q.length];
        for (int r = 0; r < q.length; r++) {
            b[r] = Math.cbrt(a[r]) * s / eps0;
        }
        return b;
    }

    /** LMGD's answer: the scales, the iterations it took, and the final F = F1 + F2. */
    public record Lmgd(double[] scales, int iterations, double residual, boolean converged) {
    }

    /**
     * Section IV-C2's alternating gradient descent on the Lagrangian. Variables are normalised
     * by the NA scale (u_r = b_r / b̄, so u ≡ 1 is feasible) to make one step size η serve every
     * ε0 and image. Each iteration takes a step on u along −∂L/∂u (scaled per rank by 1/q_r)
     * and then a step on λ along the constraint. F1 is the mean squared stationarity residual,
     * F2 the squared relative constraint violation; it stops when F1 + F2 &lt; tolerance.
     */
    public static Lmgd lmgd(double[] q, double[] a, double eps0, double eta, double tolerance, int maxIterations) {
        if (!(eta >= 0.01 && eta <= 0.1)) {
            throw new IllegalArgumentException("LMGD step eta must be in [0.01, 0.1], was " + eta);
        }
        int m = q.length;
        double bBar = na(q, a, eps0);
        double qSum = 0;
        double aMean = 0;
        for (int r = 0; r < m; r++) {
            qSum += q[r];
            aMean += q[r] * a[r];
        }
        aMean /= qSum;
        double[] u = new double[m];
        java.util.Arrays.fill(u, 1.0);
        // Normalised problem: minimise Σ q u² / Q subject to h(u) = Σ q (a/ā) / u / Q − 1 = 0.
        double lambda = 2.0;
        double f = Double.POSITIVE_INFINITY;
        int it = 0;
        for (; it < maxIterations; it++) {
            double f1 = 0;
            for (int r = 0; r < m; r++) {
                double g = 2 * u[r] - lambda * (a[r] / aMean) / (u[r] * u[r]);
                f1 += g * g;
                u[r] = Math.max(1e-6, u[r] - eta * g);
            }
            f1 /= m;
            double h = -1;
            for (int r = 0; r < m; r++) {
                h += q[r] * (a[r] / aMean) / u[r] / qSum;
            }
            lambda += eta * 10 * h;
            f = f1 + h * h;
            if (f < tolerance) {
                it++;
                break;
            }
        }
        double[] b = new double[m];
        for (int r = 0; r < m; r++) {
            b[r] = u[r] * bBar;
        }
        // The last λ step leaves a small violation; rescaling meets the budget exactly, so the
        // scales spend ε0 and not a little more.
        double cost = 0;
        for (int r = 0; r < m; r++) {
            cost += q[r] * a[r] / b[r];
        }
        double fix = cost / eps0;
        for (int r = 0; r < m; r++) {
            b[r] *= fix;
        }
        return new Lmgd(b, it, f, f < tolerance);
    }

    /**
     * STRICT: scales minimising the feature noise Σ ω_k b_k² subject to Σ Δ_k / b_k = ε, where
     * ω_k is the squared influence of coefficient k on the feature vector. Stationarity gives
     * b_k = c·(Δ_k / ω_k)^{1/3}, and the constraint c = Σ Δ_k^{2/3} ω_k^{1/3} / ε.
     */
    public static double[] strict(double[] delta, double[] omega, double eps) {
        Privacy.checkEpsilon(eps);
        double c = 0;
        for (int k = 0; k < delta.length; k++) {
            c += Math.cbrt(delta[k] * delta[k] * omega[k]);
        }
        c /= eps;
        double[] b = new double[delta.length];
        for (int k = 0; k < delta.length; k++) {
            b[k] = c * Math.cbrt(delta[k] / omega[k]);
        }
        return b;
    }
}
