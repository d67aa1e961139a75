package org.privface.evaluation.deep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.evaluation.EmbeddingCache;
import org.privface.privacy.embedding.EmbeddingBasis;
import org.privface.privacy.embedding.EmbeddingMechanism.Preset;

/** The answer family's harness on small synthetic sets (no data or models needed). */
class DeepAnswerTest {
    static final EmbeddingBasis BASIS = EmbeddingBasis.bundled(EmbeddingBasis.DEFAULT_MODEL);

    @Test
    void galleryDrawsAreDistinctPeopleSplitIntoDisjointParts() {
        EmbeddingCache people = DeepFrontierEvaluationTest.synthetic(12, 6, 0.5, 4);
        int[][] d = DeepAnswer.galleryDraw(people, 5, new SplittableRandom(1));
        assertEquals(5, Arrays.stream(d[2]).distinct().count(), "every gallery person enrols");
        assertEquals(5, Arrays.stream(d[3]).distinct().count(), "every gallery person is queried");
        assertTrue(Arrays.stream(d[0]).noneMatch(i -> Arrays.stream(d[1]).anyMatch(j -> j == i)), "train and test overlap");
        for (int p = 0; p < 2; p++) {
            int part = p;
            // The relabelled person of each face is consistent with the set's own labels.
            for (int i = 0; i < d[part].length; i++) {
                int face = d[part][i];
                int label = d[part + 2][i];
                for (int j = 0; j < d[part].length; j++) {
                    if (d[part + 2][j] == label) {
                        assertEquals(people.labels()[face], people.labels()[d[part][j]]);
                    }
                }
            }
        }
        assertEquals(5, DeepAnswer.selectionGallery(5));
        assertEquals(40, DeepAnswer.selectionGallery(40));
        assertEquals(80, DeepAnswer.selectionGallery(139));
    }

    /**
     * Selection and evaluation end to end on well-separated synthetic people: a preset for every
     * gallery size, every row states an ε at most the target, closed-set F1 near 1 at ε 20, and
     * the open set's measured FPIR stays near its 1 % target.
     */
    @Test
    void selectsPresetsAndEvaluatesTheAnswerRelease(@TempDir Path dir) throws Exception {
        EmbeddingCache selectionPeople = DeepFrontierEvaluationTest.synthetic(10, 6, 0.4, 5);
        EmbeddingCache selectionStrangers = DeepFrontierEvaluationTest.synthetic(300, 1, 0.4, 6);
        EmbeddingCache calibration = DeepFrontierEvaluationTest.synthetic(600, 1, 0.4, 7);
        EmbeddingCache enrolled = DeepFrontierEvaluationTest.synthetic(5, 12, 0.4, 8);
        EmbeddingCache others = DeepFrontierEvaluationTest.synthetic(400, 1, 0.4, 9);
        DeepAnswer.Data d = new DeepAnswer.Data(EmbeddingBasis.DEFAULT_MODEL, selectionPeople, selectionStrangers,
                calibration, BASIS, Map.of("lfw5", enrolled), Map.of("lfw139", others), selectionStrangers);
        DeepAnswer a = new DeepAnswer(1, new double[] {5, 20}, dir);
        List<String> lines = new ArrayList<>();
        Map<String, Preset> chosen = a.select(d, lines);
        for (int g : DeepAnswer.SELECTION_GALLERIES) {
            assertTrue(chosen.containsKey(DeepAnswer.key(20, g)) && chosen.containsKey(DeepAnswer.key(5, g)));
        }
        assertEquals(2 * DeepAnswer.SELECTION_GALLERIES.length, lines.stream().filter(l -> l.endsWith(",true")).count());
        List<DeepAnswer.Row> rows = a.evaluate(d, chosen, List.of("lfw5"));
        assertEquals(2, rows.size());
        for (DeepAnswer.Row r : rows) {
            assertTrue(r.queryEpsilon() <= r.epsilon() && r.enrollEpsilon() <= r.epsilon(), r.csv());
            assertEquals(600, r.calibrationStrangers());
        }
        DeepAnswer.Row at20 = rows.stream().filter(r -> r.epsilon() == 20).findFirst().orElseThrow();
        assertTrue(at20.f1() > 0.95, at20.csv());
        assertTrue(at20.fpir() < 0.04, at20.csv());
        // At ε 5 with 5 people the channel alone names a rejected stranger 5/(e^5 + 5) = 3.3 % of the time.
        DeepAnswer.Row at5 = rows.stream().filter(r -> r.epsilon() == 5).findFirst().orElseThrow();
        assertEquals(Double.POSITIVE_INFINITY, at5.threshold());
        List<String> csv = new ArrayList<>();
        csv.add(DeepAnswer.Row.HEADER);
        rows.forEach(r -> csv.add(r.csv()));
        a.charts().charts(csv, "");
        assertTrue(Files.size(dir.resolve("deep-answer-f1.png")) > 1000);
        // The decoder comparison: every decoder on the public galleries and the set, the same k-RR.
        List<AnswerDecoders.DecoderRow> dec = a.decoderComparison().decoders(d, chosen, List.of("lfw5"), new double[] {20});
        int publicRuns = DeepAnswer.SELECTION_DRAWS[0] + DeepAnswer.SELECTION_DRAWS[1];
        assertEquals((publicRuns + 1) * AnswerDecoders.Decoder.values().length, dec.size());
        for (AnswerDecoders.DecoderRow r : dec) {
            assertTrue(r.set().startsWith("lfw-public/") == Double.isNaN(r.fpir()), r.csv());
        }
        AnswerDecoders.DecoderRow templates = dec.stream().filter(r -> r.set().equals("lfw5")
                && r.decoder() == AnswerDecoders.Decoder.TEMPLATES).findFirst().orElseThrow();
        assertEquals(at20.f1(), templates.f1(), 1e-12, "the template rows repeat the evaluation's releases");
        AnswerDecoders.DecoderRow mlp = dec.stream().filter(r -> r.set().equals("lfw5") && r.decoder() == AnswerDecoders.Decoder.MLP)
                .findFirst().orElseThrow();
        assertTrue(mlp.decoderAccuracy() > 0.9, mlp.csv());
        List<String> decCsv = new ArrayList<>(List.of(AnswerDecoders.DecoderRow.HEADER));
        dec.forEach(r -> decCsv.add(r.csv()));
        a.charts().decoderChart(decCsv, new double[] {20}, "");
        assertTrue(Files.size(dir.resolve("deep-answer-decoders-" + EmbeddingBasis.DEFAULT_MODEL + ".png")) > 1000);
    }

    @Test
    void decodesTheBestScoreAboveTheThreshold() {
        assertEquals(1, AnswerDecoders.best(new double[] {0.2, 0.7, 0.1}, 0.5));
        assertEquals(3, AnswerDecoders.best(new double[] {0.2, 0.7, 0.1}, 0.7), "not above: unknown");
        double[][] s = AnswerDecoders.signs(new double[][] {{0.3, -0.1, 0, -2}});
        assertTrue(Arrays.equals(new double[] {0.5, -0.5, 0.5, -0.5}, s[0]), Arrays.toString(s[0]));
    }
}
