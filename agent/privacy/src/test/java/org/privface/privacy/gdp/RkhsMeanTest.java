package org.privface.privacy.gdp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class RkhsMeanTest {
    private static final int M = 40;
    private static final double PHI = 0.005;

    static double[][] curves(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        double[][] f = new double[n][M + 1];
        for (double[] c : f) {
            double a = r.nextDouble(-1, 1);
            double b = r.nextDouble(-1, 1);
            for (int t = 0; t <= M; t++) {
                double s = 2 * Math.PI * (t % M) / M;
                c[t] = 0.3 + 0.2 * a * Math.cos(s) + 0.2 * b * Math.sin(2 * s);
            }
        }
        return f;
    }

    /** ‖h(D) − h(D′)‖ in the noise's own (Cameron–Martin) norm: what μ-GDP needs to stay ≤ Δ. */
    static double whitened(RkhsMean rkhs, double[][] d, double[][] e) {
        double[] c = rkhs.shrunkCoefficients(d);
        double[] c2 = rkhs.shrunkCoefficients(e);
        double[] lambda = rkhs.eigenvalues();
        double s = 0;
        for (int j = 0; j < c.length; j++) {
            if (lambda[j] > 1e-12) {
                s += (c[j] - c2[j]) * (c[j] - c2[j]) / lambda[j];
            }
        }
        return Math.sqrt(s);
    }

    @Test
    void paperSensitivityIsTwoTauOverNRootPhi() {
        RkhsMean rkhs = new RkhsMean(M, 1, PHI, new SecureGaussian());
        assertEquals(2 * 0.7 / (50 * Math.sqrt(PHI)), rkhs.sensitivity(50, 0.7), 1e-15);
    }

    @Test
    void neighboursNeverMoveTheMeanFurtherThanDeltaAndTheWorstPairComesClose() {
        RkhsMean rkhs = new RkhsMean(M, 1, PHI, new SecureGaussian());
        int n = 30;
        double[][] d = curves(n, 1);
        double tau = 0;
        for (double[] f : d) {
            tau = Math.max(tau, RkhsMean.norm(f));
        }
        double delta = rkhs.sensitivity(n, tau);
        double worst = 0;
        double[] lambda = rkhs.eigenvalues();
        // Adversarial replacements: ±τ·b_j for every eigenfunction, so the bound's maximiser is among them.
        for (int j = 0; j < lambda.length; j++) {
            double[] b = rkhs.basisFunction(j);
            for (int sign : new int[] {-1, 1}) {
                double[][] e = d.clone();
                double[][] e2 = d.clone();
                e[n - 1] = scaled(b, sign * tau);
                e2[n - 1] = scaled(b, -sign * tau);
                double w = whitened(rkhs, e, e2);
                assertTrue(w <= delta * (1 + 1e-9), "pair " + j + " moved " + w + " > " + delta);
                worst = Math.max(worst, w);
            }
        }
        // Tight bound: 2τ max √λ/(λ+φ)/n ≤ τ/(n√φ) = Δ/2. Reaching 0.4Δ shows the test can fail.
        assertTrue(worst > 0.4 * delta, "worst pair " + worst + " vs " + delta);
    }

    @Test
    void noiseHasTheKernelCovarianceAtScaleDeltaOverMu() {
        RkhsMean rkhs = new RkhsMean(M, 1, PHI, new SecureGaussian(new SecureRandom()));
        double[][] d = curves(20, 3);
        double tau = 1;
        double mu = 1;
        double[] smooth = rkhs.smoothMean(d);
        double s = rkhs.sensitivity(d.length, tau) / (mu - SecureGaussian.roundingMu(M + 1));
        double traceOverPoints = 0;
        for (double l : rkhs.eigenvalues()) {
            traceOverPoints += l;
        }
        int reps = 2000;
        double mse = 0;
        for (int r = 0; r < reps; r++) {
            double[] x = rkhs.release(d, tau, mu);
            for (int t = 0; t <= M; t++) {
                mse += (x[t] - smooth[t]) * (x[t] - smooth[t]) / ((M + 1.0) * reps);
            }
        }
        // E mean_t Z(t)² = Σ_j λ_j (= 1 for a kernel with k(t,t) = 1).
        assertEquals(1.0, traceOverPoints, 1e-9);
        assertEquals(s * s * traceOverPoints, mse, 0.1 * s * s);
    }

    private static double[] scaled(double[] b, double norm) {
        double[] out = new double[b.length];
        double nb = RkhsMean.norm(b);
        for (int t = 0; t < b.length; t++) {
            out[t] = b[t] * norm / nb;
        }
        return out;
    }
}
