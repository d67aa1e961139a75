package org.privface.privacy.answer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

class GalleryTest {
    static final double S = 0.5; // ±1/√4: a 4-bit sign release

    /** Two people, sign releases of k = 4: each template is the normalised mean of its releases. */
    static Gallery twoPeople() {
        double[][] releases = {
                {S, S, S, S}, {S, S, S, -S}, // person 0
                {-S, -S, S, S}, {-S, -S, S, S}, {-S, S, S, S}, // person 1
        };
        return Gallery.fromReleases(3, "test-basis.k4", List.of("ann", "bob"), releases, new int[] {0, 0, 1, 1, 1});
    }

    @Test
    void templatesAreTheNormalisedClassMeansOfTheReleases() {
        Gallery g = twoPeople();
        double[][] t = g.templates();
        // Person 0: mean (S, S, S, 0), unit: (1, 1, 1, 0)/√3.
        double r3 = 1 / Math.sqrt(3);
        assertArrayEquals(new double[] {r3, r3, r3, 0}, t[0], 1e-12);
        // Person 1: mean (−S, −S/3, S, S), unit: (−3, −1, 3, 3)/√28.
        double r28 = Math.sqrt(28);
        assertArrayEquals(new double[] {-3 / r28, -1 / r28, 3 / r28, 3 / r28}, t[1], 1e-12);
        assertEquals(2, g.identities());
        assertEquals(4, g.k());
        assertEquals("test-basis.k4", g.basisId());
        t[0][0] = 9; // a copy: the model keeps its own
        assertEquals(r3, g.templates()[0][0], 1e-12);
    }

    @Test
    void decodesToTheClosestTemplateOrUnknownBelowTheThreshold() {
        Gallery closed = twoPeople();
        assertEquals(0, closed.decode(new double[] {1, 1, 1, 0}));
        assertEquals(1, closed.decode(new double[] {-2, -1, 1, 1}));
        // The query's length does not matter: cosine.
        assertEquals(1, closed.decode(new double[] {-20, -10, 10, 10}));
        Gallery open = closed.withThreshold(0.9);
        assertEquals(0, open.decode(new double[] {1, 1, 1, 0})); // cosine 1
        assertEquals(2, open.decode(new double[] {0, 0, 0, 1})); // best cosine 3/√28 ≈ 0.57: unknown (C)
        assertEquals(2, closed.withThreshold(Double.POSITIVE_INFINITY).decode(new double[] {1, 1, 1, 0}));
        assertEquals(3 / Math.sqrt(28), closed.bestScore(new double[] {0, 0, 0, 1}), 1e-12);
    }

    /**
     * 1,000 strangers with known best cosines 0.000, 0.001, … 0.999 (each along a template's
     * axis): at rate 1 % exactly 10 get through, the threshold is the 11th largest score, and the
     * interval is Wilson's for 10/1000.
     */
    @Test
    void calibrationLetsTheAskedShareOfStrangersThrough() {
        Gallery g = new Gallery(1, "b.k2", List.of("a", "b"), new double[][] {{1, 0}, {0, 1}}, Double.NEGATIVE_INFINITY);
        double[][] strangers = new double[1000][];
        for (int i = 0; i < strangers.length; i++) {
            double s = i / 1000.0;
            strangers[i] = new double[] {s, -Math.sqrt(1 - s * s)};
        }
        Gallery.Threshold t = g.calibrate(strangers, 0.01);
        assertEquals(0.989, t.value(), 1e-12);
        assertEquals(10, t.accepted());
        assertEquals(1000, t.strangers());
        assertEquals(0.01, t.rate(), 1e-12);
        assertEquals(0.005441, t.lower(), 1e-6);
        assertEquals(0.018309, t.upper(), 1e-6);
        assertTrue(!t.enoughStrangers(), "1000 < 20/1 %");
        assertEquals(Double.POSITIVE_INFINITY, g.calibrate(strangers, 0).value());
        assertEquals(Double.POSITIVE_INFINITY, g.calibrate(strangers, -0.5).value());
        assertEquals(0, g.calibrate(strangers, -0.5).accepted());
        assertEquals(Double.NEGATIVE_INFINITY, g.calibrate(strangers, 1).value());
        Gallery calibrated = g.withThreshold(t.value());
        long named = java.util.Arrays.stream(strangers).filter(q -> calibrated.decode(q) != 2).count();
        assertEquals(10, named);
    }

    /**
     * 4,000 strangers, 400 people of 10 faces, scores distinct. At rate 1 % the estimate lets 40
     * through, the Wilson bound 27 (its upper end for 28/4000 exceeds 1 %), and the people bound
     * 27 when the top faces belong to different people but only 16 when they come ten to a person
     * (counts worked out independently by brute force over the definition).
     */
    @Test
    void upperBoundsLetFewerStrangersThroughAndPeopleCount() {
        int n = 4000;
        double[] scores = new double[n];
        int[] spread = new int[n];
        int[] clustered = new int[n];
        for (int r = 0; r < n; r++) { // r: rank from the top
            scores[r] = (n - r) / (double) n;
            spread[r] = r % 400;
            clustered[r] = r / 10;
        }
        assertEquals(40, Gallery.threshold(scores, null, 0.01, Gallery.Bound.ESTIMATE).accepted());
        Gallery.Threshold w = Gallery.threshold(scores, null, 0.01, Gallery.Bound.WILSON);
        assertEquals(27, w.accepted());
        assertEquals((n - 27) / (double) n, w.value(), 1e-12);
        assertTrue(w.upper() <= 0.01);
        assertEquals(27, Gallery.threshold(scores, spread, 0.01, Gallery.Bound.PEOPLE).accepted());
        assertEquals(16, Gallery.threshold(scores, clustered, 0.01, Gallery.Bound.PEOPLE).accepted());
        assertEquals(Double.POSITIVE_INFINITY, Gallery.threshold(scores, null, 0, Gallery.Bound.WILSON).value());
        assertEquals(Double.POSITIVE_INFINITY, Gallery.threshold(new double[] {0.5}, null, 0.01, Gallery.Bound.WILSON)
                .value(), "one stranger's Wilson bound is above 1 % even with none named");
        assertThrows(IllegalArgumentException.class, () -> Gallery.threshold(scores, new int[3], 0.01,
                Gallery.Bound.PEOPLE));
    }

    @Test
    void badModelsAndQueriesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new Gallery(1, "b", List.of("a"), new double[][] {{0.5, 0.5}},
                0)); // not unit
        assertThrows(IllegalArgumentException.class, () -> new Gallery(1, "b", List.of("a", "b"), new double[][] {{1, 0}},
                0)); // one template for two labels
        assertThrows(IllegalArgumentException.class, () -> new Gallery(1, "b", List.of("a"), new double[][] {{1, 0}},
                Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> new Gallery(1, "b", List.of("a", "b"),
                new double[][] {{1, 0}, {1}}, 0));
        assertThrows(IllegalArgumentException.class, () -> Gallery.fromReleases(1, "b", List.of("a", "b"),
                new double[][] {{1, 0}}, new int[] {0})); // bob has no release
        assertThrows(IllegalArgumentException.class, () -> Gallery.fromReleases(1, "b", List.of("a"),
                new double[][] {{1, 0}}, new int[] {1}));
        Gallery g = twoPeople();
        assertThrows(IllegalArgumentException.class, () -> g.decode(new double[3]));
        assertThrows(IllegalArgumentException.class, () -> g.decode(new double[] {Double.NaN, 0, 0, 0}));
        assertThrows(IllegalArgumentException.class, () -> g.calibrate(new double[0][], 0.01));
        assertThrows(IllegalArgumentException.class, () -> org.privface.privacy.Proportions.wilson95(3, 2));
    }

    /** Releases that cancel to zero still give a public unit template, not a NaN one. */
    @Test
    void cancellingReleasesGiveAFixedUnitTemplate() {
        Gallery g = Gallery.fromReleases(1, "b", List.of("a"), new double[][] {{S, S}, {-S, -S}}, new int[] {0, 0});
        assertArrayEquals(new double[] {1, 0}, g.templates()[0]);
    }
}
