package org.privface.agent.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

class StatusCountsTest {
    private static final Instant T0 = Instant.parse("2026-11-26T12:00:00Z");

    private static SecureRandom seeded(long seed) throws Exception {
        SecureRandom r = SecureRandom.getInstance("SHA1PRNG");
        r.setSeed(seed);
        return r;
    }

    @Test
    void eachIncrementIsReleasedOnceAndRepeatedUntilTheNextWindow() throws Exception {
        AtomicLong faces = new AtomicLong();
        StatusCounts c = new StatusCounts(Duration.ofMinutes(1), 1, seeded(1)).count("faces", faces::get);
        Map<String, Long> first = c.published(T0);
        faces.addAndGet(1000);
        assertEquals(first, c.published(T0.plusSeconds(59)), "within a window the totals repeat: no fresh noise");
        long second = c.published(T0.plusSeconds(60)).get("faces");
        assertTrue(Math.abs(second - first.get("faces") - 1000) < 40, "the window's growth, noised: " + second);
        assertEquals(second, c.published(T0.plusSeconds(61)).get("faces"));
        assertEquals(1.0, c.epsilon());
    }

    @Test
    void theNoiseIsTheDiscreteLaplaceOfTheStatedEpsilon() throws Exception {
        // A count that never moves: each window's published change is the noise alone. Its variance
        // under P(k) ∝ exp(−|k|/t) is 2e^{−1/t}/(1 − e^{−1/t})²: 1.842 at t = 1, 7.917 at t = 2.
        for (long t : new long[] {1, 2}) {
            StatusCounts c = new StatusCounts(Duration.ofSeconds(1), t, seeded(7 + t)).count("x", () -> 0);
            int n = 20000;
            long before = c.published(T0).get("x");
            double sum = 0;
            double sq = 0;
            for (int i = 1; i <= n; i++) {
                long now = c.published(T0.plusSeconds(i)).get("x");
                long k = now - before;
                before = now;
                sum += k;
                sq += (double) k * k;
            }
            double q = Math.exp(-1.0 / t);
            double variance = 2 * q / ((1 - q) * (1 - q));
            double mean = sum / n;
            double var = sq / n - mean * mean;
            assertTrue(Math.abs(mean) < 5 * Math.sqrt(variance / n), "mean " + mean);
            assertTrue(Math.abs(var - variance) < 0.06 * variance, "variance " + var + ", expected " + variance);
            assertEquals(1.0 / t, c.epsilon(), 1e-15);
        }
    }

    @Test
    void refusesWhatCannotBeMeant() {
        assertThrows(IllegalArgumentException.class, () -> new StatusCounts(Duration.ZERO, 1, new SecureRandom()));
        assertThrows(IllegalArgumentException.class, () -> new StatusCounts(Duration.ofMinutes(1), 0, new SecureRandom()));
    }
}
