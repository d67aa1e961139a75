package org.privface.recognizer.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The ε advisor reads the answer evaluation's table bundled at build time (docs/results/deep-answer.csv). */
class AnswerAdviceTest {
    private final TradeoffCurves curves = new TradeoffCurves();

    @Test
    void picksTheEvaluatedGallerySizeNearestTheSitesAndAveragesItsSeeds() {
        TradeoffCurves.AnswerAdvice a = curves.forAnswer(14, "wilson", "dlib").orElseThrow();
        assertEquals("dlib", a.network());
        assertEquals("wilson", a.rule());
        assertEquals(5, a.people(), "14 is nearer 5 than 40 by ratio");
        assertTrue(a.points().size() >= 3);
        for (int i = 1; i < a.points().size(); i++) {
            assertTrue(a.points().get(i).epsilon() > a.points().get(i - 1).epsilon(), "sorted by ε");
        }
        TradeoffCurves.AnswerPoint last = a.points().get(a.points().size() - 1);
        TradeoffCurves.AnswerPoint first = a.points().get(0);
        assertTrue(last.f1() > first.f1(), "more ε, better F1");
        assertTrue(last.seeds() > 1);
        assertEquals(40, curves.forAnswer(30, "wilson", "dlib").orElseThrow().people());
        assertEquals(139, curves.forAnswer(500, null, "unknown-network").orElseThrow().people());
    }
}
