package org.privface.agent.embed;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.DeepModels;
import org.privface.agent.detect.YuNetDetector;
import org.privface.privacy.Release;
import org.privface.privacy.SeededRandom;
import org.privface.privacy.embedding.EmbeddingBasis;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.privacy.embedding.EmbeddingMechanism.Noise;
import org.privface.wire.WireLimits;

/**
 * The embedding release where it meets the agent: the wire's identifier alphabet and real faces
 * through the agent's detector and embedder. The mechanism's own tests are in the privacy module.
 */
class EmbeddingReleaseTest {
    static final EmbeddingBasis BASIS = EmbeddingBasis.bundled(EmbeddingBasis.DEFAULT_MODEL);

    @Test
    void modeAndBasisIdFitTheWireAlphabet() {
        double[] face = new double[512];
        java.util.Arrays.fill(face, 1);
        for (Noise noise : Noise.values()) {
            Release r = EmbeddingMechanism.publicPreset(EmbeddingBasis.DEFAULT_MODEL, noise, 20).perturb(face);
            // The wire carries mode and basis id in its identifier alphabet; anything else is refused at publish time.
            assertTrue(r.mode().matches(WireLimits.ID_PATTERN), r.mode());
            assertTrue(r.basisId().matches(WireLimits.ID_PATTERN), r.basisId());
        }
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
        SecureRandom seeded = SeededRandom.of(20); // the library's test-only seeded generator: reproducible
        EmbeddingMechanism m = new EmbeddingMechanism(BASIS, true, Noise.SIGN_CAP,
                EmbeddingMechanism.Preset.forEpsilon(Noise.SIGN_CAP, 20).k(),
                EmbeddingMechanism.Preset.forEpsilon(Noise.SIGN_CAP, 20).radius(), 20, seeded);
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
