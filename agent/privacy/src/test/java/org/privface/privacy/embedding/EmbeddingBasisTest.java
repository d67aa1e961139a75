package org.privface.privacy.embedding;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.util.Arrays;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class EmbeddingBasisTest {
    /** The committed file's id: changes only when the file is refitted (docs/frontier.md gives the command). */
    static final String BUNDLED_ID = "fr_feature-e03564a54e1fc106";

    @Test
    void bundledBasisLoadsAndItsIdIsTheHashOfItsBytes() throws Exception {
        EmbeddingBasis b = EmbeddingBasis.bundled(EmbeddingBasis.DEFAULT_MODEL);
        assertEquals(512, b.inputDimension());
        assertEquals(64, b.maxDirections());
        assertTrue(b.fittedOn().startsWith("lfw-public"), b.fittedOn());
        byte[] bytes;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("embedding/fr_feature-lfwpublic.bin")) {
            bytes = in.readAllBytes();
        }
        assertEquals("fr_feature-" + EmbeddingBasis.sha256(bytes).substring(0, 16), b.id());
        assertEquals(BUNDLED_ID, b.id(), "the bundled basis changed: refit it on purpose and update this id");
        assertArrayEquals(bytes, b.toBytes(), "writing what was read gives the same bytes, so the same id");
        for (int k = 1; k <= b.maxDirections(); k++) {
            assertTrue(b.l1Radius(k) > 0 && b.l1Radius(k) <= Math.sqrt(k) + 1e-6, "L1 radius of a unit vector, k " + k);
        }
    }

    @Test
    void aMissingModelOrABrokenFileIsAClearError() {
        var e = assertThrows(IllegalArgumentException.class, () -> EmbeddingBasis.bundled("no-such-model"));
        assertTrue(e.getMessage().contains("no public basis"), e.getMessage());
        byte[] good = EmbeddingBasis.bundled(EmbeddingBasis.DEFAULT_MODEL).toBytes();
        assertThrows(IllegalArgumentException.class, () -> EmbeddingBasis.read(Arrays.copyOf(good, good.length - 3)));
        byte[] longer = Arrays.copyOf(good, good.length + 1);
        assertThrows(IllegalArgumentException.class, () -> EmbeddingBasis.read(longer));
        byte[] bad = good.clone();
        bad[0] ^= 1;
        assertThrows(IllegalArgumentException.class, () -> EmbeddingBasis.read(bad));
    }

    @Test
    void aFitSeparatesClassesAndRoundTrips() {
        SplittableRandom r = new SplittableRandom(5);
        int classes = 6;
        int d = 20;
        double[][] centres = new double[classes][d];
        for (double[] c : centres) {
            for (int j = 0; j < d; j++) {
                c[j] = r.nextGaussian();
            }
        }
        double[][] x = new double[120][d];
        int[] y = new int[120];
        for (int i = 0; i < x.length; i++) {
            y[i] = i % classes;
            for (int j = 0; j < d; j++) {
                x[i][j] = centres[y[i]][j] + 0.1 * r.nextGaussian();
            }
        }
        EmbeddingBasis b = EmbeddingBasis.fit("test", "synthetic", x, y, classes, 5);
        EmbeddingBasis again = EmbeddingBasis.read(b.toBytes());
        assertEquals(b.id(), again.id());
        assertArrayEquals(b.project(x[0], 5), again.project(x[0], 5), 0);
        assertThrows(IllegalArgumentException.class, () -> EmbeddingBasis.fit("t", "s", x, y, classes, classes));
        assertThrows(IllegalArgumentException.class, () -> b.project(new double[d + 1], 2));
        double[] nan = x[0].clone();
        nan[3] = Double.NaN;
        assertThrows(IllegalArgumentException.class, () -> b.project(nan, 2));
    }
}
