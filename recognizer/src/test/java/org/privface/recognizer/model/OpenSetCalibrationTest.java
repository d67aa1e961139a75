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
    void wilsonBoundsMatchTheScoreFormula() {
        // Issue 40: one interval on a rate across the project (Wilson; it was Clopper–Pearson here, and the
        // reference values changed with it). Values from the score formula evaluated independently (Python):
        // centre (p + z²/2n)/(1 + z²/n), half-width z/(1 + z²/n)·sqrt(p(1−p)/n + z²/4n²).
        var r = new OpenSetCalibration.Rate(10, 1000);
        assertEquals(0.005440754445529249, r.low(), 1e-9);
        assertEquals(0.018309468870314774, r.high(), 1e-9);
        var s = new OpenSetCalibration.Rate(24, 2380);
        assertEquals(0.006785798857215009, s.low(), 1e-9);
        assertEquals(0.01496122573155128, s.high(), 1e-9);
        var none = new OpenSetCalibration.Rate(0, 100);
        assertEquals(0, none.low(), 1e-12);
        assertEquals(0.03699349820698568, none.high(), 1e-9);
        assertEquals(1, new OpenSetCalibration.Rate(100, 100).high());
        assertTrue(r.low() < r.rate() && r.rate() < r.high());
    }
}
