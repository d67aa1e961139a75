package org.privface.agent.embed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.agent.detect.DeepModels;
import org.privface.agent.detect.FaceModels;

/** dlib's graph written once to a file and loaded from it gives the in-memory graph's descriptors. Skipped without the weights. */
class DlibGraphFileTest {
    @Test
    void writtenOnceThenLoadedWithTheSameDescriptors(@TempDir Path cache) {
        DeepModels.faceapiOrSkip();
        Path manifest = FaceModels.faceapi(FaceModels.DLIB_MANIFEST);
        AtomicInteger reads = new AtomicInteger();
        Path file = DlibResNet.graphFile(cache, FaceModels.DLIB_WEIGHTS_SHA256, () -> {
            reads.incrementAndGet();
            return DlibEmbedder.weights(manifest);
        }).orElseThrow();
        assertTrue(Files.isRegularFile(file));
        Path again = DlibResNet.graphFile(cache, FaceModels.DLIB_WEIGHTS_SHA256, () -> {
            reads.incrementAndGet();
            return DlibEmbedder.weights(manifest);
        }).orElseThrow();
        assertEquals(file, again);
        assertEquals(1, reads.get(), "the weights are read and the graph built only the first time");

        byte[] face = new byte[DlibResNet.SIDE * DlibResNet.SIDE * 3];
        new Random(44).nextBytes(face);
        for (DlibResNet.Runtime r : DlibResNet.Runtime.values()) {
            try (DlibResNet inMemory = new DlibResNet(DlibEmbedder.weights(manifest), r);
                 DlibResNet fromFile = new DlibResNet(file, r)) {
                assertArrayEquals(inMemory.forward(face), fromFile.forward(face), 1e-5f, r.name());
            }
        }
    }

    @Test
    void anUnwritableCacheFallsBackToMemory(@TempDir Path dir) throws Exception {
        Path notADir = Files.writeString(dir.resolve("file"), "x");
        assertTrue(DlibResNet.graphFile(notADir.resolve("sub"), "0123456789abcdef0123", () -> {
            throw new AssertionError("not built when it cannot be written");
        }).isEmpty());
    }
}
