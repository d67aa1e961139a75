package org.privface.recognizer.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import org.junit.jupiter.api.Test;

class NoisyCountsTest {
    @Test
    void discreteLaplaceVarianceMatchesTheLawSummedOverItsSupport() {
        for (double t : new double[] {0.5, 1, 3}) {
            double a = Math.exp(-1 / t);
            double norm = 0;
            double second = 0;
            for (int k = -2000; k <= 2000; k++) {
                double p = Math.pow(a, Math.abs(k));
                norm += p;
                second += p * k * k;
            }
            assertEquals(second / norm, NoisyCounts.discreteLaplaceVariance(t), 1e-9);
        }
    }

    @Test
    void aNegativeReleaseReadsAsZeroWithAnIntervalThatCoversIt() {
        Instant start = Instant.parse("2026-11-28T00:00:00Z");
        Map<String, Object> noise = Map.of("epsilonPerCount", 1.0, "window", "PT1M");
        double v = NoisyCounts.statusVariance(noise, start.toString(), start.plus(Duration.ofMinutes(59)));
        assertEquals(60 * NoisyCounts.discreteLaplaceVariance(1), v, 1e-12, "60 windows, each one draw");
        Map<String, Object> m = NoisyCounts.total(-2, v);
        assertEquals(0.0, m.get("estimate"));
        assertEquals(0.0, m.get("low"));
        assertTrue((Double) m.get("high") > 15, "±1.96·sqrt(60·1.84) ≈ ±20 around −2");
    }

    @Test
    void withoutTheGatewaysStartThereIsNoInterval() {
        Map<String, Object> m = NoisyCounts.total(7, NoisyCounts.statusVariance(
                Map.of("epsilonPerCount", 1.0, "window", "PT1M"), null, Instant.now()));
        assertEquals(7.0, m.get("estimate"));
        assertFalse(m.containsKey("low"));
    }

    @Test
    void randomizedResponseEstimatesAreClippedToTheAnswersAndNarrowWithEpsilon() {
        Map<String, Object> wide = NoisyCounts.randomizedResponse(-3.5, 2, 100, 14, 2);
        Map<String, Object> narrow = NoisyCounts.randomizedResponse(-3.5, 2, 100, 14, 20);
        assertEquals(0.0, wide.get("estimate"));
        assertTrue((Double) wide.get("high") - (Double) wide.get("low")
                > (Double) narrow.get("high") - (Double) narrow.get("low"));
        Map<String, Object> over = NoisyCounts.randomizedResponse(104, 100, 100, 14, 5);
        assertEquals(100.0, over.get("estimate"));
        assertEquals(100.0, over.get("high"));
    }
}
