package org.privface.privacy.gdp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.MathContext;

import org.junit.jupiter.api.Test;

class MuGdpTest {

    @Test
    void deltaMatchesTheOracles() {
        assertEquals(0.12693674, MuGdp.delta(1, 1), 1e-8);
        assertEquals(0.00682959, MuGdp.delta(1, 0.5), 1e-8);
    }

    @Test
    void muForMatchesTheOracle() {
        assertEquals(0.26805, MuGdp.muFor(1, 1e-5), 1e-5);
    }

    /** The closed form against its definition: δ(ε) = E_{Y~N(μ,1)}[(1 − e^{ε − L(Y)})⁺], L(y) = μy − μ²/2. */
    @Test
    void deltaAgreesWithTheIntegralOfThePrivacyLoss() {
        for (double mu : new double[] {0.3, 1, 2.5}) {
            for (double eps : new double[] {0, 0.5, 1, 3}) {
                // The integrand is zero below y* = (ε + μ²/2)/μ, where the loss reaches ε, and smooth above.
                int steps = 200_000;
                double lo = (eps + mu * mu / 2) / mu;
                double hi = Math.max(lo, mu) + 12;
                double h = (hi - lo) / steps;
                double sum = 0;
                for (int i = 0; i <= steps; i++) {
                    double y = lo + i * h;
                    double loss = mu * y - mu * mu / 2;
                    double f = Math.max(0, 1 - Math.exp(eps - loss)) * Math.exp(-(y - mu) * (y - mu) / 2) / Math.sqrt(2 * Math.PI);
                    sum += (i == 0 || i == steps ? 0.5 : 1) * f;
                }
                assertEquals(sum * h, MuGdp.delta(eps, mu), 1e-8, "mu " + mu + " eps " + eps);
            }
        }
    }

    @Test
    void deltaAtZeroIsTheTotalVariationAndFallsWithEpsilon() {
        for (double mu : new double[] {0.1, 1, 4}) {
            assertEquals(2 * MuGdp.normalCdf(mu / 2) - 1, MuGdp.delta(0, mu), 1e-15);
            double previous = 1;
            for (double eps = 0; eps < 30; eps += 0.25) {
                double d = MuGdp.delta(eps, mu);
                assertTrue(d <= previous && d >= 0, "delta must fall with epsilon");
                previous = d;
            }
        }
        assertTrue(MuGdp.delta(1, 0.5) < MuGdp.delta(1, 1), "delta must grow with mu");
    }

    /** Far in the tail the textbook form cancels to garbage; δ must keep falling smoothly and stay positive. */
    @Test
    void deltaKeepsItsAccuracyInTheTail() {
        double d20 = MuGdp.delta(20, 1);
        double d21 = MuGdp.delta(21, 1);
        assertTrue(d20 > 0 && d21 > 0 && d21 < d20);
        // Mills' ratio: with a = ε/μ − μ/2 and b = ε/μ + μ/2, δ ≈ φ(a)(1/a − 1/b) = φ(a)·μ/(ab) for large ε.
        double expected = Math.exp(-(20.5 * 20.5 - 19.5 * 19.5) / 2) * (19.5 * 20.5) / (20.5 * 21.5);
        assertEquals(expected, d21 / d20, expected * 0.01);
    }

    @Test
    void epsilonForAndDeltaRoundTrip() {
        for (double mu : new double[] {0.05, 0.1, 0.5, 1, 2, 5, 20}) {
            for (double delta : new double[] {1e-3, 1e-5, 1e-7, 1e-12}) {
                double eps = MuGdp.epsilonFor(mu, delta);
                double back = MuGdp.delta(eps, mu);
                assertTrue(back <= delta, "stated epsilon must never under-cover delta: mu " + mu + " delta " + delta);
                assertEquals(delta, back, delta * 1e-9, "mu " + mu + " delta " + delta);
            }
        }
        assertEquals(0.0, MuGdp.epsilonFor(0.1, 0.5), "delta above delta(0) needs no epsilon");
    }

    @Test
    void muForAndDeltaRoundTrip() {
        for (double eps : new double[] {0.1, 0.5, 1, 3, 10}) {
            for (double delta : new double[] {1e-3, 1e-5, 1e-9}) {
                double mu = MuGdp.muFor(eps, delta);
                double back = MuGdp.delta(eps, mu);
                assertTrue(back <= delta, "eps " + eps + " delta " + delta);
                assertEquals(delta, back, delta * 1e-9, "eps " + eps + " delta " + delta);
                assertEquals(eps, MuGdp.epsilonFor(mu, delta), eps * 1e-9);
            }
        }
    }

    @Test
    void compositionIsTheRootSumOfSquares() {
        assertEquals(0.5, MuGdp.compose(0.3, 0.4), 1e-15);
        double[] hundred = new double[100];
        java.util.Arrays.fill(hundred, 0.1);
        assertEquals(1.0, MuGdp.compose(hundred), 1e-14);
        assertEquals(0.0, MuGdp.compose());
        assertEquals(1e200 * Math.sqrt(2), MuGdp.compose(1e200, 1e200), 1e186, "no overflow");
        assertThrows(IllegalArgumentException.class, () -> MuGdp.compose(0.1, -0.1));
        assertThrows(IllegalArgumentException.class, () -> MuGdp.compose(Double.NaN));
    }

    @Test
    void gaussianMuIsSensitivityOverSigma() {
        assertEquals(0.5, MuGdp.muOfGaussian(2, 4), 0);
        assertThrows(IllegalArgumentException.class, () -> MuGdp.muOfGaussian(0, 1));
        assertThrows(IllegalArgumentException.class, () -> MuGdp.muOfGaussian(1, 0));
    }

    @Test
    void laplaceAndGaussianCombineByBasicComposition() {
        double delta = 1e-5;
        assertEquals(1.5 + MuGdp.epsilonFor(0.8, delta), MuGdp.combinedEpsilon(1.5, 0.8, delta), 0);
        assertEquals(1.5, MuGdp.combinedEpsilon(1.5, 0, delta), 0, "no Gaussian part, no extra epsilon");
        assertEquals(MuGdp.combinedEpsilon(1.5, 0.8, delta), new MuGdp.Mixed(1.5, 0.8).epsilon(delta), 0);
    }

    @Test
    void rejectsBadArguments() {
        assertThrows(IllegalArgumentException.class, () -> MuGdp.delta(-1, 1));
        assertThrows(IllegalArgumentException.class, () -> MuGdp.delta(1, 0));
        assertThrows(IllegalArgumentException.class, () -> MuGdp.epsilonFor(1, 0));
        assertThrows(IllegalArgumentException.class, () -> MuGdp.epsilonFor(1, 1));
        assertThrows(IllegalArgumentException.class, () -> MuGdp.epsilonFor(Double.POSITIVE_INFINITY, 1e-5));
        assertThrows(IllegalArgumentException.class, () -> MuGdp.muFor(0, 1e-5));
        assertThrows(IllegalArgumentException.class, () -> MuGdp.combinedEpsilon(-1, 1, 1e-5));
    }

    @Test
    void erfcHasKnownValues() {
        // Reference values to 17 significant digits (Abramowitz and Stegun; Wolfram).
        assertRelative(0.88753708398171510, MuGdp.erfc(0.1), 1e-15);
        assertRelative(0.47950012218695346, MuGdp.erfc(0.5), 1e-15);
        assertRelative(0.15729920705028513, MuGdp.erfc(1), 1e-15);
        assertRelative(4.6777349810472658e-3, MuGdp.erfc(2), 1e-15);
        assertRelative(2.2090496998585441e-5, MuGdp.erfc(3), 1e-15);
        assertRelative(1.5374597944280349e-12, MuGdp.erfc(5), 1e-15);
        assertRelative(2.0884875837625448e-45, MuGdp.erfc(10), 1e-14);
        assertRelative(1.8427007929497149, MuGdp.erfc(-1), 1e-15);
        assertEquals(1.0, MuGdp.erfc(0), 0);
        assertEquals(0.0, MuGdp.erfc(40), 0);
        assertEquals(2.0, MuGdp.erfc(-40), 0);
        assertRelative(1 / (1e8 * Math.sqrt(Math.PI)), MuGdp.erfcx(1e8), 1e-15);
        assertEquals(0.5, MuGdp.normalCdf(0), 0);
        assertRelative(0.15865525393145705, MuGdp.normalCdf(-1), 1e-15);
    }

    /** erfc on [-3, 3] against the Taylor series of erf in 50-digit decimal arithmetic. */
    @Test
    void erfcMatchesAHighPrecisionSeries() {
        MathContext mc = new MathContext(50);
        BigDecimal twoOverRootPi = BigDecimal.valueOf(2).divide(PI.sqrt(mc), mc);
        double worst = 0;
        for (int i = -300; i <= 300; i++) {
            double x = i / 100.0 + 0.0013;
            BigDecimal bx = new BigDecimal(x);
            BigDecimal x2 = bx.multiply(bx, mc);
            BigDecimal power = bx;
            BigDecimal sum = BigDecimal.ZERO;
            for (int n = 0; n < 400; n++) {
                // term = (-1)^n x^(2n+1) / (n! (2n+1)), with power = (-1)^n x^(2n+1)/n!
                BigDecimal term = power.divide(BigDecimal.valueOf(2L * n + 1), mc);
                sum = sum.add(term, mc);
                if (term.abs().compareTo(new BigDecimal("1e-45")) < 0) {
                    break;
                }
                power = power.multiply(x2, mc).divide(BigDecimal.valueOf(-(n + 1L)), mc);
            }
            double exact = BigDecimal.ONE.subtract(twoOverRootPi.multiply(sum, mc), mc).doubleValue();
            worst = Math.max(worst, Math.abs(MuGdp.erfc(x) - exact) / exact);
        }
        assertTrue(worst < 1e-15, "worst relative error " + worst);
    }

    /** erfcx on [2, 26] against its continued fraction, erfcx(x) = (1/√π)/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))). */
    @Test
    void erfcxMatchesAHighPrecisionContinuedFraction() {
        MathContext mc = new MathContext(40);
        BigDecimal oneOverRootPi = BigDecimal.ONE.divide(PI.sqrt(mc), mc);
        double worst = 0;
        for (double x = 2; x <= 26; x += 0.37) {
            BigDecimal bx = new BigDecimal(x);
            BigDecimal f = bx;
            for (int n = 4000; n >= 1; n--) {
                f = bx.add(BigDecimal.valueOf(n).divide(BigDecimal.valueOf(2).multiply(f, mc), mc), mc);
            }
            double exact = oneOverRootPi.divide(f, mc).doubleValue();
            worst = Math.max(worst, Math.abs(MuGdp.erfcx(x) - exact) / exact);
        }
        assertTrue(worst < 1e-15, "worst relative error " + worst);
    }

    private static final BigDecimal PI = new BigDecimal("3.14159265358979323846264338327950288419716939937510582097494");

    private static void assertRelative(double expected, double actual, double tolerance) {
        assertEquals(expected, actual, Math.abs(expected) * tolerance, "relative");
    }
}
