package org.privface.privacy.answer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;

import org.junit.jupiter.api.Test;

/** Issue 45's open-set score rules and track directions, against numbers worked by hand. */
class GalleryScoreTest {
    @Test
    void scoreRulesComputeWhatTheyName() {
        double[] cos = {0.2, 0.8, 0.5, 0.1};
        assertEquals(0.8, Gallery.Score.COSINE.of(cos), 1e-12);
        assertEquals(0.3, Gallery.Score.MARGIN.of(cos), 1e-12);
        // mean 0.4; deviations −0.2, 0.4, 0.1, −0.3; variance (0.04 + 0.16 + 0.01 + 0.09)/4 = 0.075.
        assertEquals(0.4 / Math.sqrt(0.075), Gallery.Score.TNORM.of(cos), 1e-12);
        assertEquals(1, Gallery.argmax(cos));
    }

    @Test
    void smallGalleriesFallBackAsDocumented() {
        assertEquals(0.7, Gallery.Score.MARGIN.of(new double[] {0.7}), 1e-12);
        assertEquals(0.7, Gallery.Score.COSINE.of(new double[] {0.7}), 1e-12);
        // C = 2: the best cosine's distance to the mean, unscaled.
        assertEquals(0.2, Gallery.Score.TNORM.of(new double[] {0.3, 0.7}), 1e-12);
        // Equal cosines: sd 0, distance 0.
        assertEquals(0, Gallery.Score.TNORM.of(new double[] {0.5, 0.5, 0.5}), 1e-12);
        assertEquals(0, Gallery.Score.MARGIN.of(new double[] {0.5, 0.5, 0.5}), 1e-12);
        assertThrows(IllegalArgumentException.class, () -> Gallery.Score.COSINE.of(new double[0]));
    }

    @Test
    void aTrackIsTheUnitMeanOfItsFacesUnitDirections() {
        // (2, 0) and (0, 1) are taken as unit vectors first: mean (0.5, 0.5), unit (1, 1)/√2.
        double r2 = 1 / Math.sqrt(2);
        assertArrayEquals(new double[] {r2, r2}, Gallery.trackDirection(new double[][] {{2, 0}, {0, 1}}), 1e-12);
        assertArrayEquals(new double[] {0.6, 0.8}, Gallery.trackDirection(new double[][] {{3, 4}}), 1e-12);
        // Opposite faces cancel: the first axis, as for a template whose releases cancel.
        assertArrayEquals(new double[] {1, 0}, Gallery.trackDirection(new double[][] {{1, 0}, {-1, 0}}), 1e-12);
        assertThrows(IllegalArgumentException.class, () -> Gallery.trackDirection(new double[0][]));
        assertThrows(IllegalArgumentException.class, () -> Gallery.trackDirection(new double[][] {{1, 0}, {1}}));
        assertThrows(IllegalArgumentException.class, () -> Gallery.trackDirection(new double[][] {{Double.NaN, 0}}));
    }

    @Test
    void aTrackIsNamedWhereEachOfItsFacesIsNot() {
        // One person on the first axis, threshold 0.9. Each face has cosine 0.8 (its own deviation
        // off the axis); the track's mean lies on the axis, cosine 1.
        Gallery g = new Gallery(1, "test.k3", List.of("ann", "bob"), new double[][] {{1, 0, 0}, {0, 0, 1}}, 0.9);
        double[][] faces = {{0.8, 0.6, 0}, {0.8, -0.6, 0}};
        assertEquals(2, g.decode(faces[0]));
        assertEquals(2, g.decode(faces[1]));
        assertEquals(0, g.decode(Gallery.trackDirection(faces)));
    }
}
