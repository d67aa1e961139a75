package org.privface.agent.embed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;

import org.junit.jupiter.api.Test;
import org.privface.agent.detect.DeepModels;

/** dlib's descriptor on real lfw5 faces, after YuNet and UltraFace. Skipped without the models or data. */
class DlibEmbedderTest {
    @Test
    void separatesPeopleAfterYunet() throws IOException {
        DeepModels.faceapiOrSkip();
        try (DlibEmbedder embedder = DlibEmbedder.fromPackage()) {
            assertEquals(128, embedder.dimension());
            OnnxEmbedderTest.separates("yunet", DeepModels.yunetOrSkip(), embedder);
        }
    }

    @Test
    void separatesPeopleAfterUltraface() throws IOException {
        DeepModels.faceapiOrSkip();
        try (DlibEmbedder embedder = DlibEmbedder.fromPackage()) {
            OnnxEmbedderTest.separates("ultraface", DeepModels.ultrafaceOrSkip(), embedder);
        }
    }

    @Test
    void templateIsDlibsMeanShapeInThePaddedChip() {
        // Eyes level and symmetric about the chip's vertical axis of dlib's mean shape (x 0.490127).
        double axis = (0.25 + 0.490127) / 1.5 * 150;
        assertEquals(DlibEmbedder.TEMPLATE[1], DlibEmbedder.TEMPLATE[3], 1e-9);
        assertEquals(axis - DlibEmbedder.TEMPLATE[0], DlibEmbedder.TEMPLATE[2] - axis, 1e-3);
        assertEquals(axis, DlibEmbedder.TEMPLATE[4], 1e-9);
        // The mouth 0.78 of the unpadded face down, as dlib's points 48 and 54.
        assertEquals((0.25 + 0.780233) / 1.5 * 150, DlibEmbedder.TEMPLATE[7], 1e-9);
        assertTrue(DlibEmbedder.TEMPLATE[0] > 40 && DlibEmbedder.TEMPLATE[2] < 110, "eyes inside the chip");
    }
}
