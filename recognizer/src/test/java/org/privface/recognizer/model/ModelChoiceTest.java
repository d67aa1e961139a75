package org.privface.recognizer.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class ModelChoiceTest {
    /** 6 people, 20 releases each, on noisy unit-ish vectors. */
    private static float[][] x;
    private static int[] y;

    static {
        SplittableRandom r = new SplittableRandom(3);
        x = new float[120][12];
        y = new int[120];
        double[][] centres = new double[6][12];
        for (double[] c : centres) {
            for (int j = 0; j < 12; j++) {
                c[j] = r.nextGaussian();
            }
        }
        for (int i = 0; i < 120; i++) {
            y[i] = i % 6;
            for (int j = 0; j < 12; j++) {
                x[i][j] = (float) (centres[y[i]][j] + 1.2 * r.nextGaussian());
            }
        }
    }

    @Test
    void servesTheBetterModelOnHeldOutEnrollments() {
        ModelChoice c = ModelChoice.measure(x, y, 6, MlpOptions.small().withSeed(1), 5, "best");
        assertEquals(24, c.heldOut(), "every 5th of each person's 20");
        assertFalse(c.forced());
        assertEquals(c.mlpAccuracy() > c.ncmAccuracy() ? ModelChoice.Served.MLP : ModelChoice.Served.NCM, c.served(),
                c.toString());
        assertTrue(c.ncmAccuracy() > 1.0 / 6 && c.mlpAccuracy() > 1.0 / 6, c.toString());
        assertEquals(c.served() == ModelChoice.Served.MLP ? c.mlpAccuracy() : c.ncmAccuracy(), c.servedAccuracy());
    }

    @Test
    void theSettingForcesEitherModelAndTheScoresAreStillMeasured() {
        for (String serve : new String[] {"mlp", "ncm"}) {
            ModelChoice c = ModelChoice.measure(x, y, 6, MlpOptions.small().withSeed(1), 5, serve);
            assertEquals(serve, c.served().wireName());
            assertTrue(c.forced());
            assertFalse(Double.isNaN(c.mlpAccuracy()) || Double.isNaN(c.ncmAccuracy()));
        }
        assertThrows(IllegalArgumentException.class, () -> ModelChoice.measure(x, y, 6, MlpOptions.small(), 5, "svm"));
    }

    @Test
    void nothingHeldOutKeepsTheMlp() {
        ModelChoice c = ModelChoice.measure(x, y, 6, MlpOptions.small().withSeed(1), 1, "best");
        assertEquals(ModelChoice.Served.MLP, c.served());
        assertEquals(0, c.heldOut());
        assertTrue(Double.isNaN(c.servedAccuracy()));
    }
}
