package org.privface.agent.detect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.opencv.core.Rect;

class NonMaxSuppressionTest {
    private static DetectedFace face(int x, int y, int w, int h, float score) {
        return new DetectedFace(new Rect(x, y, w, h), null, score);
    }

    @Test
    void overlappingBoxesOfOneFaceBecomeTheBestOne() {
        DetectedFace best = face(100, 100, 80, 80, 0.95f);
        List<DetectedFace> kept = NonMaxSuppression.apply(List.of(face(105, 102, 80, 80, 0.90f), best,
                face(95, 98, 84, 84, 0.80f)), 0.3);
        assertEquals(List.of(best), kept);
    }

    @Test
    void aBoxNestedInsideAnotherIsADuplicateEvenAtLowIou() {
        // IoU 0.25, but the small box lies wholly inside the large one: one face, as a cascade reports it twice.
        DetectedFace large = face(100, 100, 100, 100, 1f);
        DetectedFace small = face(125, 125, 50, 50, 1f);
        assertEquals(0.25, NonMaxSuppression.iou(large.box(), small.box()), 1e-9);
        assertEquals(List.of(large), NonMaxSuppression.apply(List.of(small, large), 0.3));
    }

    @Test
    void separateFacesAllSurviveLargestFirst() {
        DetectedFace a = face(0, 0, 40, 40, 0.99f);
        DetectedFace b = face(200, 0, 90, 90, 0.70f);
        DetectedFace c = face(30, 0, 40, 40, 0.80f); // touches a: IoU 10/70 of a side, below 0.3
        assertEquals(List.of(b, a, c), NonMaxSuppression.apply(List.of(a, b, c), 0.3));
    }

    @Test
    void emptyBoxesAreDroppedAndBadThresholdsRefused() {
        assertEquals(List.of(), NonMaxSuppression.apply(List.of(face(5, 5, 0, 10, 1f)), 0.3));
        assertThrows(IllegalArgumentException.class, () -> NonMaxSuppression.apply(List.of(), 0));
        assertThrows(IllegalArgumentException.class, () -> NonMaxSuppression.apply(List.of(), 1.5));
    }
}
