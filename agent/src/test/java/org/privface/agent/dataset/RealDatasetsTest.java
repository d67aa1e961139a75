package org.privface.agent.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.privface.agent.detect.FaceCrops;

/** Loads the shared real-face datasets; skipped, with the reason, where they are not present. */
class RealDatasetsTest {

    private static Path dataset(String name) {
        Path root = FaceDatasets.root().orElse(null);
        assumeTrue(root != null, "FACE_DATASETS not set and ../shared/datasets absent: skipping real-data test");
        Path p = root.resolve(name);
        assumeTrue(Files.isDirectory(p), "dataset " + p + " absent: skipping");
        return p;
    }

    @Test
    void loadsAllOfOrl() throws Exception {
        LabelledFaces orl = FaceDatasets.orl(dataset("orl"));
        assertEquals(400, orl.size());
        assertEquals(40, orl.names().size());
        assertEquals("s1", orl.names().get(0));
        assertEquals("s2", orl.names().get(1), "natural order: s2 before s10");
        assertEquals(FaceCrops.WIDTH * FaceCrops.HEIGHT, orl.faces()[0].length);
        assertTrue(Arrays.stream(orl.faces()[0]).allMatch(v -> v >= 0 && v <= 1));
    }

    @Test
    void loadsLfw5WithTheStandardCrop() throws Exception {
        LabelledFaces lfw = FaceDatasets.lfw(dataset("lfw5"));
        assertEquals(1140, lfw.size());
        assertEquals(5, lfw.names().size());
        long bush = Arrays.stream(lfw.labels()).filter(l -> lfw.names().get(l).equals("George_W_Bush")).count();
        assertEquals(530, bush);
    }
}
