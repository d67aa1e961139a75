package org.privface.privacy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import org.junit.jupiter.api.Test;

class StatusCountsTest {
    private static final Instant T0 = Instant.parse("2026-11-26T12:00:00Z");

    private static SecureRandom seeded(long seed) throws Exception {
        SecureRandom r = SecureRandom.getInstance("SHA1PRNG");
        r.setSeed(seed);
        return r;
    }

    private static StatusCounts counts(long seed) throws Exception {
        return new StatusCounts("person", Duration.ofMinutes(1), Duration.ofDays(1), 1, seeded(seed)).counter("seen")
                .counter("withheld");
    }

    @Test
    void eachIncrementIsReleasedOnceAndRepeatedUntilTheNextWindow() throws Exception {
        StatusCounts c = counts(1);
        Map<String, Long> first = c.published(T0);
        for (int i = 0; i < 1000; i++) {
            c.add("seen", "person-" + i, T0.plusSeconds(1));
        }
        assertEquals(first, c.published(T0.plusSeconds(59)), "within a window the totals repeat: no fresh noise");
        long second = c.published(T0.plusSeconds(60)).get("seen");
        assertTrue(Math.abs(second - first.get("seen") - 1000) < 40, "the window's growth, noised: " + second);
        assertEquals(second, c.published(T0.plusSeconds(61)).get("seen"));
        assertEquals(1.0, c.epsilonPerCount());
    }

    /**
     * Issue 39: one person in view for ten minutes at 10 frames a second moved the per-face counts by
     * 12,000 against noise of ±1.4. Counted per unit, they move each count by at most 1 a day.
     */
    @Test
    void aPersonInViewForMinutesCountsOnceADay() throws Exception {
        StatusCounts c = counts(2);
        int frames = 10 * 60 * 10;
        int counted = 0;
        for (int f = 0; f < frames; f++) {
            Instant at = T0.plusMillis(100L * f);
            counted += c.add("seen", "person-a", at) ? 1 : 0;
            counted += c.add("withheld", "person-a", at) ? 1 : 0;
            c.published(at);
        }
        assertEquals(2, counted, "one person moves each counter once");
        assertEquals(Map.of("seen", 1L, "withheld", 1L), c.exact());
        assertFalse(c.add("seen", "person-a", Instant.parse("2026-11-26T23:59:59Z")), "the same UTC day");
        assertTrue(c.add("seen", "person-a", Instant.parse("2026-11-27T00:00:00Z")), "a new day counts afresh");
        assertFalse(c.add("seen", "person-a", Instant.parse("2026-11-26T23:59:59Z")), "a clock stepped back reopens no day");
        Map<?, ?> noise = (Map<?, ?>) c.section(T0).get("noise");
        assertEquals(4.0, noise.get("epsilonPerUnitPerWindow"), "2 counters, each unit once per period, at most two periods");
        assertEquals(4.0, noise.get("epsilonPerUnitPerDay"), "any 24 hours meets two UTC days");
        assertEquals("person", noise.get("unit"));
    }

    @Test
    void theNoiseIsTheDiscreteLaplaceOfTheStatedEpsilon() throws Exception {
        // A count that never moves: each window's published change is the noise alone. Its variance
        // under P(k) ∝ exp(−|k|/t) is 2e^{−1/t}/(1 − e^{−1/t})²: 1.842 at t = 1, 7.917 at t = 2.
        for (long t : new long[] {1, 2}) {
            StatusCounts c = new StatusCounts("track", Duration.ofSeconds(1), Duration.ofDays(1), t, seeded(7 + t))
                    .counter("x");
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
            assertEquals(1.0 / t, c.epsilonPerCount(), 1e-15);
        }
    }

    @Test
    void refusesWhatCannotBeMeant() {
        SecureRandom r = new SecureRandom();
        assertThrows(IllegalArgumentException.class, () -> new StatusCounts("track", Duration.ZERO, Duration.ofDays(1), 1, r));
        assertThrows(IllegalArgumentException.class, () -> new StatusCounts("track", Duration.ofMinutes(1), Duration.ofDays(1), 0, r));
        assertThrows(IllegalArgumentException.class,
                () -> new StatusCounts("track", Duration.ofMinutes(1), Duration.ofSeconds(1), 1, r));
        assertThrows(IllegalArgumentException.class, () -> new StatusCounts("track").add("nope", "x", Instant.now()));
    }
}
