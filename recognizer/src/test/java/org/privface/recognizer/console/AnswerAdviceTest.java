package org.privface.recognizer.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The ε advisor reads the shipped configuration's answer evaluation bundled at build time (docs/results/large-galleries-advice.csv). */
class AnswerAdviceTest {
    private final TradeoffCurves curves = new TradeoffCurves();

    @Test
    void picksTheEvaluatedGallerySizeAndTrackLengthNearestTheSitesAndAveragesItsSeeds() {
        TradeoffCurves.AnswerAdvice a = curves.forAnswer(14, "dlib", 3).orElseThrow();
        assertEquals("dlib", a.network());
        assertEquals("wilson", a.rule());
        assertEquals(5, a.people(), "14 is nearer 5 than 40 by ratio");
        assertEquals(3, a.trackFaces(), "the gateways' answers decode 3 faces");
        assertEquals("2 × ε 20 per enrolled image", a.templates(), "the agent's template releases");
        assertTrue(a.points().size() >= 3);
        for (int i = 1; i < a.points().size(); i++) {
            assertTrue(a.points().get(i).epsilon() > a.points().get(i - 1).epsilon(), "sorted by ε");
        }
        TradeoffCurves.AnswerPoint last = a.points().get(a.points().size() - 1);
        TradeoffCurves.AnswerPoint first = a.points().get(0);
        assertTrue(last.fnir() < first.fnir(), "more ε, fewer misses");
        assertTrue(last.seeds() > 1);
        assertEquals(40, curves.forAnswer(30, "dlib", 3).orElseThrow().people());
        TradeoffCurves.AnswerAdvice big = curves.forAnswer(500, "unknown-network", 3).orElseThrow();
        assertEquals(139, big.people());
        // A site whose gateways answer per face gets the per-face rows, and misses more at ε 10.
        TradeoffCurves.AnswerAdvice perFace = curves.forAnswer(139, "dlib", 1).orElseThrow();
        assertEquals(1, perFace.trackFaces());
        double tracks10 = big.points().stream().filter(p -> p.epsilon() == 10).findFirst().orElseThrow().fnir();
        double faces10 = perFace.points().stream().filter(p -> p.epsilon() == 10).findFirst().orElseThrow().fnir();
        assertTrue(tracks10 < faces10, "3-face tracks " + tracks10 + " against faces " + faces10);
        assertEquals(3, curves.forAnswer(139, "dlib", 5).orElseThrow().trackFaces(), "the longest evaluated, not above 5");
    }
}
