package org.privface.recognizer.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The console's privacy–utility curves come from the evaluations' CSV files packaged with the recognizer. */
class TradeoffCurvesTest {
    private final TradeoffCurves curves = new TradeoffCurves();

    @Test
    void theDemoDefaultEmbeddingPolicyHasTheDeepFrontiersPublicSignCapCurve() {
        var t = curves.forPolicy("EMBEDDING", "sign-cap").orElseThrow();
        assertEquals("docs/results/deep-frontier-{ds}.csv", t.source());
        assertEquals(2, t.curves().size(), "lfw5 and ORL");
        for (var c : t.curves()) {
            assertEquals("public-sign-cap", c.series());
            assertTrue(c.points().size() >= 5, c.dataset() + ": " + c.points().size() + " points");
            // F1 grows with ε on a real curve.
            double first = c.points().get(0)[1];
            double last = c.points().get(c.points().size() - 1)[1];
            assertTrue(last > first, c.dataset() + ": F1 " + first + " → " + last);
        }
    }

    @Test
    void aRecordsFullModeSelectsTheSameFamily() {
        var t = curves.forPolicy("EMBEDDING", "sign-cap-k24-r0-p0.966575.every-face").orElseThrow();
        assertEquals("public-sign-cap", t.curves().get(0).series());
        assertFalse(curves.forPolicy("EMBEDDING", "no-such-mode").isPresent());
    }
}
