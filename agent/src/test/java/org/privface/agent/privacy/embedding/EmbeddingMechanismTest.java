package org.privface.agent.privacy.embedding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.DeepModels;
import org.privface.agent.detect.YuNetDetector;
import org.privface.agent.embed.OnnxEmbedder;
import org.privface.agent.privacy.Release;
import org.privface.agent.privacy.SeededRandom;
import org.privface.agent.privacy.embedding.EmbeddingMechanism.Noise;

class EmbeddingMechanismTest {
    static final EmbeddingBasis BASIS = EmbeddingBasis.bundled(EmbeddingBasis.DEFAULT_MODEL);

    static double[] adversarial(int kind, int d) {
        double[] x = new double[d];
        SplittableRandom r = new SplittableRandom(kind);
        for (int j = 0; j < d; j++) {
            x[j] = switch (kind) {
                case 0 -> 1e300 * (j % 2 == 0 ? 1 : -1);
                case 1 -> Double.MIN_VALUE;
                case 2 -> 0;
                case 3 -> -Double.MAX_VALUE / d;
                default -> r.nextGaussian() * 1e6;
            };
        }
        return x;
    }

    @Test
    void clipsHoldForAdversarialEmbeddings() {
        for (int kind = 0; kind < 6; kind++) {
            double[] e = adversarial(kind, 512);
            for (int k : new int[] {1, 8, 64}) {
                EmbeddingMechanism m = new EmbeddingMechanism(BASIS, true, Noise.LAPLACE, k, 0, 10, SeededRandom.of(k));
                double[] u = m.direction(e);
                double l2 = 0;
                for (double v : u) {
                    assertTrue(Double.isFinite(v), "kind " + kind);
                    l2 += v * v;
                }
                assertEquals(1, l2, 1e-9, "the release direction is a unit vector, kind " + kind);
                double[] c = EmbeddingMechanism.clipL1(u, BASIS.l1Radius(k));
                double l1 = 0;
                for (double v : c) {
                    l1 += Math.abs(v);
                }
                assertTrue(l1 <= BASIS.l1Radius(k) * (1 + 1e-12), "L1 clip, kind " + kind + ": " + l1);
            }
        }
        double[] nan = new double[512];
        nan[7] = Double.NaN;
        EmbeddingMechanism m = new EmbeddingMechanism(BASIS, true, Noise.SIGN_CAP, 16, 1, 10, SeededRandom.of(1));
        assertThrows(IllegalArgumentException.class, () -> m.perturb(nan));
        assertThrows(IllegalArgumentException.class, () -> m.perturb(new double[128]));
    }

    @Test
    void signCapReleasesUnitVectorsAndRecordsWhatItSpentAndForWhom() {
        for (Noise noise : Noise.values()) {
            EmbeddingMechanism m = EmbeddingMechanism.publicPreset(EmbeddingBasis.DEFAULT_MODEL, noise, 20);
            Release r = m.perturb(adversarial(4, 512));
            assertEquals("EMBEDDING", r.mechanism());
            assertEquals(BASIS.id() + ".k" + m.k(), r.basisId());
            assertTrue(r.mode().startsWith(noise.wireName) && r.mode().endsWith(".every-face"), r.mode());
            // The wire carries mode and basis id in its identifier alphabet; anything else is refused at publish time.
            assertTrue(r.mode().matches(org.privface.wire.WireLimits.ID_PATTERN), r.mode());
            assertTrue(r.basisId().matches(org.privface.wire.WireLimits.ID_PATTERN), r.basisId());
            assertTrue(r.epsilonPerFace() <= 20 + 1e-12, "never above the policy's ε: " + r.epsilonPerFace());
            assertEquals(noise == Noise.GAUSSIAN ? EmbeddingMechanism.GAUSSIAN_DELTA : 0, r.delta());
            if (noise == Noise.SIGN_CAP) {
                double l2 = 0;
                for (double v : r.vector()) {
                    assertEquals(1 / Math.sqrt(r.vector().length), Math.abs(v), 1e-15);
                    l2 += v * v;
                }
                assertEquals(1, l2, 1e-12);
            }
        }
        EmbeddingMechanism enrolled = new EmbeddingMechanism(BASIS, false, Noise.SIGN_CAP, 16, 1, 10, SeededRandom.of(2));
        assertTrue(enrolled.mode().endsWith("-enrollment.query-faces-only"), enrolled.mode());
    }

    @Test
    void modesParseWithClearErrors() {
        assertEquals(Noise.SIGN_CAP, Noise.parse("sign-cap"));
        assertEquals(Noise.LAPLACE, Noise.parse("lap-l1-enrollment"));
        var e = assertThrows(IllegalArgumentException.class, () -> Noise.parse("privunit-float"));
        assertTrue(e.getMessage().contains("sign-cap"), e.getMessage());
    }

    /**
     * Real faces end to end: YuNet, alignment and fr_feature on 40 images of each lfw5 person,
     * every face released once through the public sign-cap at ε 20, nearest class mean on a 70/30
     * split. The frontier measures 0.96 on all of lfw5 (docs/frontier.md); the floor leaves room
     * for the smaller sample.
     */
    @Test
    void realLfw5EmbeddingsAreRecognisedAtEpsilon20() throws Exception {
        var root = DeepModels.datasetOrSkip("lfw5");
        DeepModels.facepluginOrSkip();
        LabelledFaces faces;
        java.nio.file.Path subset = java.nio.file.Files.createTempDirectory("lfw5-subset");
        try {
            for (var person : java.nio.file.Files.list(root).filter(java.nio.file.Files::isDirectory).sorted().toList()) {
                var dir = java.nio.file.Files.createDirectories(subset.resolve(person.getFileName()));
                for (var img : java.nio.file.Files.list(person).sorted().limit(40).toList()) {
                    java.nio.file.Files.createSymbolicLink(dir.resolve(img.getFileName()), img.toAbsolutePath());
                }
            }
            try (YuNetDetector yunet = DeepModels.yunetOrSkip(); OnnxEmbedder embedder = OnnxEmbedder.fromPackage()) {
                faces = FaceDatasets.embedded(subset, yunet, embedder);
            }
        } finally {
            try (var walk = java.nio.file.Files.walk(subset)) {
                walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        assertTrue(faces.size() >= 190, "YuNet found " + faces.size() + " of 200 faces");
        EmbeddingMechanism m = new EmbeddingMechanism(BASIS, true, Noise.SIGN_CAP,
                EmbeddingMechanism.Preset.forEpsilon(Noise.SIGN_CAP, 20).k(),
                EmbeddingMechanism.Preset.forEpsilon(Noise.SIGN_CAP, 20).radius(), 20, SeededRandom.of(20));
        int classes = faces.names().size();
        double[][] means = new double[classes][];
        List<Integer> test = new ArrayList<>();
        int[] seen = new int[classes];
        double[][] released = new double[faces.size()][];
        for (int i = 0; i < faces.size(); i++) {
            double[] v = released[i] = m.perturb(faces.faces()[i]).vector();
            int c = faces.labels()[i];
            if (seen[c]++ % 10 >= 7) {
                test.add(i);
                continue;
            }
            if (means[c] == null) {
                means[c] = new double[v.length];
            }
            for (int j = 0; j < v.length; j++) {
                means[c][j] += v[j];
            }
        }
        int correct = 0;
        for (int i : test) {
            double[] q = released[i];
            int best = -1;
            double bestScore = Double.NEGATIVE_INFINITY;
            for (int c = 0; c < classes; c++) {
                double s = 0;
                double n = 0;
                for (int j = 0; j < q.length; j++) {
                    s += q[j] * means[c][j];
                    n += means[c][j] * means[c][j];
                }
                s /= Math.sqrt(n);
                if (s > bestScore) {
                    bestScore = s;
                    best = c;
                }
            }
            correct += best == faces.labels()[i] ? 1 : 0;
        }
        double accuracy = correct / (double) test.size();
        assertTrue(accuracy >= 0.8, "accuracy at ε 20: " + accuracy);
    }
}
