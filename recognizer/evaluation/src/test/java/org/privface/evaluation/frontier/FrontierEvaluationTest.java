package org.privface.evaluation.frontier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.privface.evaluation.Metrics;

/** The frontier harness' own mechanisms and classifiers, on synthetic data. */
class FrontierEvaluationTest {

    @Test
    void randomizedResponseKeepsTheCodeWithProbabilityEToTheEpsilonOverEToTheEpsilonPlusKMinusOne() {
        SecureRandom random = FrontierEvaluation.secureRandom("rr-test");
        int k = 5;
        double eps = 1.0;
        int n = 200_000;
        int[] counts = new int[k];
        for (int i = 0; i < n; i++) {
            counts[FrontierEvaluation.randomizedResponse(2, k, eps, random)]++;
        }
        double keep = Math.exp(eps) / (Math.exp(eps) + k - 1);
        assertEquals(keep, counts[2] / (double) n, 0.005);
        for (int c = 0; c < k; c++) {
            if (c != 2) {
                assertEquals((1 - keep) / (k - 1), counts[c] / (double) n, 0.005);
                // The privacy loss: any two outputs' probabilities differ by at most e^ε.
                assertTrue(counts[2] / (double) counts[c] < Math.exp(eps) * 1.05);
            }
        }
    }

    @Test
    void clippingStaysInsideTheBallAndLeavesShortVectorsAlone() {
        double[][] x = {{3, -4}, {0.1, 0.2}};
        double[][] l2 = FrontierClassifiers.clip(x, 1, false);
        double[][] l1 = FrontierClassifiers.clip(x, 1, true);
        assertTrue(Math.hypot(l2[0][0], l2[0][1]) <= 1);
        assertTrue(Math.abs(l1[0][0]) + Math.abs(l1[0][1]) <= 1);
        assertArrayEquals(x[1], l2[1]);
        assertArrayEquals(x[1], l1[1]);
        assertEquals(2.0, FrontierClassifiers.quantile(new double[] {4, 1, 3, 2}, 0.5));
    }

    @Test
    void fisherDirectionsWhitenTheWithinClassScatterAndLdaSeparatesTheClasses() {
        SplittableRandom r = new SplittableRandom(3);
        int n = 600;
        double[][] x = new double[n][3];
        int[] y = new int[n];
        for (int i = 0; i < n; i++) {
            y[i] = i % 3;
            // Class means differ along the first axis only; the other two axes are large nuisance.
            x[i][0] = 2.0 * y[i] + 0.5 * gaussian(r);
            x[i][1] = 5 * gaussian(r);
            x[i][2] = 5 * gaussian(r);
        }
        double[][] w = FrontierClassifiers.fisherDirections(x, y, 3, 1);
        // The top direction is the first axis, scaled so the within-class sd is 1.
        assertTrue(Math.abs(w[0][0]) > 10 * Math.max(Math.abs(w[1][0]), Math.abs(w[2][0])));
        assertEquals(2.0, Math.abs(w[0][0]), 0.2);
        int[] predicted = FrontierClassifiers.lda(x, y, x, 3);
        assertTrue(Metrics.weighted(y, predicted, 3).accuracy() > 0.9);
    }

    @Test
    void theMajorityClassWinsAnEmptyCodeTable() {
        double[][] fit = {{0}, {0}, {0}};
        int[] y = {1, 1, 0};
        FrontierClassifiers.Released r = new FrontierClassifiers.Released(fit, y, new double[][] {{0}}, 0, 1);
        assertArrayEquals(new int[] {1}, FrontierClassifiers.table(r, 2));
    }

    private static double gaussian(SplittableRandom r) {
        return Math.sqrt(-2 * Math.log(1 - r.nextDouble())) * Math.cos(2 * Math.PI * r.nextDouble());
    }
}
