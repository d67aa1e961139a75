package org.privface.privacy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.DoubleSupplier;

import org.ejml.simple.SimpleMatrix;
import org.junit.jupiter.api.Test;
import org.privface.privacy.fisher.FisherBasis;
import org.privface.privacy.fisher.FisherMechanism;
import org.privface.privacy.gdp.MuGdp;
import org.privface.privacy.gdp.SecureGaussian;

/**
 * Statistical privacy tests in the spirit of Google's DP stochastic tester, on the samplers and
 * mechanisms the agent publishes with. Each runs the release many times on two neighbouring
 * inputs (at distance = the sensitivity the release is calibrated to), buckets one released
 * coordinate into a histogram, and checks the empirical privacy loss against the claimed ε (or
 * μ-GDP tradeoff curve). Each check also runs against a deliberately mis-calibrated release (noise
 * scale halved: true loss 2ε, true μ 2μ) and must catch it, which shows the check can fail.
 *
 * <p>Tolerance. Every bucket probability gets a Wilson score interval at z = {@value #Z}
 * (one-sided 3.4e-6). A bucket violates ε only when even the most favourable ends of the two
 * intervals do: ln(p_lo/q_hi) &gt; ε, i.e. ln(p̂/q̂) &gt; ε + ln(p̂/p_lo) + ln(q_hi/q̂). With at
 * most 60 buckets, 2 directions and 2 bounds each, the chance that a correct mechanism fails on
 * a fresh seed is below 1e-3 (Bonferroni); the seeds are fixed, so a run is reproducible.
 */
class StochasticPrivacyTest {
    static final double Z = 4.5;
    /** Buckets whose smaller count is below this carry too little mass to say anything. */
    static final int MIN_COUNT = 1000;
    static final int N = 200_000;

    /** The empirical loss of one check: the point estimate, and the statistic the test asserts on. */
    record Loss(double pointMax, double lowerBoundMax, int buckets) {
        boolean violates(double epsilon) {
            return lowerBoundMax > epsilon;
        }

        String describe(String what, double epsilon) {
            return String.format(Locale.ROOT, "%s: claimed eps %.3f, empirical max loss %.3f (lower confidence bound %.3f)"
                    + " over %d buckets", what, epsilon, pointMax, lowerBoundMax, buckets);
        }
    }

    static SecureRandom seeded(long seed) {
        return SeededRandom.of(seed);
    }

    // ---- SecureLaplace: addNoise (PEEP, Fisher) and addNoiseScaled (RDP) ----

    @Test
    void secureLaplaceStaysWithinEpsilonAndTheCheckCatchesHalfTheNoise() {
        double eps = 1.0;
        double delta = 1.0;
        SecureLaplace lap = new SecureLaplace(seeded(101));
        Loss ok = laplaceLoss(x -> lap.addNoise(new double[] {x}, delta, eps)[0], delta, delta / eps);
        report(ok.describe("SecureLaplace.addNoise", eps));
        assertTrue(!ok.violates(eps), ok.describe("SecureLaplace.addNoise", eps));
        assertTrue(ok.pointMax() > 0.8 * eps, "neighbours at the sensitivity reach the claimed loss: " + ok.pointMax());
        assertTrue(ok.buckets() >= 10, "only " + ok.buckets() + " buckets had enough mass to judge");

        // Calibrated to 2ε (half the noise), claimed ε: the same check must fail.
        Loss bad = laplaceLoss(x -> lap.addNoise(new double[] {x}, delta, 2 * eps)[0], delta, delta / eps);
        report(bad.describe("negative control, half the noise", eps));
        assertTrue(bad.violates(eps), "the check missed a release that spends 2 eps: " + bad.describe("", eps));
    }

    @Test
    void secureLaplaceScaledStaysWithinEachCoordinatesEpsilon() {
        // RDP's form: coordinate i gets Laplace(b_i) and costs Δ_i / b_i.
        double sensitivity = 0.3;
        double scale = 0.6;
        double eps = sensitivity / scale;
        SecureLaplace lap = new SecureLaplace(seeded(102));
        Loss ok = laplaceLoss(x -> lap.addNoiseScaled(new double[] {x}, new double[] {sensitivity}, new double[] {scale})[0],
                sensitivity, scale);
        report(ok.describe("SecureLaplace.addNoiseScaled", eps));
        assertTrue(!ok.violates(eps), ok.describe("SecureLaplace.addNoiseScaled", eps));
        assertTrue(ok.pointMax() > 0.8 * eps, "tight pair: " + ok.pointMax());
        assertTrue(ok.buckets() >= 10, "only " + ok.buckets() + " buckets had enough mass to judge");

        Loss bad = laplaceLoss(x -> lap.addNoiseScaled(new double[] {x}, new double[] {sensitivity},
                new double[] {scale / 2})[0], sensitivity, scale);
        report(bad.describe("negative control, half the scale", eps));
        assertTrue(bad.violates(eps), "the check missed a release that spends 2 eps: " + bad.describe("", eps));
    }

    /** Histogram of M(0) and M(Δ) over [−5b, Δ + 5b] in b/4 buckets, plus both tails. */
    private static Loss laplaceLoss(java.util.function.DoubleUnaryOperator release, double delta, double b) {
        double[] p = sample(() -> release.applyAsDouble(0.0), N);
        double[] q = sample(() -> release.applyAsDouble(delta), N);
        return loss(p, q, -5 * b, delta + 5 * b, b / 4);
    }

    // ---- PEEP, l1-clip (the agent's default PEEP mode), per released coordinate ----

    @Test
    void peepCoordinateOfTheHardestPairStaysWithinEpsilon() {
        EigenBasis basis = EigenBasis.fit(EigenBasisTest.faces(40, 30, 9), 6, 6, 5);
        double eps = 2.0;
        int k = 2;
        // Faces far out along component k, either side: clipped to ±C on coordinate k alone, the
        // L1 distance 2C the noise is calibrated to, spent on one coordinate.
        double[] far = new double[basis.dimension()];
        far[k] = 50 * basis.l1Radius();
        double[] plus = basis.reconstruct(far);
        far[k] = -far[k];
        double[] minus = basis.reconstruct(far);
        PeepMechanism peep = new PeepMechanism(basis, SensitivityMode.L1_CLIP, eps, new SecureLaplace(seeded(103)));
        assertEquals(eps, peep.epsilonPerFace());
        double b = 2 * basis.l1Radius() / eps;
        Loss ok = mechanismLoss(() -> peep.perturb(minus).vector()[k], () -> peep.perturb(plus).vector()[k],
                basis.l1Radius(), b);
        report(ok.describe("PEEP l1-clip, coordinate " + k, eps));
        assertTrue(!ok.violates(eps), ok.describe("PEEP l1-clip", eps));
        assertTrue(ok.pointMax() > 0.8 * eps, "tight pair: " + ok.pointMax());
        assertTrue(ok.buckets() >= 10, "only " + ok.buckets() + " buckets had enough mass to judge");

        PeepMechanism half = new PeepMechanism(basis, SensitivityMode.L1_CLIP, 2 * eps, new SecureLaplace(seeded(104)));
        Loss bad = mechanismLoss(() -> half.perturb(minus).vector()[k], () -> half.perturb(plus).vector()[k],
                basis.l1Radius(), b);
        report(bad.describe("negative control, PEEP with half the noise", eps));
        assertTrue(bad.violates(eps), "the check missed a PEEP that spends 2 eps: " + bad.describe("", eps));
    }

    // ---- FISHER: a vector mechanism, seen through one released coordinate ----

    @Test
    void fisherCoordinateOfTheHardestPairStaysWithinEpsilon() {
        // Any fitted basis will do: privacy must hold whatever directions the enrolment gave.
        double[][] x = EigenBasisTest.faces(120, 20 * 20, 3);
        int[] y = new int[x.length];
        for (int i = 0; i < y.length; i++) {
            y[i] = i % 4;
        }
        FisherBasis basis = FisherBasis.fit(x, y, 4, 20, 20, 12, 3, 0.9);
        double eps = 2.0;
        int k = 0;
        double r = basis.l1Radius();
        double[] plus = fisherFace(basis, k, 50 * r);
        double[] minus = fisherFace(basis, k, -50 * r);
        FisherMechanism m = new FisherMechanism(basis, eps, new SecureLaplace(seeded(105)));
        double b = 2 * r / eps;
        Loss ok = mechanismLoss(() -> m.perturb(minus).vector()[k], () -> m.perturb(plus).vector()[k], r, b);
        report(ok.describe("FISHER, coordinate " + k, eps));
        assertTrue(!ok.violates(eps), ok.describe("FISHER", eps));
        assertTrue(ok.pointMax() > 0.8 * eps, "tight pair: " + ok.pointMax());
        assertTrue(ok.buckets() >= 10, "only " + ok.buckets() + " buckets had enough mass to judge");

        FisherMechanism half = new FisherMechanism(basis, 2 * eps, new SecureLaplace(seeded(106)));
        Loss bad = mechanismLoss(() -> half.perturb(minus).vector()[k], () -> half.perturb(plus).vector()[k], r, b);
        report(bad.describe("negative control, FISHER with half the noise", eps));
        assertTrue(bad.violates(eps), "the check missed a FISHER release that spends 2 eps: " + bad.describe("", eps));
    }

    /** The release of coordinate k for faces whose clean coordinates are at −c and +c. */
    private static Loss mechanismLoss(DoubleSupplier atMinus, DoubleSupplier atPlus, double c, double b) {
        return loss(sample(atMinus, N), sample(atPlus, N), -c - 5 * b, c + 5 * b, b / 4);
    }

    /**
     * A face whose Fisher coordinates are (0, …, s, …, 0): the least-norm eigen-coordinates x with
     * xW = s·e_k, W read off the basis by projecting unit eigen-coordinates.
     */
    private static double[] fisherFace(FisherBasis basis, int k, double s) {
        EigenBasis eigen = basis.eigen();
        int p = eigen.dimension();
        int kk = basis.dimension();
        double[] origin = basis.project(eigen.reconstruct(new double[p]));
        SimpleMatrix w = new SimpleMatrix(p, kk);
        for (int j = 0; j < p; j++) {
            double[] e = new double[p];
            e[j] = 1;
            double[] z = basis.project(eigen.reconstruct(e));
            for (int c = 0; c < kk; c++) {
                w.set(j, c, z[c] - origin[c]);
            }
        }
        SimpleMatrix target = new SimpleMatrix(kk, 1);
        target.set(k, 0, s);
        SimpleMatrix coords = w.mult(w.transpose().mult(w).invert()).mult(target);
        double[] c = new double[p];
        for (int j = 0; j < p; j++) {
            c[j] = coords.get(j, 0);
        }
        double[] face = eigen.reconstruct(c);
        double[] check = basis.project(face);
        for (int i = 0; i < kk; i++) {
            assertEquals(i == k ? s : 0, check[i], 1e-3 * Math.abs(s), "Fisher coordinate " + i + " of the test face");
        }
        return face;
    }

    // ---- SecureGaussian: μ-GDP through its hypothesis-testing tradeoff ----

    /**
     * μ-GDP means no test can tell M(0) from M(Δ) better than two unit Gaussians μ apart: for every
     * rejection region, type II error β ≥ G_μ(α) = Φ(Φ⁻¹(1 − α) − μ). Threshold tests are the
     * most powerful for Gaussians (Neyman–Pearson), so they probe the curve where it is tight.
     */
    @Test
    void secureGaussianMeetsTheMuGdpTradeoffAndTheCheckCatchesHalfTheNoise() {
        double mu = 1.0;
        double delta = 1.0;
        double sigma = delta / mu;
        SecureGaussian g = new SecureGaussian(seeded(107));
        Tradeoff ok = tradeoff(g, delta, sigma, mu);
        report(ok.describe(mu));
        assertTrue(ok.worstExcess() <= 0, "a threshold test beats the mu-GDP curve: " + ok.describe(mu));
        assertTrue(Math.abs(ok.muHat() - mu) < 0.05, "empirical mu " + ok.muHat());

        // The (ε, δ) the record states follows from μ by conversion; check one point of it too.
        double eps = 1.0;
        double stated = MuGdp.delta(eps, mu);
        assertTrue(ok.deltaHat(eps) <= stated + 0.005, "delta(" + eps + ") " + ok.deltaHat(eps) + " over " + stated);

        Tradeoff bad = tradeoff(g, delta, sigma / 2, mu);
        report("negative control, half the noise: " + bad.describe(mu));
        assertTrue(bad.worstExcess() > 0, "the check missed a release with mu = 2: " + bad.describe(mu));
    }

    record Tradeoff(double worstExcess, double muHat, double[] sortedA, double[] sortedB, double sigma) {
        String describe(double mu) {
            return String.format(Locale.ROOT, "SecureGaussian: claimed mu %.3f, empirical mu %.3f, worst excess of beta below"
                    + " G_mu(alpha) %.4f (must be <= 0)", mu, muHat, worstExcess);
        }

        /** sup over thresholds of P[M(Δ) > t] − e^ε P[M(0) > t]: the histogram's δ(ε), a lower bound of the true one. */
        double deltaHat(double eps) {
            double worst = 0;
            for (double t = -4 * sigma; t <= 5 * sigma; t += 0.02 * sigma) {
                worst = Math.max(worst, EmpiricalTail.fractionAbove(sortedB, t) - Math.exp(eps) * EmpiricalTail.fractionAbove(sortedA, t));
            }
            return worst;
        }
    }

    private static Tradeoff tradeoff(SecureGaussian g, double delta, double sigma, double claimedMu) {
        double[] a = sample(() -> g.addNoise(new double[] {0.0}, new double[] {sigma})[0], N);
        double[] b = sample(() -> g.addNoise(new double[] {delta}, new double[] {sigma})[0], N);
        Arrays.sort(a);
        Arrays.sort(b);
        double worst = Double.NEGATIVE_INFINITY;
        double muHat = 0;
        for (double t = -3 * sigma; t <= delta + 3 * sigma; t += 0.1 * sigma) {
            // Reject "input 0" when the output exceeds t: α = P[M(0) > t], β = P[M(Δ) ≤ t].
            double alpha = EmpiricalTail.fractionAbove(a, t);
            double beta = 1 - EmpiricalTail.fractionAbove(b, t);
            if (alpha * N < MIN_COUNT || beta * N < MIN_COUNT || (1 - alpha) * N < MIN_COUNT || (1 - beta) * N < MIN_COUNT) {
                continue;
            }
            // A violation must survive the most favourable ends of both intervals: β as large and α
            // as large (G_μ falls with α) as the data allow.
            double alphaHi = wilson(alpha, N, +Z);
            double betaHi = wilson(beta, N, +Z);
            double bound = MuGdp.normalCdf(inverseNormal(1 - alphaHi) - claimedMu);
            worst = Math.max(worst, bound - betaHi);
            if (alpha > 0.01 && beta > 0.01 && alpha < 0.99 && beta < 0.99) {
                muHat = Math.max(muHat, inverseNormal(1 - alpha) - inverseNormal(beta));
            }
        }
        return new Tradeoff(worst, muHat, a, b, sigma);
    }

    // ---- shared machinery ----

    private static double[] sample(DoubleSupplier release, int n) {
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            out[i] = release.getAsDouble();
        }
        return out;
    }

    /**
     * The largest loss over buckets with enough mass, both directions: the point estimate
     * ln(p̂/q̂), and its lower confidence bound ln(p_lo/q_hi) that the test compares with ε.
     */
    static Loss loss(double[] p, double[] q, double lo, double hi, double width) {
        int inner = (int) Math.ceil((hi - lo) / width);
        int buckets = inner + 2;
        long[] hp = histogram(p, lo, width, inner);
        long[] hq = histogram(q, lo, width, inner);
        double point = 0;
        double lower = Double.NEGATIVE_INFINITY;
        int used = 0;
        for (int i = 0; i < buckets; i++) {
            if (Math.min(hp[i], hq[i]) < MIN_COUNT) {
                continue;
            }
            used++;
            double ph = (double) hp[i] / p.length;
            double qh = (double) hq[i] / q.length;
            point = Math.max(point, Math.abs(Math.log(ph / qh)));
            lower = Math.max(lower, Math.log(wilson(ph, p.length, -Z) / wilson(qh, q.length, +Z)));
            lower = Math.max(lower, Math.log(wilson(qh, q.length, -Z) / wilson(ph, p.length, +Z)));
        }
        return new Loss(point, lower, used);
    }

    /** Bucket 0 is everything below lo, bucket inner + 1 everything from lo + inner·width up. */
    private static long[] histogram(double[] xs, double lo, double width, int inner) {
        long[] h = new long[inner + 2];
        for (double x : xs) {
            double u = (x - lo) / width;
            int i = u < 0 ? 0 : u >= inner ? inner + 1 : 1 + (int) u;
            h[i]++;
        }
        return h;
    }

    /** The Wilson score interval's end for a proportion p̂ of n at z (negative z: lower end). */
    static double wilson(double p, int n, double z) {
        double z2 = z * z;
        double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
        double half = Math.abs(z) * Math.sqrt(p * (1 - p) / n + z2 / (4.0 * n * n)) / (1 + z2 / n);
        return Math.min(1, Math.max(0, centre + Math.signum(z) * half));
    }

    /** Φ⁻¹ by bisection on {@link MuGdp#normalCdf}: 200 halvings of [−40, 40] reach double precision. */
    static double inverseNormal(double u) {
        if (u <= 0) {
            return Double.NEGATIVE_INFINITY;
        }
        if (u >= 1) {
            return Double.POSITIVE_INFINITY;
        }
        double lo = -40;
        double hi = 40;
        for (int i = 0; i < 200 && hi - lo > 1e-15 * Math.max(1, Math.abs(lo)); i++) {
            double mid = 0.5 * (lo + hi);
            if (MuGdp.normalCdf(mid) < u) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return 0.5 * (lo + hi);
    }

    private static void report(String line) {
        System.out.println("[stochastic-dp] " + line);
    }
}
