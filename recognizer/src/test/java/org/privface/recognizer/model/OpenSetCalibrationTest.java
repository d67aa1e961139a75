package org.privface.recognizer.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

class OpenSetCalibrationTest {
    @Test
    void needsTwentyOverFpirCalibrationStrangers() {
        assertEquals(2000, OpenSetCalibration.required(0.01));
        assertEquals(400, OpenSetCalibration.required(0.05));
        double[] few = IntStream.range(0, 1999).mapToDouble(i -> i).toArray();
        var e = assertThrows(IllegalArgumentException.class, () -> OpenSetCalibration.threshold(few, 0.01));
        assertTrue(e.getMessage().contains("at least 2000"), e.getMessage());
    }

    @Test
    void thresholdLetsFpirOfTheCalibrationScoresThrough() {
        double[] scores = IntStream.range(0, 2000).mapToDouble(i -> i / 2000.0).toArray();
        double t = OpenSetCalibration.threshold(scores, 0.01);
        // Accept score > t: exactly ⌊0.01 · 2000⌋ = 20 of them.
        assertEquals(20, OpenSetCalibration.Rate.above(scores, t).accepted());
        OpenSetCalibration c = OpenSetCalibration.of(0.01, scores, 700, new double[] {0.999, 0.1, 0.2}, 3);
        assertEquals(1, c.heldOut().accepted());
        assertEquals(3, c.heldOut().total());
    }

    @Test
    void clopperPearsonBoundsMatchTheBetaQuantiles() {
        // Reference values: scipy.stats.beta.ppf(0.025, k, n-k+1) and beta.ppf(0.975, k+1, n-k).
        var r = new OpenSetCalibration.Rate(10, 1000);
        assertEquals(0.004805510691049308, r.low(), 1e-9);
        assertEquals(0.01831324305511245, r.high(), 1e-9);
        var s = new OpenSetCalibration.Rate(24, 2380);
        assertEquals(0.006471415850460805, s.low(), 1e-9);
        assertEquals(0.014967303222192049, s.high(), 1e-9);
        var none = new OpenSetCalibration.Rate(0, 100);
        assertEquals(0, none.low());
        assertEquals(0.03621669264517641, none.high(), 1e-9);
        assertEquals(1, new OpenSetCalibration.Rate(100, 100).high());
    }
}
