package org.privface.privacy.gdp;

import org.privface.privacy.Privacy;

/**
 * μ-GDP accounting (Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022, arXiv:1905.02383).
 *
 * <p>A mechanism is μ-GDP when telling any two neighbouring inputs apart from its output is at
 * least as hard as telling N(0,1) from N(μ,1). The facts used here:
 * <ul>
 * <li>the Gaussian mechanism with L2 sensitivity Δ and noise σ is Δ/σ-GDP;</li>
 * <li>μ_i-GDP mechanisms compose, adaptively, to √(Σ μ_i²)-GDP exactly;</li>
 * <li>μ-GDP is (ε, δ(ε))-DP for every ε ≥ 0 with δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2),
 *     and this curve is tight.</li>
 * </ul>
 *
 * <p>No statistics library is on the agent's classpath (commons-math3 is not a dependency), so Φ
 * comes from W. J. Cody's rational Chebyshev approximations of erfc and the scaled erfcx
 * (Cody, Math. Comp. 23, 1969; the netlib SPECFUN routine CALERF of 1987), accurate to a few ulps.
 */
public final class MuGdp {
    /**
     * δ at which the agent states an ε for a Gaussian release: well below 1/n for the number n of
     * faces one person contributes in a window, the usual rule for δ.
     */
    public static final double DEFAULT_DELTA = 1e-5;

    /** Bisection stops when the bracket is this small relative to its upper end (or after 400 halvings). */
    static final double RELATIVE_TOLERANCE = 1e-13;
    private static final int MAX_BISECTIONS = 400;
    private static final double SQRT_HALF = 0.70710678118654752440;

    private MuGdp() {
    }

    /**
     * δ(ε) of a μ-GDP mechanism: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).
     *
     * <p>Evaluated without the cancellation and overflow of the textbook form: with
     * a = (ε/μ − μ/2)/√2 and b = (ε/μ + μ/2)/√2 one has b² − a² = ε, so
     * e^ε Φ(−ε/μ − μ/2) = ½ e^ε erfc(b) = ½ e^{−a²} erfcx(b) and δ = ½ (erfc(a) − e^{−a²} erfcx(b)).
     * For a ≥ 0 both terms share the factor e^{−a²}, which is taken out, so δ keeps its relative
     * accuracy far into the tail (ε ≫ μ) instead of subtracting two nearly equal numbers.
     */
    public static double delta(double eps, double mu) {
        checkEpsilonAllowZero(eps);
        Privacy.checkMu(mu);
        double a = (eps / mu - mu / 2) * SQRT_HALF;
        double b = (eps / mu + mu / 2) * SQRT_HALF;
        double d;
        if (a >= 0) {
            d = 0.5 * expMinusSquare(a) * (erfcx(a) - erfcx(b));
        } else {
            d = 0.5 * (erfc(a) - expMinusSquare(a) * erfcx(b));
        }
        return Math.max(0, Math.min(1, d));
    }

    /**
     * The smallest ε (to within {@link #RELATIVE_TOLERANCE}) at which a μ-GDP mechanism is
     * (ε, δ)-DP. δ(ε) decreases in ε, so this is a bisection; the returned ε is the bracket's
     * upper end, so {@code delta(epsilonFor(mu, d), mu) <= d} always holds: rounding errs towards
     * stating more ε, never less. Returns 0 when δ ≥ δ(0) = 2Φ(μ/2) − 1.
     */
    public static double epsilonFor(double mu, double delta) {
        Privacy.checkMu(mu);
        Privacy.checkDelta(delta);
        if (delta(0, mu) <= delta) {
            return 0;
        }
        double lo = 0;
        double hi = Math.max(1, mu * mu);
        while (delta(hi, mu) > delta) {
            lo = hi;
            hi *= 2;
            if (!Double.isFinite(hi)) {
                throw new IllegalArgumentException("no finite epsilon for mu " + mu + " at delta " + delta);
            }
        }
        for (int i = 0; i < MAX_BISECTIONS && hi - lo > RELATIVE_TOLERANCE * hi; i++) {
            double mid = lo + (hi - lo) / 2;
            if (delta(mid, mu) > delta) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return hi;
    }

    /**
     * The largest μ (to within {@link #RELATIVE_TOLERANCE}) whose δ(ε) is at most the given δ: the
     * GDP budget that buys (ε, δ)-DP. δ(ε) increases in μ; the returned μ is the bracket's lower
     * end, so {@code delta(eps, muFor(eps, d)) <= d} always holds.
     */
    public static double muFor(double eps, double delta) {
        Privacy.checkEpsilon(eps);
        Privacy.checkDelta(delta);
        double lo = 0;
        double hi = 1;
        while (delta(eps, hi) <= delta) {
            lo = hi;
            hi *= 2;
            if (!Double.isFinite(hi)) {
                throw new IllegalArgumentException("no finite mu for epsilon " + eps + " at delta " + delta);
            }
        }
        for (int i = 0; i < MAX_BISECTIONS && hi - lo > RELATIVE_TOLERANCE * hi; i++) {
            double mid = lo + (hi - lo) / 2;
            if (delta(eps, mid) <= delta) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        if (lo == 0) {
            throw new IllegalArgumentException("delta " + delta + " is too small for any positive mu at epsilon " + eps);
        }
        return lo;
    }

    /** √(Σ μ_i²): the exact μ of the (adaptive) composition of μ_i-GDP mechanisms. Each μ_i ≥ 0. */
    public static double compose(double... mus) {
        double scale = 0;
        for (double m : mus) {
            if (!(m >= 0) || !Double.isFinite(m)) {
                throw new IllegalArgumentException("each mu must be non-negative and finite, was " + m);
            }
            scale = Math.max(scale, m);
        }
        if (scale == 0) {
            return 0;
        }
        // Scaled so that a long ledger of large μ cannot overflow the sum of squares.
        double sum = 0;
        for (double m : mus) {
            double r = m / scale;
            sum += r * r;
        }
        return scale * Math.sqrt(sum);
    }

    /** μ = Δ/σ of the Gaussian mechanism with L2 sensitivity Δ and noise N(0, σ²) per coordinate. */
    public static double muOfGaussian(double l2Sensitivity, double sigma) {
        return Privacy.checkSensitivity(l2Sensitivity) / Privacy.checkSigma(sigma);
    }

    /**
     * ε(δ) of pure-ε Laplace releases composed with Gaussian ones: Σ ε_laplace + ε_μ(δ), where ε_μ(δ)
     * is {@link #epsilonFor} of the Gaussian part's total μ. Basic composition of an ε_L-DP mechanism
     * with an (ε_μ, δ)-DP one gives (ε_L + ε_μ, δ)-DP. Conservative: converting each Laplace release
     * into its f-DP trade-off curve and composing everything in the f-DP calculus would be tighter,
     * but needs numerical convolution of trade-off curves; this rule is simple and sound.
     *
     * @param epsilonLaplace Σ ε of the pure releases, ≥ 0
     * @param mu             total μ of the Gaussian releases, ≥ 0 (0 when there were none)
     */
    public static double combinedEpsilon(double epsilonLaplace, double mu, double delta) {
        checkEpsilonAllowZero(epsilonLaplace);
        if (!(mu >= 0) || !Double.isFinite(mu)) {
            throw new IllegalArgumentException("mu must be non-negative and finite, was " + mu);
        }
        Privacy.checkDelta(delta);
        return epsilonLaplace + (mu == 0 ? 0 : epsilonFor(mu, delta));
    }

    /**
     * A mixed ledger: the pure-ε total of the Laplace releases and the μ of the Gaussian ones.
     *
     * @param epsilonLaplace Σ ε over Laplace releases
     * @param mu             √(Σ μ²) over Gaussian releases
     */
    public record Mixed(double epsilonLaplace, double mu) {
        /** The conservative combined bound of {@link #combinedEpsilon}. */
        public double epsilon(double delta) {
            return combinedEpsilon(epsilonLaplace, mu, delta);
        }
    }

    /** Φ(x), the standard normal CDF: ½ erfc(−x/√2). */
    public static double normalCdf(double x) {
        return 0.5 * erfc(-x * SQRT_HALF);
    }

    /** erfc(x) = 1 − erf(x), by Cody's CALERF; relative error a few ulps where it does not underflow. */
    public static double erfc(double x) {
        return calerf(x, 1);
    }

    /** erfcx(x) = e^{x²} erfc(x), by Cody's CALERF; about 1/(x√π) for large x, no underflow. */
    public static double erfcx(double x) {
        return calerf(x, 2);
    }

    private static void checkEpsilonAllowZero(double eps) {
        if (!(eps >= 0) || !Double.isFinite(eps)) {
            throw new IllegalArgumentException("epsilon must be non-negative and finite, was " + eps);
        }
    }

    /**
     * e^{−x²} with x² split as in CALERF (x rounded to sixteenths, then the remainder), so that the
     * rounding of x² does not turn into a relative error of order x²·ulp in the result.
     */
    private static double expMinusSquare(double x) {
        double y = Math.abs(x);
        double ysq = Math.floor(y * 16) / 16;
        double del = (y - ysq) * (y + ysq);
        return Math.exp(-ysq * ysq) * Math.exp(-del);
    }

    /** e^{x²}, split the same way. */
    private static double expSquare(double x) {
        double y = Math.abs(x);
        double ysq = Math.floor(y * 16) / 16;
        double del = (y - ysq) * (y + ysq);
        return Math.exp(ysq * ysq) * Math.exp(del);
    }

    // Cody's coefficients, exactly as in CALERF. A, B: erf on |x| <= 0.46875.
    private static final double[] A = {3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
        3.20937758913846947e03, 1.85777706184603153e-1};
    private static final double[] B = {2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
        2.84423683343917062e03};
    // C, D: erfc on 0.46875 < |x| <= 4.
    private static final double[] C = {5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
        2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03, 2.05107837782607147e03,
        1.23033935479799725e03, 2.15311535474403846e-8};
    private static final double[] D = {1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
        1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03, 3.43936767414372164e03,
        1.23033935480374942e03};
    // P, Q: erfc on |x| > 4, in 1/x².
    private static final double[] P = {3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
        1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2};
    private static final double[] Q = {2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
        6.05183413124413191e-2, 2.33520497626869185e-3};
    /** 1/√π. */
    private static final double SQRPI = 5.6418958354775628695e-1;
    private static final double THRESH = 0.46875;
    // IEEE double thresholds from CALERF.
    private static final double XSMALL = 1.11e-16;
    private static final double XBIG = 26.543;
    private static final double XHUGE = 6.71e7;
    private static final double XMAX = 2.53e307;
    private static final double XNEG = -26.628;

    /** CALERF: jint 1 gives erfc(x), 2 gives erfcx(x). */
    private static double calerf(double x, int jint) {
        if (Double.isNaN(x)) {
            return Double.NaN;
        }
        double y = Math.abs(x);
        double result;
        if (y <= THRESH) {
            double ysq = y > XSMALL ? y * y : 0;
            double xnum = A[4] * ysq;
            double xden = ysq;
            for (int i = 0; i < 3; i++) {
                xnum = (xnum + A[i]) * ysq;
                xden = (xden + B[i]) * ysq;
            }
            result = 1 - x * (xnum + A[3]) / (xden + B[3]);
            return jint == 2 ? Math.exp(ysq) * result : result;
        } else if (y <= 4) {
            double xnum = C[8] * y;
            double xden = y;
            for (int i = 0; i < 7; i++) {
                xnum = (xnum + C[i]) * y;
                xden = (xden + D[i]) * y;
            }
            result = (xnum + C[7]) / (xden + D[7]);
            if (jint != 2) {
                result *= expMinusSquare(y);
            }
        } else {
            result = 0;
            boolean done = false;
            if (y >= XBIG) {
                if (jint != 2 || y >= XMAX) {
                    done = true;
                } else if (y >= XHUGE) {
                    result = SQRPI / y;
                    done = true;
                }
            }
            if (!done) {
                double ysq = 1 / (y * y);
                double xnum = P[5] * ysq;
                double xden = ysq;
                for (int i = 0; i < 4; i++) {
                    xnum = (xnum + P[i]) * ysq;
                    xden = (xden + Q[i]) * ysq;
                }
                result = ysq * (xnum + P[4]) / (xden + Q[4]);
                result = (SQRPI - result) / y;
                if (jint != 2) {
                    result *= expMinusSquare(y);
                }
            }
        }
        // The approximations above are for |x|; reflect for negative x.
        if (x >= 0) {
            return result;
        }
        if (jint == 1) {
            return 2 - result;
        }
        if (x < XNEG) {
            return Double.POSITIVE_INFINITY;
        }
        double e = expSquare(x);
        return (e + e) - result;
    }
}
