package org.privface.recognizer.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.SplittableRandom;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.recognizer.RecognizerSettings;

class ModelStoreTest {

    @Test
    void aRestartedRegistryServesTheNewestStoredModel(@TempDir Path dir) throws Exception {
        SplittableRandom r = new SplittableRandom(3);
        float[][] x = new float[60][8];
        int[] y = new int[60];
        for (int i = 0; i < x.length; i++) {
            y[i] = i % 2;
            for (int j = 0; j < 8; j++) {
                x[i][j] = (float) (y[i] * 2 + r.nextGaussian() * 0.3);
            }
        }
        ModelKey key = new ModelKey("s1", "pca-abc", "PEEP");
        MlpModel mlp = new MlpTrainer().train(x, y, 2, MlpOptions.small().withEpochs(5));
        ModelStore store = new ModelStore(dir);
        store.save(new TrainedModel(key, "v20260101T000000000", mlp, List.of("old-a", "old-b"), 60, Instant.EPOCH, 0.5,
                new ModelChoice(ModelChoice.Served.MLP, Double.NaN, Double.NaN, 0, false), null, null));
        store.save(new TrainedModel(key, "v20260102T000000000", mlp, List.of("ann", "bob"), 60, Instant.now(), 0.9,
                new ModelChoice(ModelChoice.Served.MLP, 0.8, 0.7, 12, false), null, null));
        // A half-written version (no metadata) is never loaded.
        Files.createDirectories(dir.resolve("s1/pca-abc/PEEP/v20991231T000000000"));

        RecognizerSettings settings = new RecognizerSettings();
        settings.setModelDir(dir);
        ModelRegistry restarted = new ModelRegistry(settings, new SimpleMeterRegistry(), site -> true);
        try {
            TrainedModel m = restarted.model(key).orElseThrow();
            assertEquals("v20260102T000000000", m.version());
            assertEquals(List.of("ann", "bob"), m.labels());
            assertArrayEquals(mlp.predictProba(x)[0], m.mlp().predictProba(x)[0], 0f);
            assertEquals(2, restarted.history(key).size());
            assertTrue(restarted.history(key).get(0).getProperty("version").endsWith("0102T000000000"));
        } finally {
            restarted.close();
            mlp.close();
        }
    }

    @Test
    void versionsNamingAnErasedPersonAreDeletedAndOldOnesPruned(@TempDir Path dir) throws Exception {
        float[][] x = {{0, 0}, {1, 1}, {0, 0.1f}, {1, 0.9f}};
        int[] y = {0, 1, 0, 1};
        ModelKey key = new ModelKey("s1", "b", "EMBEDDING");
        MlpModel mlp = new MlpTrainer().train(x, y, 2, MlpOptions.small().withEpochs(1));
        ModelStore store = new ModelStore(dir);
        try {
            for (int v = 1; v <= 4; v++) {
                store.save(new TrainedModel(key, "v2026010" + v + "T000000000", mlp, v <= 2 ? List.of("ann", "bob")
                        : List.of("ann", "cid"), 4, Instant.now(), 1, new ModelChoice(ModelChoice.Served.MLP, 1, 1, 2, false),
                        null, null));
            }
            assertEquals(List.of("v20260102T000000000", "v20260101T000000000"), store.deleteVersionsWith(key, List.of("bob")));
            assertEquals(2, store.history(key).size());
            assertTrue(store.history(key).stream().noneMatch(p -> p.getProperty("labels").contains("bob")));
            assertEquals(List.of("v20260103T000000000"), store.prune(key, 1));
            assertEquals("v20260104T000000000", store.history(key).get(0).getProperty("version"));
            try (var s = Files.walk(dir)) {
                assertTrue(s.noneMatch(p -> p.getFileName().toString().startsWith(".deleting-")), "nothing half-deleted left");
            }
        } finally {
            mlp.close();
        }
    }
}
