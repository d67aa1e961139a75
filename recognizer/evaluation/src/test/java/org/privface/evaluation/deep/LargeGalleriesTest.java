package org.privface.evaluation.deep;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.privface.evaluation.EmbeddingCache;
import org.privface.privacy.answer.Gallery;
import org.privface.privacy.embedding.EmbeddingBasis;
import org.privface.privacy.embedding.EmbeddingMechanism.Preset;

/** Issue 45's harness on small synthetic sets (no data or models needed). */
class LargeGalleriesTest {
    @Test
    void tracksGroupEachPersonsFacesInOrderAndDropTheRest() {
        double[][] d = {{1, 0}, {0, 1}, {1, 0}, {3, 4}, {0, 1}, {1, 1}, {1, -1}};
        int[] y = {0, 0, 1, 0, 1, 1, 1};
        LargeGalleries.Units t = LargeGalleries.Units.tracks(d, y, 2);
        // Person 0: faces 0, 1, 3, a track of (0, 1) and face 3 left over; person 1: (2, 4) and (5, 6).
        assertArrayEquals(new int[] {0, 1, 1}, t.labels());
        assertEquals(2, t.size());
        assertArrayEquals(Gallery.trackDirection(new double[][] {d[0], d[1]}), t.directions()[0], 1e-12);
        assertArrayEquals(Gallery.trackDirection(new double[][] {d[5], d[6]}), t.directions()[2], 1e-12);
        assertEquals(1, LargeGalleries.Units.faces(d, y).size());
    }

    @Test
    void znormStandardisesTheBestTemplatesCosineByThePublicStrangersCosinesToIt() {
        // Per template: means 0.2 and 0.6, sds 0.1 and 0.1.
        var rule = LargeGalleries.rule("znorm", new double[][] {{0.1, 0.5}, {0.3, 0.7}});
        assertEquals(0.5, rule.applyAsDouble(new double[] {0.4, 0.65}), 1e-12);
        assertEquals(3.0, rule.applyAsDouble(new double[] {0.5, 0.2}), 1e-12);
        assertEquals(0.65, LargeGalleries.rule("cosine", null).applyAsDouble(new double[] {0.4, 0.65}), 1e-12);
    }

    @Test
    void wellSeparatedPeopleAreNamedAndStrangersAreNot() {
        EmbeddingCache people = DeepFrontierEvaluationTest.synthetic(5, 10, 0.3, 11);
        EmbeddingCache calibration = DeepFrontierEvaluationTest.synthetic(100, 6, 0.3, 12);
        EmbeddingCache strangers = DeepFrontierEvaluationTest.synthetic(40, 6, 0.3, 13);
        String net = EmbeddingBasis.DEFAULT_MODEL;
        LargeGalleries.Setup s = new LargeGalleries.Setup(net, "synthetic", people, EmbeddingBasis.bundled(net),
                calibration, "strangers", strangers, "calibration", calibration);
        LargeGalleries l = new LargeGalleries(1, new double[] {20}, List.of("cosine", "znorm"), new int[] {2},
                Map.of(net + "/" + DeepAnswer.key(20, 5), new Preset(48, 6)));
        List<LargeGalleries.Row> rows = l.evaluate(List.of(s));
        assertEquals(4, rows.size(), "faces and 2-face tracks, two rules");
        for (LargeGalleries.Row r : rows) {
            assertTrue(r.decoderAccuracy() > 0.9, r.toString());
            assertTrue(r.fnir() < 0.2, r.toString());
            assertTrue(r.fpir() <= 0.05, r.toString());
            assertEquals(r.size() == 1 ? 15 : 5, r.queries(), "3 test faces a person, one 2-face track each");
        }
    }
}
