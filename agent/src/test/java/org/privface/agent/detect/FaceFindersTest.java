package org.privface.agent.detect;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Choosing and finding a detector: clear errors, the fresh-machine fallback, pinned hashes. */
class FaceFindersTest {
    private static final FaceFinders.Haar HAAR = new FaceFinders.Haar(FaceDetector.DEFAULT_CASCADE, 1.1, 4, 40);

    @Test
    void haarNeedsNoModelAndAnUnknownNameIsRefused() {
        assertInstanceOf(FaceDetector.class, FaceFinders.create("haar", HAAR, null, null, 0));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FaceFinders.create("retina", HAAR, null, null, 0));
        assertTrue(e.getMessage().contains("[haar, yunet, ultraface]"), e.getMessage());
    }

    @Test
    void aConfiguredYunetPathThatDoesNotExistIsAnErrorNotAFallback(@TempDir Path dir) {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> FaceFinders.create("yunet", HAAR, dir.resolve("nope.onnx").toString(), null, 0));
        assertTrue(e.getMessage().contains("nope.onnx"), e.getMessage());
    }

    @Test
    void withoutYunetTheAgentRunsThePackagedUltraface(@TempDir Path empty) {
        DeepModels.facepluginOrSkip();
        assumeTrue(System.getenv("FACE_MODELS") == null, "FACE_MODELS is set in the environment: cannot point it elsewhere");
        String before = System.getProperty("privface.models");
        System.setProperty("privface.models", empty.toString());
        try {
            assertInstanceOf(UltraFaceDetector.class, FaceFinders.create("yunet", HAAR, null, null, 0));
        } finally {
            if (before == null) {
                System.clearProperty("privface.models");
            } else {
                System.setProperty("privface.models", before);
            }
        }
    }

    @Test
    void aModelWhoseHashIsNotThePinnedOneIsRefused(@TempDir Path dir) throws Exception {
        Path fake = dir.resolve("face_detection_yunet_2023mar.onnx");
        Files.write(fake, new byte[] {1, 2, 3});
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> FaceModels.verify(fake, FaceModels.YUNET_SHA256));
        assertTrue(e.getMessage().contains("SHA-256"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> FaceFinders.create("yunet", HAAR, fake.toString(), null, 0));
    }
}
