package org.privface.evaluation.deep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

class VerificationEvaluationTest {
    private static VerificationEvaluation.Pair p(int fold, boolean same, double score) {
        return new VerificationEvaluation.Pair(fold, same, score);
    }

    @Test
    void theBestThresholdSitsBetweenTheClassesAndTiesAreNotSplit() {
        // Different at 0.1, 0.2, 0.5; same at 0.5, 0.7, 0.9: the tie at 0.5 cannot be split, so the
        // best is 5 of 6, reached below 0.5 (accept 0.5) or above it (reject 0.5).
        List<VerificationEvaluation.Pair> pairs = List.of(p(0, false, 0.1), p(0, false, 0.2), p(0, false, 0.5),
                p(0, true, 0.5), p(0, true, 0.7), p(0, true, 0.9));
        double t = VerificationEvaluation.bestThreshold(pairs);
        long right = pairs.stream().filter(x -> (x.score() > t) == x.same()).count();
        assertEquals(5, right);
        assertTrue(t != 0.5, "a threshold is never a tied score");
        assertEquals(0.35, VerificationEvaluation.bestThreshold(List.of(p(0, false, 0.2), p(0, true, 0.5))), 1e-12);
    }

    @Test
    void eachFoldIsScoredAtTheThresholdOfTheOthers() {
        // Folds 1–9 separate at 0.5; fold 0 has its classes on the other side of that threshold.
        List<VerificationEvaluation.Pair> pairs = new ArrayList<>();
        for (int f = 1; f < VerificationEvaluation.FOLDS; f++) {
            pairs.add(p(f, true, 0.8));
            pairs.add(p(f, false, 0.2));
        }
        pairs.add(p(0, true, 0.3));
        pairs.add(p(0, false, 0.7));
        VerificationEvaluation.Result r = VerificationEvaluation.evaluate(pairs);
        assertEquals(0.0, r.accuracy()[0]);
        for (int f = 1; f < VerificationEvaluation.FOLDS; f++) {
            assertEquals(1.0, r.accuracy()[f], "fold " + f);
        }
        assertEquals(0.9, r.mean(), 1e-12);
    }
}
