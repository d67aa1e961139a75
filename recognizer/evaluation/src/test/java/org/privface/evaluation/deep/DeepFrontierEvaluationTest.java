package org.privface.evaluation.deep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.evaluation.EmbeddingCache;
import org.privface.privacy.embedding.EmbeddingBasis;
import org.privface.privacy.embedding.EmbeddingMechanism;

/** The deep frontier harness on a small synthetic set of unit "embeddings" (no data or models needed). */
class DeepFrontierEvaluationTest {
    static EmbeddingCache synthetic(int people, int perPerson, double spread, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        double[][] x = new double[people * perPerson][];
        int[] y = new int[x.length];
        List<String> names = new ArrayList<>();
        List<String> files = new ArrayList<>();
        for (int c = 0; c < people; c++) {
            names.add("p" + c);
            double[] centre = new double[512];
            for (int j = 0; j < 512; j++) {
                centre[j] = r.nextGaussian();
            }
            for (int i = 0; i < perPerson; i++) {
                double[] v = new double[512];
                for (int j = 0; j < 512; j++) {
                    v[j] = centre[j] + spread * r.nextGaussian();
                }
                int n = c * perPerson + i;
                x[n] = EmbeddingMechanism.unit(v);
                y[n] = c;
                files.add(c + "_" + i);
            }
        }
        return new EmbeddingCache(x, y, names, files);
    }

    @Test
    void writesTheFrontierForAnySmallSetAndItsCacheRoundTrips(@TempDir Path dir) throws Exception {
        EmbeddingCache set = synthetic(4, 10, 0.5, 1);
        set.write(dir.resolve("tiny.emb"));
        EmbeddingCache back = EmbeddingCache.read(dir.resolve("tiny.emb"));
        assertEquals(set.people(), back.people());
        assertEquals((float) set.x()[7][3], (float) back.x()[7][3]);
        DeepFrontier e = new DeepFrontier(EmbeddingBasis.bundled(EmbeddingBasis.DEFAULT_MODEL), 1,
                new double[] {10, 50}, dir);
        List<DeepFrontier.Row> rows = e.frontier(Map.of("tiny", set), -1);
        assertTrue(Files.size(dir.resolve("deep-frontier-tiny.png")) > 1000);
        List<String> csv = Files.readAllLines(dir.resolve("deep-frontier-tiny.csv"));
        assertEquals(1 + 1 + 6 * 2, csv.size(), String.join("\n", csv));
        DeepFrontier.Row none = rows.stream().filter(r -> r.family().equals("none")).findFirst().orElseThrow();
        assertEquals(1.0, none.mean(), 1e-9, "well-separated people without privacy");
        assertTrue(rows.stream().filter(r -> r.family().startsWith("enrollment")).allMatch(
                r -> r.guarantee().startsWith("query faces only")), "enrollment-fitted rows say whom ε covers");
        assertTrue(rows.stream().filter(r -> r.family().startsWith("public")).allMatch(
                r -> r.guarantee().startsWith("every face")));
    }

    @Test
    void openSetCalibratesOnTwentyOverFpirStrangersAndMeasuresOnOtherPeople() {
        EmbeddingCache known = synthetic(3, 20, 0.5, 2);
        // 4,200 people with one face each: the odd-numbered 2,100 calibrate (≥ 20/FPIR), independent faces.
        DeepOpenSet.Strangers st = DeepOpenSet.Strangers.of(synthetic(4200, 1, 0.5, 3));
        assertEquals(2100, st.calibrationPeople());
        assertEquals(2100, st.firstFaceOfPerson().length);
        List<DeepOpenSet.Row> rows = DeepOpenSet.models("t", "none", 0, 0, known.x(), known.labels(), known.x(),
                known.labels(), st.calibration(), st.measured(), st, 3);
        assertEquals(2, rows.size());
        assertEquals(1, rows.stream().filter(DeepOpenSet.Row::served).count(), "exactly one model is served");
        for (DeepOpenSet.Row r : rows) {
            var c = r.calibration();
            assertEquals(2100, c.calibration().total());
            assertEquals(2100, c.heldOut().total());
            // ⌊0.01 · 2100⌋ = 21 calibration strangers get through, no more (ties could only lower it).
            assertTrue(c.calibration().accepted() <= 21 && c.calibration().accepted() >= 20, r.csv());
            // Both halves come from one distribution: the held-out rate is near the target (the
            // threshold's own sampling error and the measurement's each have sd ≈ 0.2 points).
            assertEquals(0.01, c.heldOut().rate(), 0.008, r.csv());
            assertTrue(c.heldOut().low() < c.heldOut().rate() && c.heldOut().rate() < c.heldOut().high(), r.csv());
            assertEquals(0.0, r.fnir(), 1e-12, "enrolled faces far above the strangers' scores: " + r.csv());
            assertEquals(DeepOpenSet.Row.HEADER.split(",").length, r.csv().split(",").length);
        }
    }
}
