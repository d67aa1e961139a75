package org.privface.privacy.embedding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.privface.privacy.Release;
import org.privface.privacy.SeededRandom;
import org.privface.privacy.embedding.EmbeddingMechanism.Noise;

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
}
