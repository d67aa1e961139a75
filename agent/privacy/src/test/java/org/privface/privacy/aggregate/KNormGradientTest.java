package org.privface.privacy.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;

class KNormGradientTest {

    // ------------------------------------------------------------ sensitivities (oracles)

    @Test
    void sphereSensitivitiesAtRadiusPiOverEightMatchTheOracle() {
        int n = 1000;
        double r = Math.PI / 8;
        // h(2r, 1) = (π/4)·cot(π/4) = π/4, so Δ_KNG·n = (π/4)(2 − π/4), Δ_Lap·n = 2 − π/4.
        assertEquals(Math.PI / 4, KNormGradient.curvatureTerm(2 * r, 1), 1e-15);
        assertEquals(0.953946, n * KNormGradient.sphereSensitivity(n, r), 1e-6);
        assertEquals(1.214602, n * KNormGradient.riemannianLaplaceSensitivity(n, r), 1e-6);
        assertEquals(Math.PI / 2 - Math.PI * Math.PI / 16, KNormGradient.sphereSensitivity(1, r), 1e-15);
        assertEquals(2 - Math.PI / 4, KNormGradient.riemannianLaplaceSensitivity(1, r), 1e-15);
    }

    @Test
    void curvatureTermTendsToTheFlatCaseAndRefusesLargeBalls() {
        assertEquals(1, KNormGradient.curvatureTerm(1e-6, 1), 1e-12);
        // Flat limit: 2r(2 − 1)/n = 2r/n, the diameter over n.
        assertEquals(2e-4, KNormGradient.sphereSensitivity(1, 1e-4), 1e-11);
        assertThrows(IllegalArgumentException.class, () -> KNormGradient.sphereSensitivity(10, Math.PI / 4));
        assertThrows(IllegalArgumentException.class, () -> KNormGradient.curvatureTerm(1, -1));
    }

    @Test
    void theEuclideanReleaseRefusesAnEpsilonTheRadiusGridWouldEatIntoAndDrawsTailsInversionCannot() {
        KNormGradient k = new KNormGradient(Seeded.secure(11));
        // 4·d·2^-32 > ε: the radius grid's 2dh would exceed the spare half of ε.
        assertThrows(IllegalArgumentException.class, () -> k.release(new double[1000], 1, 1e-7));
        // Exp(1) has no cut tail: a bit string that keeps winning the e^-1 coins gives 40 units,
        // beyond 36.74, the most −ln U can give from a 53-bit U. Bits are read lowest first:
        // 32 zeros (U = 0), 32 more (its acceptance coin, Bernoulli(0) fails: accepted), then 40
        // wins (bit 0 for Bernoulli(1/2), bits 1,0 for uniform{0,1,2} = 1, failing Bernoulli(1/3)),
        // then a loss (bit 1), then V = 0.
        StringBuilder script = new StringBuilder("0".repeat(64));
        script.append("010".repeat(40)).append('1').append("0".repeat(53));
        SecureDraws d = new SecureDraws(new ScriptedRandom(script.toString()));
        assertEquals(40.0, d.exponential(), 1e-6);
    }

    /** Serves the given bits, lowest bit of each byte first, then zeros. */
    static final class ScriptedRandom extends java.security.SecureRandom {
        private final String bits;
        private int next;

        ScriptedRandom(String bits) {
            this.bits = bits;
        }

        @Override
        public void nextBytes(byte[] bytes) {
            if (next > bits.length() + 8192) {
                throw new IllegalStateException("the sampler read far past its script");
            }
            for (int i = 0; i < bytes.length; i++) {
                int v = 0;
                for (int b = 0; b < 8; b++, next++) {
                    if (next < bits.length() && bits.charAt(next) == '1') {
                        v |= 1 << b;
                    }
                }
                bytes[i] = (byte) v;
            }
        }
    }

    /**
     * Not a proof: a random search for sup ‖log_η x − log_η y‖ over η, x, y in B_r(c) on S² stays
     * under n·Δ_KNG, which is why the KNG support is the ball. (Nelder–Mead finds about 0.806.)
     */
    @Test
    void gradientDifferenceOnTheBallStaysUnderTheBound() {
        double r = Math.PI / 8;
        double bound = KNormGradient.sphereSensitivity(1, r);
        Random rnd = new Random(5);
        double[] c = {0, 0, 1};
        double worst = 0;
        for (int i = 0; i < 200_000; i++) {
            double[] eta = boundaryBiased(c, r, rnd);
            double[] x = boundaryBiased(c, r, rnd);
            double[] y = boundaryBiased(c, r, rnd);
            double[] a = Sphere.log(eta, x);
            double[] b = Sphere.log(eta, y);
            double s = 0;
            for (int j = 0; j < 3; j++) {
                s += (a[j] - b[j]) * (a[j] - b[j]);
            }
            worst = Math.max(worst, Math.sqrt(s));
        }
        assertTrue(worst > 2 * r * 0.99, "the search reaches the flat diameter, " + worst);
        assertTrue(worst <= bound, worst + " > " + bound);
    }

    private static double[] boundaryBiased(double[] c, double r, Random rnd) {
        double rho = r * Math.pow(rnd.nextDouble(), 0.2);
        double phi = 2 * Math.PI * rnd.nextDouble();
        return Sphere.exp(c, new double[] {rho * Math.cos(phi), rho * Math.sin(phi), 0});
    }

    // ------------------------------------------------------------ Euclidean K-norm

    @Test
    void noiseHasMeanSquaredNormDTimesDPlusOneSigmaSquared() {
        KNormGradient k = new KNormGradient(Seeded.secure(11));
        for (int d : new int[] {1, 3, 10}) {
            double sigma = 0.7;
            int reps = 40_000;
            double sum = 0;
            double sumSq = 0;
            for (int i = 0; i < reps; i++) {
                double[] z = k.noise(d, sigma);
                double q = Sphere.dot(z, z);
                sum += q;
                sumSq += q * q;
            }
            double mean = sum / reps;
            double se = Math.sqrt((sumSq / reps - mean * mean) / reps);
            double expected = d * (d + 1) * sigma * sigma;
            assertEquals(expected, mean, 4 * se, "d=" + d);
            assertTrue(se < 0.02 * expected);
        }
    }

    @Test
    void releasedNoiseHasTheSameSecondMomentOnTheGrid() {
        KNormGradient k = new KNormGradient(Seeded.secure(12));
        int d = 5;
        double delta = 0.1;
        double eps = 0.5;
        double sigma = KNormGradient.actualScale(delta, eps, d);
        assertEquals(2 * delta / eps, sigma, 1e-4 * sigma);
        double[] value = {0.3, -1.2, 4.0, 0.0, 7.5};
        int reps = 20_000;
        double sum = 0;
        double g = SecureDraws.granularity(2 * delta / eps);
        for (int i = 0; i < reps; i++) {
            double[] out = k.release(value, delta, eps);
            for (int j = 0; j < d; j++) {
                assertEquals(Math.rint(out[j] / g), out[j] / g, "output on the grid");
                sum += (out[j] - value[j]) * (out[j] - value[j]);
            }
        }
        double mean = sum / reps;
        double expected = d * (d + 1) * sigma * sigma;
        assertEquals(expected, mean, 0.04 * expected);
    }

    /** The radius is Gamma(d, σ), i.e. the density ∝ exp(−‖z‖/σ): radial KS test and isotropy. */
    @Test
    void radialDistributionIsGammaAndDirectionsAreIsotropic() {
        KNormGradient k = new KNormGradient(Seeded.secure(13));
        int d = 3;
        double sigma = 2.0;
        int reps = 20_000;
        double[] radii = new double[reps];
        double[] second = new double[d];
        double[] first = new double[d];
        for (int i = 0; i < reps; i++) {
            double[] z = k.noise(d, sigma);
            radii[i] = Sphere.norm(z);
            for (int j = 0; j < d; j++) {
                first[j] += z[j] / radii[i] / reps;
                second[j] += z[j] * z[j] / (radii[i] * radii[i]) / reps;
            }
        }
        Arrays.sort(radii);
        double ks = 0;
        for (int i = 0; i < reps; i++) {
            double x = radii[i] / sigma;
            double cdf = 1 - Math.exp(-x) * (1 + x + x * x / 2); // Gamma(3, 1)
            ks = Math.max(ks, Math.max(Math.abs((i + 1.0) / reps - cdf), Math.abs(cdf - (double) i / reps)));
        }
        assertTrue(ks < 1.95 / Math.sqrt(reps), "KS " + ks);
        // A radial histogram against the Gamma density r^{d-1} e^{-r/σ}.
        int bins = 10;
        double width = 1.5 * sigma;
        int[] counts = new int[bins];
        for (double rr : radii) {
            int b = (int) (rr / width);
            if (b < bins) {
                counts[b]++;
            }
        }
        for (int b = 0; b < bins; b++) {
            double lo = b * width / sigma;
            double hi = (b + 1) * width / sigma;
            double p = gamma3Cdf(hi) - gamma3Cdf(lo);
            double expected = p * reps;
            if (expected > 200) {
                assertEquals(expected, counts[b], 5 * Math.sqrt(expected), "bin " + b);
            }
        }
        for (int j = 0; j < d; j++) {
            assertEquals(0, first[j], 4 / Math.sqrt(3.0 * reps));
            assertEquals(1.0 / d, second[j], 0.01);
        }
    }

    private static double gamma3Cdf(double x) {
        return 1 - Math.exp(-x) * (1 + x + x * x / 2);
    }

    @Test
    void releaseMeanClipsAndCentres() {
        KNormGradient k = new KNormGradient(Seeded.secure(14));
        double[][] data = {{100, 1}, {1, 1}, {1, 1}, {1, 1}};
        double[] centre = {1, 1};
        // Clipped offsets: (99, 0) becomes (1, 0) with τ = 1, plus three zeros: mean offset (0.25, 0).
        double[] sum = new double[2];
        int reps = 4000;
        for (int i = 0; i < reps; i++) {
            double[] out = k.releaseMean(data, centre, 1.0, 1e3);
            sum[0] += out[0] / reps;
            sum[1] += out[1] / reps;
        }
        assertEquals(1.25, sum[0], 1e-3);
        assertEquals(1.0, sum[1], 1e-3);
    }

    // ------------------------------------------------------------ empirical privacy (1-D Laplace case)

    /**
     * Largest |log P_D(bin)/P_D'(bin)| over bins with enough mass in both, for the K-norm release of
     * neighbouring 1-D means at a claimed sensitivity.
     */
    static double empiricalLoss(long seed, double claimedSensitivity, double epsilon) {
        int n = 10;
        double tau = 1.0;
        double[][] d1 = new double[n][1];
        double[][] d2 = new double[n][1];
        d1[0][0] = -tau; // neighbours: one record replaced, means 2τ/n = Δ apart
        d2[0][0] = tau;
        double trueDelta = KNormGradient.meanSensitivity(n, tau);
        double sigma = 2 * trueDelta / epsilon;
        KNormGradient k = new KNormGradient(Seeded.secure(seed));
        int reps = 200_000;
        double width = sigma / 4;
        int bins = 64;
        int[] c1 = new int[bins];
        int[] c2 = new int[bins];
        for (int i = 0; i < reps; i++) {
            double m1 = k.release(new double[] {-tau / n}, claimedSensitivity, epsilon)[0];
            double m2 = k.release(new double[] {tau / n}, claimedSensitivity, epsilon)[0];
            c1[bin(m1, width, bins)]++;
            c2[bin(m2, width, bins)]++;
        }
        // Also through the data path once, to pin the neighbouring means used above.
        assertEquals(-tau / n, k.releaseMean(d1, new double[1], tau, 1e9)[0], 1e-6);
        assertEquals(tau / n, k.releaseMean(d2, new double[1], tau, 1e9)[0], 1e-6);
        double worst = 0;
        for (int b = 0; b < bins; b++) {
            if (c1[b] >= 1000 && c2[b] >= 1000) {
                worst = Math.max(worst, Math.abs(Math.log((double) c1[b] / c2[b])));
            }
        }
        return worst;
    }

    private static int bin(double x, double width, int bins) {
        int b = (int) Math.floor(x / width) + bins / 2;
        return Math.max(0, Math.min(bins - 1, b));
    }

    @Test
    void empiricalPrivacyLossIsWithinEpsilonAndAMiscalibrationIsCaught() {
        double eps = 1.0;
        double tolerance = 0.15;
        double honest = empiricalLoss(21, KNormGradient.meanSensitivity(10, 1.0), eps);
        assertTrue(honest <= eps + tolerance, "honest loss " + honest);
        // The translation-invariant normaliser makes the Euclidean loss ε/2 (see the class comment).
        assertEquals(eps / 2, honest, tolerance, "honest loss " + honest);
        // Claiming a quarter of the true sensitivity gives noise too small by 4: loss 2ε.
        double broken = empiricalLoss(22, KNormGradient.meanSensitivity(10, 1.0) / 4, eps);
        assertTrue(broken > eps + tolerance, "mis-calibration not detected: " + broken);
    }

    // ------------------------------------------------------------ sphere MH

    static double[][] cluster(Random rnd, double[] c, int n, double spread) {
        double[][] x = new double[n][];
        double[] offset = Sphere.tangent(c, Seeded.unit(rnd, c.length));
        double on = Sphere.norm(offset);
        for (int j = 0; j < offset.length; j++) {
            offset[j] *= 0.15 / on; // the cluster sits away from the centre
        }
        double[] mid = Sphere.exp(c, offset);
        for (int i = 0; i < n; i++) {
            x[i] = SphereTest.at(mid, spread * rnd.nextDouble(), rnd);
        }
        return x;
    }

    @Test
    void chainStaysOnTheSphereAndInTheBall() {
        Random rnd = new Random(31);
        double[] c = Seeded.unit(rnd, 6);
        double r = Math.PI / 8;
        double[][] x = cluster(rnd, c, 100, 0.2);
        KNormGradient k = new KNormGradient(Seeded.secure(32));
        for (double eps : new double[] {0.01, 1, 1e4}) {
            for (int i = 0; i < 10; i++) {
                KNormGradient.Chain chain = k.sphereChain(x, c, r, eps);
                assertEquals(1, Sphere.norm(chain.point()), 1e-12);
                assertTrue(Sphere.distance(c, chain.point()) <= r);
                assertEquals(KNormGradient.settings(6, r, KNormGradient.scale(KNormGradient.sphereSensitivity(100, r), eps)).totalSteps(),
                        chain.steps());
                assertTrue(chain.accepted() > chain.steps() / 20, "acceptance " + chain.accepted() + "/" + chain.steps());
            }
        }
    }

    @Test
    void chainConcentratesAtTheFrechetMeanForLargeEpsilonAndSpreadsForSmall() {
        Random rnd = new Random(33);
        int d = 3;
        double[] c = Seeded.unit(rnd, d);
        double r = Math.PI / 8;
        int n = 200;
        double[][] x = cluster(rnd, c, n, 0.2);
        double[] frechet = Sphere.frechetMean(x, c, 500, 1e-15);
        KNormGradient k = new KNormGradient(Seeded.secure(34));
        int reps = 40;
        double tight = 0;
        double loose = 0;
        for (int i = 0; i < reps; i++) {
            tight += Sphere.distance(frechet, k.releaseSphereMean(x, c, r, 1e4)) / reps;
            loose += Sphere.distance(frechet, k.releaseSphereMean(x, c, r, 0.01)) / reps;
        }
        // ε = 1e4: σ = 2Δ/ε ≈ 9.5e-7; near the mode ‖∇F‖ ≈ ρ, so E ρ ≈ mσ = 1.9e-6 (m = 2), not 0:
        // the chain reached the target's own scale rather than freezing at the mode.
        double sigma = KNormGradient.scale(KNormGradient.sphereSensitivity(n, r), 1e4);
        assertTrue(tight < 1e-3, "mean distance at large ε " + tight);
        assertTrue(tight > sigma && tight < 4 * sigma, "mean distance " + tight + " against σ = " + sigma);
        // ε = 0.01: σ ≈ 1 ≫ r, so nearly uniform on the ball around c, while the mean sits 0.15 off it.
        assertTrue(loose > 0.1, "mean distance at small ε " + loose);
    }

    /**
     * On S¹ the KNG target is known in closed form: with angles φ about c, ∇F(φ) = φ − φ̄, so the
     * density is a Laplace(φ̄, σ) truncated to [−r, r]. The MH output must pass a KS test against it.
     */
    @Test
    void chainOnTheCircleMatchesTheTruncatedLaplaceTarget() {
        Random rnd = new Random(35);
        int n = 10;
        double r = Math.PI / 8;
        double[][] x = new double[n][];
        double mean = 0;
        for (int i = 0; i < n; i++) {
            double phi = 0.25 * rnd.nextDouble();
            mean += phi / n;
            x[i] = new double[] {Math.cos(phi), Math.sin(phi)};
        }
        double eps = 1.0;
        double sigma = KNormGradient.scale(KNormGradient.sphereSensitivity(n, r), eps);
        assertTrue(sigma > 0.1 && sigma < 1, "σ " + sigma + " makes the truncation matter");
        KNormGradient k = new KNormGradient(Seeded.secure(36));
        int reps = 1200;
        double[] angles = new double[reps];
        for (int i = 0; i < reps; i++) {
            double[] eta = k.releaseSphereMean(x, new double[] {1, 0}, r, eps);
            angles[i] = Math.atan2(eta[1], eta[0]);
        }
        Arrays.sort(angles);
        // CDF of the truncated Laplace by fine numerical integration.
        int grid = 200_000;
        double[] cdf = new double[grid + 1];
        double h = 2 * r / grid;
        for (int i = 1; i <= grid; i++) {
            double a = -r + (i - 1) * h;
            double b = a + h;
            cdf[i] = cdf[i - 1] + 0.5 * h * (Math.exp(-Math.abs(a - mean) / sigma) + Math.exp(-Math.abs(b - mean) / sigma));
        }
        double ks = 0;
        for (int i = 0; i < reps; i++) {
            int j = (int) Math.min(grid, Math.max(0, Math.round((angles[i] + r) / h)));
            double f = cdf[j] / cdf[grid];
            ks = Math.max(ks, Math.max(Math.abs((i + 1.0) / reps - f), Math.abs(f - (double) i / reps)));
        }
        assertTrue(ks < 1.95 / Math.sqrt(reps), "KS " + ks);
    }

    @Test
    void approximationIsStated() {
        String a = new KNormGradient(Seeded.secure(1)).approximation();
        assertTrue(a.contains("Metropolis-Hastings"));
        assertTrue(a.contains("delta_MH"));
        assertTrue(a.contains("not pure epsilon-DP"));
    }
}
