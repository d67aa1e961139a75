package org.privface.privacy.gdp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.privface.privacy.EigenBasis;
import org.privface.privacy.EmpiricalTail;
import org.privface.privacy.Release;

class GaussianMechanismTest {
    private static final int W = 8;
    private static final int H = 6;
    private static final int NC = 6;
    private static final double[][] FACES = faces(80, W * H, 7);
    private static final EigenBasis BASIS = EigenBasis.fit(FACES, NC, W, H);

    /** n faces around a few latent directions of decreasing variance, pixels near 0.5. */
    static double[][] faces(int n, int d, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        double[][] dirs = new double[NC + 1][d];
        for (double[] dir : dirs) {
            for (int j = 0; j < d; j++) {
                dir[j] = r.nextDouble(-1, 1);
            }
        }
        double[][] x = new double[n][d];
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < dirs.length; k++) {
                double a = r.nextGaussian() * (4.0 / (k + 1));
                for (int j = 0; j < d; j++) {
                    x[i][j] += 0.02 * a * dirs[k][j];
                }
            }
            for (int j = 0; j < d; j++) {
                x[i][j] += 0.5 + 0.002 * r.nextGaussian();
            }
        }
        return x;
    }

    @Test
    void releaseHasTheStatedShapeAndCost() {
        double mu = 0.8;
        GaussianMechanism m = new GaussianMechanism(BASIS, mu, 0.0, SecureGaussianTest.seeded(1));
        Release r = m.perturb(FACES[0]);
        assertEquals(NC, r.vector().length);
        assertEquals("GAUSSIAN", r.mechanism());
        assertEquals("gdp", r.mode());
        assertEquals(BASIS.id(), r.basisId());
        assertNull(r.image());
        assertEquals(MuGdp.epsilonFor(mu, MuGdp.DEFAULT_DELTA), r.epsilonPerFace(), 0);
        assertEquals(r.epsilonPerFace(), m.epsilonPerFace(), 0);
        // L2 clip: one coordinate can carry the whole sensitivity, so it can cost the whole ε.
        assertEquals(r.epsilonPerFace(), r.epsilonPerCoordinate(), 1e-15);
        assertEquals(Arrays.stream(m.sigmas()).average().orElseThrow(), r.noiseScale(), 1e-15);
        assertEquals(mu, m.mu(), 0);
        assertEquals(W, m.width());
        assertEquals(H, m.height());
    }

    @Test
    void noiseVariancePerCoordinateIsScaledEigenvalue() {
        double mu = 1.0;
        double phi = 0.5 * BASIS.eigenvalues()[2];
        GaussianMechanism m = new GaussianMechanism(BASIS, mu, phi, SecureGaussianTest.seeded(2));
        double[] lambda = BASIS.eigenvalues();
        double delta = m.sensitivity();
        double[] expectedMean = GaussianMechanism.clip(BASIS.project(FACES[3]), BASIS.l2Radius());
        double[] s = m.shrinkage();
        int n = 20_000;
        double[] sum = new double[NC];
        double[] sumSq = new double[NC];
        for (int i = 0; i < n; i++) {
            double[] v = m.perturb(FACES[3]).vector();
            for (int k = 0; k < NC; k++) {
                sum[k] += v[k];
                sumSq[k] += v[k] * v[k];
            }
        }
        for (int k = 0; k < NC; k++) {
            double mean = sum[k] / n;
            double var = (sumSq[k] - n * mean * mean) / (n - 1);
            double expectedVar = (delta / mu) * (delta / mu) * lambda[k];
            assertEquals(expectedVar, var, expectedVar * 5 * Math.sqrt(2.0 / n), "variance of coordinate " + k);
            assertEquals(s[k] * expectedMean[k], mean, 5 * Math.sqrt(expectedVar / n), "mean of coordinate " + k);
            assertEquals(lambda[k] / (lambda[k] + phi), s[k], 1e-15);
        }
    }

    @Test
    void coordinatesAreClippedToTheFittedL2Ball() {
        double tau = BASIS.l2Radius();
        assertTrue(tau > 0 && tau <= BASIS.l1Radius(), "tau " + tau);
        double[] extreme = new double[W * H];
        Arrays.fill(extreme, 50.0);
        double[] c = BASIS.project(extreme);
        assertTrue(norm(c) > tau, "the test face must lie outside the ball");
        double[] clipped = GaussianMechanism.clip(c, tau);
        assertTrue(norm(clipped) <= tau, "clipped norm " + norm(clipped));
        for (int k = 0; k < NC; k++) {
            assertEquals(c[k] / norm(c), clipped[k] / norm(clipped), 1e-12, "clipping keeps the direction");
        }
        double[] inside = GaussianMechanism.clip(new double[] {tau / 4, 0, 0, 0, 0, 0}, tau);
        assertArrayEquals(new double[] {tau / 4, 0, 0, 0, 0, 0}, inside, 0, "points inside the ball are untouched");

        // The released mean of the outlier is S·clip(c), not S·c.
        GaussianMechanism m = new GaussianMechanism(BASIS, 4.0, 0.0, SecureGaussianTest.seeded(3));
        int n = 4000;
        double[] mean = new double[NC];
        for (int i = 0; i < n; i++) {
            double[] v = m.perturb(extreme).vector();
            for (int k = 0; k < NC; k++) {
                mean[k] += v[k] / n;
            }
        }
        double[] sigmas = m.sigmas();
        for (int k = 0; k < NC; k++) {
            assertEquals(clipped[k], mean[k], 5 * sigmas[k] / Math.sqrt(n), "coordinate " + k);
        }
    }

    /**
     * Δ = 2τ·max √λ_i/(λ_i + φ) is the supremum of ‖C^{-1/2}S(c − c′)‖ over the τ-ball: no pair
     * exceeds it, the antipodal pair on the heaviest axis attains it, and a random search climbs to it.
     */
    @Test
    void sensitivityIsTheSupremumOverClippedPairs() {
        double[] lambda = BASIS.eigenvalues();
        double tau = BASIS.l2Radius();
        // φ = 0 puts the maximum on the smallest eigenvalue; φ = λ_2 puts it inside the spectrum.
        for (double phi : new double[] {0.0, lambda[2]}) {
            double delta = GaussianMechanism.sensitivity(lambda, phi, tau);
            double[] w = new double[NC];
            int best = 0;
            for (int k = 0; k < NC; k++) {
                w[k] = Math.sqrt(lambda[k]) / (lambda[k] + phi);
                best = w[k] > w[best] ? k : best;
            }
            double[] e = new double[NC];
            e[best] = tau;
            double[] minusE = e.clone();
            minusE[best] = -tau;
            assertEquals(delta, weightedDistance(w, e, minusE), delta * 1e-15, "the antipodal pair attains it");

            SplittableRandom r = new SplittableRandom(11);
            double seen = 0;
            double[] c = randomInBall(r, tau);
            double[] cp = randomInBall(r, tau);
            for (int i = 0; i < 200_000; i++) {
                double[] a = randomInBall(r, tau);
                double[] b = randomInBall(r, tau);
                double d = weightedDistance(w, a, b);
                assertTrue(d <= delta * (1 + 1e-12), "pair at " + d + " exceeds delta " + delta);
                seen = Math.max(seen, d);
                // Hill-climb a second pair: perturb, clip back into the ball, keep if farther apart.
                double[] c2 = GaussianMechanism.clip(jitter(r, c, 0.05 * tau), tau);
                double[] cp2 = GaussianMechanism.clip(jitter(r, cp, 0.05 * tau), tau);
                if (weightedDistance(w, c2, cp2) > weightedDistance(w, c, cp)) {
                    c = c2;
                    cp = cp2;
                }
            }
            double climbed = weightedDistance(w, c, cp);
            assertTrue(climbed <= delta * (1 + 1e-12));
            assertTrue(climbed > 0.999 * delta, "the search reached only " + climbed / delta + " of delta");
            assertTrue(seen > 0.5 * delta, "random pairs reached only " + seen / delta + " of delta");
        }
    }

    /**
     * End to end: two faces at opposite ends of the heaviest axis are the hardest pair to protect;
     * their released coordinate along that axis must respect the μ-GDP curve (threshold events),
     * and the same samples must violate the curve of a smaller μ the mechanism does not meet.
     */
    @Test
    void theHardestPairOfFacesStaysWithinTheGdpCurve() {
        double mu = 1.0;
        double[] lambda = BASIS.eigenvalues();
        GaussianMechanism m = new GaussianMechanism(BASIS, mu, 0.0, SecureGaussianTest.seeded(4));
        int j = NC - 1; // φ = 0: the weight 1/√λ is largest on the smallest eigenvalue
        double tau = BASIS.l2Radius();
        double[] plus = new double[NC];
        plus[j] = 0.999 * tau;
        double[] minus = plus.clone();
        minus[j] = -plus[j];
        double[] facePlus = BASIS.reconstruct(plus);
        double[] faceMinus = BASIS.reconstruct(minus);
        int n = 100_000;
        double[] a = new double[n];
        double[] b = new double[n];
        for (int i = 0; i < n; i++) {
            a[i] = m.perturb(faceMinus).vector()[j];
            b[i] = m.perturb(facePlus).vector()[j];
        }
        Arrays.sort(a);
        Arrays.sort(b);
        double sigma = m.sigmas()[j];
        assertEquals(m.sensitivity() / mu * Math.sqrt(lambda[j]), sigma, sigma * 1e-4);
        double within = worst(a, b, sigma, mu);
        assertTrue(within < 5, "an event exceeds the mu-GDP curve by " + within + " standard errors");
        assertTrue(worst(a, b, sigma, 0.8 * mu) > 5, "the check cannot tell mu from 0.8 mu");
    }

    private static double worst(double[] a, double[] b, double sigma, double claimedMu) {
        int n = a.length;
        double lo = a[n / 2] - 4 * sigma;
        double hi = b[n / 2] + 4 * sigma;
        double worst = Double.NEGATIVE_INFINITY;
        for (double eps : new double[] {0.25, 0.5, 1.0, 2.0}) {
            double delta = MuGdp.delta(eps, claimedMu);
            double e = Math.exp(eps);
            for (double t = lo; t <= hi; t += 0.05 * sigma) {
                double pa = EmpiricalTail.fractionAbove(a, t);
                double pb = EmpiricalTail.fractionAbove(b, t);
                double se = Math.sqrt((pb * (1 - pb) + e * e * pa * (1 - pa)) / n) + 1.0 / n;
                worst = Math.max(worst, (pb - e * pa - delta) / se);
                se = Math.sqrt(((1 - pa) * pa + e * e * (1 - pb) * pb) / n) + 1.0 / n;
                worst = Math.max(worst, ((1 - pa) - e * (1 - pb) - delta) / se);
            }
        }
        return worst;
    }

    @Test
    void rejectsBadParameters() {
        SecureGaussian g = SecureGaussianTest.seeded(5);
        assertThrows(IllegalArgumentException.class, () -> new GaussianMechanism(BASIS, 0, 0, g));
        assertThrows(IllegalArgumentException.class, () -> new GaussianMechanism(BASIS, -1, 0, g));
        assertThrows(IllegalArgumentException.class, () -> new GaussianMechanism(BASIS, 1, -0.1, g));
        assertThrows(IllegalArgumentException.class, () -> new GaussianMechanism(BASIS, 1, Double.NaN, g));
        assertThrows(IllegalArgumentException.class, () -> new GaussianMechanism(BASIS, 1e-6, 0, g),
                "a mu the grid alone would use up");
        GaussianMechanism m = new GaussianMechanism(BASIS, 1, 0, g);
        assertThrows(IllegalArgumentException.class, () -> m.perturb(new double[3]));
        assertFalse(m.sensitivity() <= 0);
    }

    private static double weightedDistance(double[] w, double[] a, double[] b) {
        double s = 0;
        for (int k = 0; k < w.length; k++) {
            double d = w[k] * (a[k] - b[k]);
            s += d * d;
        }
        return Math.sqrt(s);
    }

    private static double[] randomInBall(SplittableRandom r, double tau) {
        double[] v = new double[NC];
        for (int k = 0; k < NC; k++) {
            v[k] = r.nextGaussian();
        }
        double scale = tau * Math.pow(r.nextDouble(), 1.0 / NC) / norm(v);
        for (int k = 0; k < NC; k++) {
            v[k] *= scale;
        }
        return v;
    }

    private static double[] jitter(SplittableRandom r, double[] v, double step) {
        double[] out = v.clone();
        for (int k = 0; k < out.length; k++) {
            out[k] += step * r.nextGaussian();
        }
        return out;
    }

    private static double norm(double[] v) {
        double s = 0;
        for (double x : v) {
            s += x * x;
        }
        return Math.sqrt(s);
    }
}
