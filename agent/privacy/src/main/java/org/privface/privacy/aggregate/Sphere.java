package org.privface.privacy.aggregate;

/**
 * Geometry of the unit sphere S^{d-1} ⊂ R^d, where L2-normalised feature vectors live. Points are
 * unit vectors; tangent vectors at p are orthogonal to p.
 *
 * <p>Numerics. arccos⟨p,q⟩ loses half the digits near 0 and π (its derivative is infinite there);
 * ρ = 2·atan2(‖p − q‖, ‖p + q‖) is accurate over the whole range. The tangent direction
 * q − ⟨p,q⟩p cancels catastrophically near q = ±p; it equals w − ⟨w,p⟩p for w = q ∓ p, which
 * only subtracts small quantities, so that is what {@link #log} computes.
 */
public final class Sphere {
    private Sphere() {
    }

    /** ⟨a, b⟩; for unit vectors, their cosine. */
    public static double dot(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    static double norm(double[] a) {
        return Math.sqrt(dot(a, a));
    }

    /** v/‖v‖; a new array. Refuses the zero vector, which has no direction. */
    public static double[] normalize(double[] v) {
        double n = norm(v);
        if (!(n > 0) || !Double.isFinite(n)) {
            throw new IllegalArgumentException("cannot normalise a zero or non-finite vector");
        }
        double[] u = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            u[i] = v[i] / n;
        }
        return u;
    }

    /** The component of v in T_pS: v − ⟨v,p⟩p; a new array. */
    public static double[] tangent(double[] p, double[] v) {
        double c = dot(v, p);
        double[] t = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            t[i] = v[i] - c * p[i];
        }
        return t;
    }

    /** Geodesic distance ρ(p,q) = arccos⟨p,q⟩ ∈ [0, π], computed stably as 2·atan2(‖p−q‖, ‖p+q‖). */
    public static double distance(double[] p, double[] q) {
        check(p, q);
        double minus = 0;
        double plus = 0;
        for (int i = 0; i < p.length; i++) {
            double a = p[i] - q[i];
            double b = p[i] + q[i];
            minus += a * a;
            plus += b * b;
        }
        return 2 * Math.atan2(Math.sqrt(minus), Math.sqrt(plus));
    }

    /**
     * exp_p(v) = cos‖v‖·p + sin‖v‖·v/‖v‖, re-normalised so that long chains of steps stay on the
     * sphere. v is first projected onto T_p, so round-off in its normal part is harmless.
     */
    public static double[] exp(double[] p, double[] v) {
        check(p, v);
        double[] t = tangent(p, v);
        double theta = norm(t);
        double[] q = new double[p.length];
        if (theta == 0) {
            System.arraycopy(p, 0, q, 0, p.length);
            return q;
        }
        double cos = Math.cos(theta);
        double sinc = Math.sin(theta) / theta;
        for (int i = 0; i < p.length; i++) {
            q[i] = cos * p[i] + sinc * t[i];
        }
        return normalize(q);
    }

    /**
     * log_p(q): the tangent vector at p of length ρ(p,q) pointing along the shortest geodesic to q.
     * Undefined at the antipode q = −p, where every direction is shortest.
     */
    public static double[] log(double[] p, double[] q) {
        check(p, q);
        double theta = distance(p, q);
        double sign = dot(p, q) >= 0 ? -1 : 1; // w = q − p near p, q + p near −p
        double[] w = new double[p.length];
        for (int i = 0; i < p.length; i++) {
            w[i] = q[i] + sign * p[i];
        }
        double[] u = tangent(p, w);
        double nu = norm(u);
        if (nu == 0) {
            if (theta < Math.PI / 2) {
                return new double[p.length];
            }
            throw new IllegalArgumentException("log is undefined at the antipode");
        }
        double f = theta / nu;
        for (int i = 0; i < u.length; i++) {
            u[i] *= f;
        }
        return u;
    }

    /**
     * The point of the closed geodesic ball B_r(c) nearest to x: x itself if ρ(c,x) ≤ r, else
     * exp_c(r·log_c(x)/‖log_c(x)‖). The antipode of c, which has no nearest point, maps to c; any
     * fixed per-record rule keeps replace-one neighbours neighbours.
     */
    public static double[] clipToBall(double[] c, double[] x, double r) {
        double rho = distance(c, x);
        if (rho <= r) {
            return x.clone();
        }
        double[] v;
        try {
            v = log(c, x);
        } catch (IllegalArgumentException antipode) {
            return c.clone();
        }
        double n = norm(v);
        if (!(n > 0)) {
            return c.clone();
        }
        for (int i = 0; i < v.length; i++) {
            v[i] *= r / n;
        }
        double[] y = exp(c, v);
        // exp's round-off may leave y a hair outside; the sensitivity bound needs ρ(c,y) ≤ r.
        return distance(c, y) <= r ? y : exp(c, scale(v, 1 - 1e-12));
    }

    private static double[] scale(double[] v, double f) {
        double[] w = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            w[i] = v[i] * f;
        }
        return w;
    }

    /**
     * The (non-private) Fréchet mean argmin Σρ(η, x_i)² by Karcher's fixed point
     * η ← exp_η((1/n)Σ log_η x_i), from {@code start}; unique when the points lie in a ball of
     * radius below π/4 (Karcher 1977). For tests and utility measurements, never for release.
     */
    public static double[] frechetMean(double[][] points, double[] start, int maxIterations, double tolerance) {
        double[] eta = start.clone();
        for (int it = 0; it < maxIterations; it++) {
            double[] g = meanLog(eta, points);
            eta = exp(eta, g);
            if (norm(g) < tolerance) {
                break;
            }
        }
        return eta;
    }

    /** (1/n)Σ log_η x_i = −∇F(η) for F(η) = (1/2n)Σ ρ(η, x_i)². */
    static double[] meanLog(double[] eta, double[][] points) {
        double[] g = new double[eta.length];
        for (double[] x : points) {
            double[] l = log(eta, x);
            for (int j = 0; j < g.length; j++) {
                g[j] += l[j];
            }
        }
        for (int j = 0; j < g.length; j++) {
            g[j] /= points.length;
        }
        return g;
    }

    private static void check(double[] a, double[] b) {
        if (a.length != b.length) {
            throw new IllegalArgumentException("dimensions differ: " + a.length + " and " + b.length);
        }
    }
}
