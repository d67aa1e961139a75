package org.privface.agent.detect;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.opencv.core.Rect;
import org.privface.agent.image.OpenCv;

/** The face a labelled image's label belongs to: the largest and most central. */
class LabelledFaceTest {
    @Test
    void noFaceHasNoLabelAndOneFaceHasIt() {
        OpenCv.load();
        assertEquals(-1, LabelledFace.index(List.of(), 250, 250));
        assertEquals(0, LabelledFace.index(List.of(new Rect(0, 0, 30, 30)), 250, 250));
    }

    @Test
    void aSmallCentralFaceLosesToALargeOneAndOfComparableFacesTheCentralWins() {
        OpenCv.load();
        Rect bigOffCentre = new Rect(150, 10, 90, 90);
        Rect smallCentral = new Rect(110, 110, 30, 30); // a ninth of the big one's area: background
        assertEquals(1, LabelledFace.index(List.of(smallCentral, bigOffCentre), 250, 250));
        Rect central = new Rect(80, 80, 80, 80); // 0.79 of the big one's area, centred
        assertEquals(2, LabelledFace.index(List.of(smallCentral, bigOffCentre, central), 250, 250));
        // LFW's layout: the subject centred, a larger face at the edge is still the labelled one only if the
        // central one is under half its area.
        assertEquals(0, LabelledFace.index(List.of(new Rect(0, 0, 120, 120), new Rect(100, 100, 50, 50)), 250, 250));
    }

    @Test
    void equalDistancesGoToTheLargerBox() {
        OpenCv.load();
        assertEquals(1, LabelledFace.index(List.of(new Rect(100, 100, 50, 50), new Rect(95, 95, 60, 60)), 250, 250));
    }
}
