package org.privface.recognizer.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MlpTrainerTest {

    static {
        // One intra-op thread: on a shared 2-core box, PyTorch's spin-waiting OpenMP pool runs
        // 5-10x slower under contention, and these small nets gain nothing from a second thread.
        // Only takes effect if no earlier test in this JVM has loaded the engine.
        for (String p : new String[] {
                "ai.djl.pytorch.num_threads", "ai.djl.pytorch.num_interop_threads"}) {
            if (System.getProperty(p) == null) {
                System.setProperty(p, "1");
            }
        }
    }

    private static final int DIM = 32;
    private static final int CLASSES = 5;

    /** Trained once on the blob problem and shared: training dominates the test time. */
    private static MlpModel blobModel;
    private static Dataset blobTest;
    private static final List<Float> blobLosses = new ArrayList<>();

    record Dataset(float[][] x, int[] y) {}

    @BeforeAll
    static void trainBlobModel() {
        Dataset train = blobs(100, 1);
        blobTest = blobs(60, 2);
        blobModel = new MlpTrainer().train(train.x(), train.y(), CLASSES, MlpOptions.small(),
                (epoch, loss) -> blobLosses.add(loss));
    }

    @AfterAll
    static void closeModel() {
        if (blobModel != null) {
            blobModel.close();
        }
    }

    @Test
    void learnsSeparableBlobs() {
        assertEquals(DIM, blobModel.inputDim());
        assertEquals(CLASSES, blobModel.numClasses());
        assertEquals(MlpOptions.small().epochs(), blobLosses.size());
        assertTrue(blobLosses.get(blobLosses.size() - 1) < blobLosses.get(0),
                "loss should decrease: " + blobLosses);

        double acc = accuracy(blobModel.predict(blobTest.x()), blobTest.y());
        assertTrue(acc >= 0.95, "held-out accuracy " + acc);

        float[][] p = blobModel.predictProba(blobTest.x());
        for (float[] row : p) {
            float sum = 0;
            for (float v : row) {
                assertTrue(v >= 0f && v <= 1f);
                sum += v;
            }
            assertEquals(1f, sum, 1e-4f);
        }
    }

    @Test
    void randomLabelsStayNearChanceOnHeldOutData() {
        SplittableRandom rnd = new SplittableRandom(7);
        Dataset train = noise(500, rnd);
        Dataset test = noise(1000, rnd);
        try (MlpModel m = new MlpTrainer().train(train.x(), train.y(), CLASSES,
                MlpOptions.small().withEpochs(30))) {
            double trainAcc = accuracy(m.predict(train.x()), train.y());
            double testAcc = accuracy(m.predict(test.x()), test.y());
            // It can memorise the noise, but must not generalise it (chance = 0.2, sd ~0.013).
            assertTrue(trainAcc > 0.5, "expected memorisation, train accuracy " + trainAcc);
            assertTrue(testAcc < 0.27, "held-out accuracy on random labels " + testAcc);
        }
    }

    @Test
    void saveLoadRoundTripGivesIdenticalProbabilities(@TempDir Path dir) throws Exception {
        blobModel.save(dir);
        assertTrue(Files.isRegularFile(dir.resolve(MlpModel.METADATA_FILE)));
        try (MlpModel loaded = MlpModel.load(dir)) {
            assertEquals(blobModel.inputDim(), loaded.inputDim());
            assertEquals(blobModel.numClasses(), loaded.numClasses());
            assertArrayEquals(blobModel.hiddenSizes(), loaded.hiddenSizes());
            float[][] expected = blobModel.predictProba(blobTest.x());
            float[][] actual = loaded.predictProba(blobTest.x());
            for (int i = 0; i < expected.length; i++) {
                assertArrayEquals(expected[i], actual[i], 0f, "row " + i);
            }
        }
    }

    @Test
    void loadRejectsMissingOrCorruptMetadata(@TempDir Path dir) throws Exception {
        assertThrows(java.io.IOException.class, () -> MlpModel.load(dir));
        blobModel.save(dir);
        Files.writeString(dir.resolve(MlpModel.METADATA_FILE), "formatVersion=1\ninputDim=x\n");
        assertThrows(java.io.IOException.class, () -> MlpModel.load(dir));
    }

    @Test
    void sameSeedGivesSameModel() {
        Dataset train = blobs(20, 3);
        MlpOptions opts = MlpOptions.small().withEpochs(3);
        MlpTrainer trainer = new MlpTrainer();
        try (MlpModel a = trainer.train(train.x(), train.y(), CLASSES, opts);
                MlpModel b = trainer.train(train.x(), train.y(), CLASSES, opts)) {
            float[][] pa = a.predictProba(blobTest.x());
            float[][] pb = b.predictProba(blobTest.x());
            for (int i = 0; i < pa.length; i++) {
                assertArrayEquals(pa[i], pb[i], 0f, "row " + i);
            }
        }
    }

    @Test
    void concurrentPredictionsMatchSerial() throws Exception {
        float[][] expected = blobModel.predictProba(blobTest.x());
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<float[][]>> futures = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                futures.add(pool.submit(() -> blobModel.predictProba(blobTest.x())));
            }
            for (Future<float[][]> f : futures) {
                float[][] got = f.get();
                for (int i = 0; i < expected.length; i++) {
                    assertArrayEquals(expected[i], got[i], 0f);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void badInputThrowsIllegalArgumentException() {
        MlpTrainer trainer = new MlpTrainer();
        MlpOptions opts = MlpOptions.small().withEpochs(1);
        float[][] ok = {{1f, 2f}, {3f, 4f}};
        int[] y = {0, 1};

        assertThrows(IllegalArgumentException.class,
                () -> trainer.train(new float[][] {{1f, Float.NaN}, {3f, 4f}}, y, 2, opts));
        assertThrows(IllegalArgumentException.class,
                () -> trainer.train(new float[][] {{1f, Float.POSITIVE_INFINITY}, {3f, 4f}}, y, 2,
                        opts));
        assertThrows(IllegalArgumentException.class,
                () -> trainer.train(new float[][] {{1f, 2f}, {3f}}, y, 2, opts));
        assertThrows(IllegalArgumentException.class,
                () -> trainer.train(new float[0][], new int[0], 2, opts));
        assertThrows(IllegalArgumentException.class,
                () -> trainer.train(new float[][] {{}, {}}, y, 2, opts));
        assertThrows(IllegalArgumentException.class, () -> trainer.train(null, y, 2, opts));
        assertThrows(IllegalArgumentException.class,
                () -> trainer.train(ok, new int[] {0}, 2, opts));
        assertThrows(IllegalArgumentException.class,
                () -> trainer.train(ok, new int[] {0, 2}, 2, opts));
        assertThrows(IllegalArgumentException.class,
                () -> trainer.train(ok, new int[] {0, -1}, 2, opts));
        assertThrows(IllegalArgumentException.class, () -> trainer.train(ok, y, 1, opts));
        assertThrows(IllegalArgumentException.class, () -> trainer.train(ok, y, 2, null));

        float[][] nan = new float[1][DIM];
        nan[0][3] = Float.NaN;
        assertThrows(IllegalArgumentException.class, () -> blobModel.predictProba(nan));
        assertThrows(IllegalArgumentException.class,
                () -> blobModel.predictProba(new float[][] {new float[DIM + 1]}));
        assertThrows(IllegalArgumentException.class,
                () -> blobModel.predict(new float[][] {new float[DIM - 1]}));
        assertThrows(IllegalArgumentException.class, () -> blobModel.predictProba(new float[0][]));
        assertThrows(IllegalArgumentException.class, () -> blobModel.predictProba(null));
    }

    @Test
    void optionsAreValidated() {
        assertThrows(IllegalArgumentException.class,
                () -> new MlpOptions(new int[0], 1e-3f, 8, 1, 0));
        assertThrows(IllegalArgumentException.class,
                () -> new MlpOptions(null, 1e-3f, 8, 1, 0));
        assertThrows(IllegalArgumentException.class,
                () -> new MlpOptions(new int[] {0}, 1e-3f, 8, 1, 0));
        assertThrows(IllegalArgumentException.class,
                () -> new MlpOptions(new int[] {8}, Float.NaN, 8, 1, 0));
        assertThrows(IllegalArgumentException.class,
                () -> new MlpOptions(new int[] {8}, 0f, 8, 1, 0));
        assertThrows(IllegalArgumentException.class,
                () -> new MlpOptions(new int[] {8}, 1e-3f, 0, 1, 0));
        assertThrows(IllegalArgumentException.class,
                () -> new MlpOptions(new int[] {8}, 1e-3f, 8, 0, 0));

        MlpOptions peep = MlpOptions.peepPaper();
        assertArrayEquals(new int[] {512, 1024, 2014, 1024, 512}, peep.hiddenSizes());
        assertEquals(1e-3f, peep.learningRate());
        assertEquals(100, peep.batchSize());
        assertEquals(200, peep.epochs());

        int[] hidden = {4, 4};
        MlpOptions o = new MlpOptions(hidden, 1e-3f, 8, 1, 0);
        hidden[0] = 99;
        o.hiddenSizes()[1] = 99;
        assertArrayEquals(new int[] {4, 4}, o.hiddenSizes());
        assertEquals(o, new MlpOptions(new int[] {4, 4}, 1e-3f, 8, 1, 0));
    }

    @Test
    void closedModelRejectsUse() {
        Dataset train = blobs(10, 4);
        MlpModel m = new MlpTrainer().train(train.x(), train.y(), CLASSES,
                MlpOptions.small().withEpochs(1));
        m.close();
        m.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> m.predictProba(train.x()));
    }

    /** {@code perClass} samples of each of 5 unit-variance Gaussian blobs, shuffled. */
    private static Dataset blobs(int perClass, long sampleSeed) {
        SplittableRandom centres = new SplittableRandom(1234); // same centres for train and test
        float[][] mu = new float[CLASSES][DIM];
        for (float[] c : mu) {
            for (int j = 0; j < DIM; j++) {
                c[j] = (float) (centres.nextGaussian() * 1.0);
            }
        }
        SplittableRandom rnd = new SplittableRandom(sampleSeed);
        int n = perClass * CLASSES;
        float[][] x = new float[n][DIM];
        int[] y = new int[n];
        for (int i = 0; i < n; i++) {
            y[i] = i % CLASSES;
            for (int j = 0; j < DIM; j++) {
                // The +10 offset exercises standardisation.
                x[i][j] = mu[y[i]][j] + (float) rnd.nextGaussian() + 10f;
            }
        }
        for (int i = n - 1; i > 0; i--) {
            int k = rnd.nextInt(i + 1);
            float[] tx = x[i];
            x[i] = x[k];
            x[k] = tx;
            int ty = y[i];
            y[i] = y[k];
            y[k] = ty;
        }
        return new Dataset(x, y);
    }

    private static Dataset noise(int n, SplittableRandom rnd) {
        float[][] x = new float[n][DIM];
        int[] y = new int[n];
        for (int i = 0; i < n; i++) {
            y[i] = rnd.nextInt(CLASSES);
            for (int j = 0; j < DIM; j++) {
                x[i][j] = (float) rnd.nextGaussian();
            }
        }
        return new Dataset(x, y);
    }

    private static double accuracy(int[] predicted, int[] truth) {
        int hit = 0;
        for (int i = 0; i < truth.length; i++) {
            hit += predicted[i] == truth[i] ? 1 : 0;
        }
        return (double) hit / truth.length;
    }
}
