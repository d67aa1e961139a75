package org.privface.recognizer.answer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.privacy.embedding.EmbeddingMechanism;

/**
 * One strangers file of raw public embeddings serves every gallery space of its network: each
 * stranger lands where the gateway would project the same face as a query (issue 38); a file in
 * another network's or a fixed space serves nothing else.
 */
class PublicStrangersSpaceTest {
    @Test
    void rawEmbeddingsAreProjectedAsTheGatewayProjectsAQuery(@TempDir Path dir) throws Exception {
        EmbeddingMechanism templates = EmbeddingMechanism.templatePreset("dlib", 20, 5);
        int d = templates.basis().inputDimension();
        java.util.Random seeds = new java.util.Random(5); // test inputs only, not noise
        double[][] raw = new double[50][d];
        for (double[] e : raw) {
            for (int i = 0; i < d; i++) {
                e[i] = seeds.nextGaussian();
            }
        }
        Path file = dir.resolve("strangers.txt");
        new PublicStrangers("lfw-public", PublicStrangers.RAW + "dlib", raw).write(file);
        PublicStrangers read = PublicStrangers.read(file);
        PublicStrangers inSpace = read.inSpace(templates.releaseSpace()).orElseThrow();
        assertEquals(templates.releaseSpace(), inSpace.basisId());
        assertEquals(64, inSpace.directions()[0].length, "dlib's template preset at ε 20 for 5 people is k 64");
        for (int i = 0; i < raw.length; i++) {
            assertArrayEquals(templates.direction(raw[i]), inSpace.directions()[i], 1e-12);
        }
        assertTrue(read.inSpace("fr_feature-e03564a54e1fc106.k64").isEmpty(), "another network's space");
        assertTrue(read.inSpace(templates.basis().id() + ".k999").isEmpty(), "beyond the basis");
        assertTrue(inSpace.inSpace(templates.basis().id() + ".k24").isEmpty(), "a projected file serves its own space only");
    }
}
