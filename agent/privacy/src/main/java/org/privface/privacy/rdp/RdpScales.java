package org.privface.privacy.rdp;

import org.privface.privacy.Privacy;
import org.privface.privacy.SpentEpsilon;

/**
 * Noise scales for RDP's ranked coefficients.
 *
 * <p>Paper modes (Ou et al., Eq. 3–7): w is the M_F × m matrix of weights w_ik = ∂F_i/∂C_k of
 * feature i on the k-th ranked coefficient, Δ_i the sensitivity of feature i, c_k the rank
 * weights of {@link #paperWeights}. {@link #strict} is the product's honest mode.
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

    /**
     * The paper's rank weights c_k = (1−p)^k − (1−p)^(M_P+1), k = 1..m (Eq. 3, L180–191):
     * Σ_(K≥k) p(1−p)^K, the unnormalised geometric tail the paper's variance derivation uses.
     * It is (1−p)(1−(1−p)^M_P) times {@link #inclusion}; Eq. 3 is computed with the paper's own.
     */
    public static double[] paperWeights(double p, int mP, int m) {
        double tail = Math.pow(1 - p, mP + 1);
        double[] c = new double[m];
        for (int k = 1; k <= m; k++) {
            c[k - 1] = Math.pow(1 - p, k) - tail;
        }
        return c;
    }

    /** S = Σ_(k=1..M_P) c_k in closed form, NA's normaliser (L263). */
    public static double paperWeightSum(double p, int mP) {
        double tail = Math.pow(1 - p, mP + 1);
        return (1 - p - tail) / p - mP * tail;
    }

    /**
     * Eq. 3: ε = Σ_i Δ_i / √(Σ_k (w_ik b_k)² c_k), the paper's budget for scales b over the
     * ranked coefficients. w is M_F × m by rank. Not a DP composition: the square root comes
     * from matching the variance of a weighted Laplace sum to one Laplace (docs/privacy-rdp.md).
     */
    public static double epsilon(double[][] w, double[] delta, double[] c, double[] b) {
        double eps = 0;
        for (int i = 0; i < w.length; i++) {
            double d = 0;
            for (int k = 0; k < c.length; k++) {
                double v = w[i][k] * b[k];
                d += v * v * c[k];
            }
            eps += delta[i] / Math.sqrt(d);
        }
        return eps;
    }

    /** Plain RDP (L472): one scale b for every rank, the one that makes Eq. 3 equal ε0. */
    public static double plain(double[][] w, double[] delta, double[] c, double eps0) {
        Privacy.checkEpsilon(eps0);
        double[] ones = new double[c.length];
        java.util.Arrays.fill(ones, 1.0);
        // Eq. 3 is homogeneous of degree −1 in b, so ε(b·1) = ε(1)/b.
        return epsilon(w, delta, c, ones) / eps0;
    }

    /**
     * NA as printed (L263): b_k = Σ_i (Δ_i / |w_ik|) / (ε0 √S). A weight of exactly zero would
     * make the scale infinite; it is floored at 1e-12 so the release stays finite (and huge).
     */
    public static double[] naPrinted(double[][] w, double[] delta, double p, int mP, int m, double eps0) {
        Privacy.checkEpsilon(eps0);
        double root = Math.sqrt(paperWeightSum(p, mP));
        double[] b = new double[m];
        for (int k = 0; k < m; k++) {
            double s = 0;
            for (int i = 0; i < w.length; i++) {
                s += delta[i] / Math.max(1e-12, Math.abs(w[i][k]));
            }
            b[k] = s / (eps0 * root);
        }
        return b;
    }

    /** The same scales multiplied by one factor so that Eq. 3 spends exactly ε0 (homogeneity). */
    public static double[] rescaled(double[][] w, double[] delta, double[] c, double[] b, double eps0) {
        double f = epsilon(w, delta, c, b) / eps0;
        double[] out = new double[b.length];
        for (int k = 0; k < b.length; k++) {
            out[k] = b[k] * f;
        }
        return out;
    }

    /** LMGD's answer: the scales, the iterations it took, the final residual F, and whether F &lt; tolerance. */
    public record Lmgd(double[] scales, int iterations, double residual, boolean converged) {
    }

    /**
     * Section IV-C2: minimise Eq. 4's cost Σ c_k b_k² subject to Eq. 3 = ε0 by gradient descent,
     * from plain RDP's scale. The printed update (Eq. 6–7) puts absolute values around the
     * gradients, which leaves the direction open; we step along the true gradient of the
     * Lagrangian, −(2 c_k b_k + λ ∂ε/∂b_k), with λ at its stationary value
     * λ = 2 cost / ε (Euler's relation for the two homogeneous terms), and replace the λ ascent by an exact rescale onto Eq. 3 = ε0
     * after every step (Eq. 3 is homogeneous of degree −1 in b). With R = cost/ε and
     * g_k = Σ_i Δ_i w_ik² / D_i^{3/2}, D_i = Σ_j (w_ij b_j)² c_j, the step on b_k is
     * −η · 2 c_k b_k (1 − R g_k) in units of the plain scale. F is the mean of its squares.
     */
    public static Lmgd lmgd(double[][] w, double[] delta, double[] c, double eps0, double eta, double tolerance,
                            int maxIterations) {
        if (!(eta >= 0.01 && eta <= 0.1)) {
            throw new IllegalArgumentException("LMGD step eta must be in [0.01, 0.1], was " + eta);
        }
        int m = c.length;
        int nf = w.length;
        double bPlain = plain(w, delta, c, eps0);
        double[][] w2 = new double[nf][m];
        for (int i = 0; i < nf; i++) {
            for (int k = 0; k < m; k++) {
                w2[i][k] = w[i][k] * w[i][k];
            }
        }
        double[] u = new double[m];
        java.util.Arrays.fill(u, 1.0);
        double[] dInv = new double[nf];
        double f = Double.POSITIVE_INFINITY;
        int it = 0;
        while (it < maxIterations) {
            it++;
            double eps = 0;
            for (int i = 0; i < nf; i++) {
                double d = 0;
                for (int k = 0; k < m; k++) {
                    d += w2[i][k] * u[k] * u[k] * c[k];
                }
                double r = 1 / Math.sqrt(d);
                eps += delta[i] * r;
                dInv[i] = delta[i] * r * r * r;
            }
            double cost = 0;
            for (int k = 0; k < m; k++) {
                cost += c[k] * u[k] * u[k];
            }
            double ratio = cost / eps;
            f = 0;
            for (int k = 0; k < m; k++) {
                double g = 0;
                for (int i = 0; i < nf; i++) {
                    g += dInv[i] * w2[i][k];
                }
                double step = 2 * c[k] * u[k] * (1 - ratio * g);
                f += step * step;
                u[k] = Math.max(0, u[k] - eta * step);
            }
            f /= m;
            // Back onto the constraint: b = u·b_plain spends ε(u)/b_plain, and ε(t·b) = ε(b)/t.
            double t = epsilon(w, delta, c, u) / (bPlain * eps0);
            for (int k = 0; k < m; k++) {
                u[k] *= t;
            }
            if (f < tolerance) {
                break;
            }
        }
        double[] b = new double[m];
        for (int k = 0; k < m; k++) {
            b[k] = u[k] * bPlain;
        }
        return new Lmgd(rescaled(w, delta, c, b, eps0), it, f, f < tolerance);
    }

    /**
     * STRICT: scales minimising the feature noise Σ ω_k b_k² subject to Σ Δ_k / b_k = ε, where
     * ω_k is the squared influence of coefficient k on the feature vector. Stationarity gives
     * b_k = c·(Δ_k / ω_k)^{1/3}, and the constraint c = Σ Δ_k^{2/3} ω_k^{1/3} / ε. The scales are
     * then widened by ulps where needed so that Σ Δ_k/b_k, exactly, is at most ε ({@link SpentEpsilon}).
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
        // Rounded as doubles, Σ Δ_k/b_k can land ulps above ε: widen every scale by the excess (rounded
        // up) until the exact sum, bounded above by SpentEpsilon, is at most ε.
        for (double spent = SpentEpsilon.quotientSumUp(delta, b); spent > eps; spent = SpentEpsilon.quotientSumUp(delta, b)) {
            double widen = Math.nextUp(spent / eps);
            for (int k = 0; k < b.length; k++) {
                b[k] = Math.nextUp(b[k] * widen);
            }
        }
        return b;
    }
}
