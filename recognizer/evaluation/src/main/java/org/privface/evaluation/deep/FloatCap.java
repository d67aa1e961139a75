package org.privface.evaluation.deep;

import java.security.SecureRandom;

/**
 * PrivUnit's continuous cap (Bhowmick et al. 2018) on the unit sphere S^{k−1}, sampled in floating
 * point: an evaluation-only reference line for the exact {@code sign-cap} the agent ships. With
 * probability p the release is uniform on the cap {v : ⟨v, u⟩ ≥ γ} around the true direction u,
 * otherwise uniform on the rest of the sphere. If A is the cap's share of the sphere, the output
 * density is p/A or (1 − p)/(1 − A), so the ideal mechanism is ε-LDP with
 * ε = ln(p/(1 − p)) + ln((1 − A)/A); γ is solved from the target ε. The floating-point sampler's
 * outputs are not on a fixed grid, so that ε is the ideal mechanism's only (Mironov 2012); the
 * agent does not offer this sampler.
 */
final class FloatCap {
    private final int k;
    private final double p;
    private final double gamma;
    private final SecureRandom random;

    FloatCap(int k, double p, double epsilon, SecureRandom random) {
        if (k < 3) {
            throw new IllegalArgumentException("need k ≥ 3, was " + k);
        }
        this.k = k;
        this.p = p;
        this.random = random;
        // (1 − A)/A = e^ε (1 − p)/p.
        double share = 1 / (1 + Math.exp(epsilon) * (1 - p) / p);
        double lo = -1;
        double hi = 1;
        for (int i = 0; i < 200; i++) {
            double mid = (lo + hi) / 2;
            if (capShare(mid, k) > share) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        this.gamma = lo;
    }

    /** ε of the ideal mechanism with this k, p and γ. */
    double epsilon() {
        double a = capShare(gamma, k);
        return Math.log(p / (1 - p)) + Math.log((1 - a) / a);
    }

    double gamma() {
        return gamma;
    }

    /**
     * Share of S^{k−1} with ⟨v, u⟩ ≥ g: ∫_g^1 (1 − t²)^{(k−3)/2} dt over the same integral from −1,
     * by Simpson's rule in log space around the largest term (enough for an evaluation reference).
     */
    static double capShare(double g, int k) {
        return integral(g, k) / integral(-1, k);
    }

    private static double integral(double from, int k) {
        int n = 20_000;
        double h = (1 - from) / n;
        double s = 0;
        for (int i = 0; i <= n; i++) {
            double t = from + i * h;
            double f = Math.pow(Math.max(0, 1 - t * t), (k - 3) / 2.0);
            s += f * (i == 0 || i == n ? 1 : i % 2 == 1 ? 4 : 2);
        }
        return s * h / 3;
    }

    double[][] releaseAll(double[][] units) {
        double[][] out = new double[units.length][];
        for (int i = 0; i < units.length; i++) {
            out[i] = release(units[i]);
        }
        return out;
    }

    double[] release(double[] u) {
        boolean inCap = random.nextDouble() < p;
        double t;
        while (true) {
            if (inCap) {
                // ⟨v, u⟩ has density ∝ (1 − t²)^{(k−3)/2} on [γ, 1]: uniform proposals, accepted by the ratio.
                t = gamma + (1 - gamma) * random.nextDouble();
                double top = gamma > 0 ? 1 - gamma * gamma : 1;
                if (random.nextDouble() <= Math.pow((1 - t * t) / top, (k - 3) / 2.0)) {
                    break;
                }
            } else {
                double[] v = gaussian(k);
                t = dot(v, u) / Math.sqrt(dot(v, v));
                if (t < gamma) {
                    break;
                }
            }
        }
        double[] w = gaussian(k);
        double wu = dot(w, u);
        for (int i = 0; i < k; i++) {
            w[i] -= wu * u[i];
        }
        double wn = Math.sqrt(dot(w, w));
        double s = Math.sqrt(Math.max(0, 1 - t * t));
        double[] v = new double[k];
        for (int i = 0; i < k; i++) {
            v[i] = t * u[i] + s * w[i] / wn;
        }
        return v;
    }

    private double[] gaussian(int n) {
        double[] g = new double[n];
        for (int i = 0; i < n; i++) {
            g[i] = random.nextGaussian();
        }
        return g;
    }

    private static double dot(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }
}
