package org.privface.recognizer.model;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Parameter;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.dataset.Batch;
import ai.djl.training.initializer.XavierInitializer;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.translate.TranslateException;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Trains a ReLU multi-layer perceptron classifier with DJL on the PyTorch engine (CPU only).
 *
 * <p>Inputs are standardised per feature with statistics from the training data; these are stored
 * in the returned {@link MlpModel} and applied at prediction time, because perturbed (noisy)
 * features can have very different scales.
 *
 * <p>Training is deterministic for a given seed and thread count: the seed is set on the DJL
 * engine (PyTorch generator and DJL's shuffling RNG). Those generators are JVM-global, so calls to
 * {@code train} are serialised JVM-wide; prediction is not affected.
 */
public final class MlpTrainer {

    /** Receives the mean training loss after each epoch (epochs are 1-based). */
    @FunctionalInterface
    public interface ProgressListener {
        ProgressListener NONE = (epoch, loss) -> {};

        void onEpoch(int epoch, float meanLoss);
    }

    private static final Object GLOBAL_RNG_LOCK = new Object();

    /** Features with a smaller standard deviation are only centred, to avoid dividing by ~0. */
    static final float MIN_SD = 1e-6f;

    public MlpModel train(float[][] x, int[] y, int numClasses, MlpOptions opts) {
        return train(x, y, numClasses, opts, ProgressListener.NONE);
    }

    /**
     * @param x training features, one row per sample; finite values, same width for all rows
     * @param y class labels in {@code [0, numClasses)}, one per row of {@code x}
     * @param numClasses number of classes, at least 2
     * @param opts hyper-parameters
     * @param listener progress callback, called on the training thread
     * @return the trained model; the caller must close it
     * @throws IllegalArgumentException on invalid or inconsistent arguments
     */
    public MlpModel train(
            float[][] x, int[] y, int numClasses, MlpOptions opts, ProgressListener listener) {
        int dim = DjlSupport.checkMatrix(x, -1, "x");
        if (opts == null) {
            throw new IllegalArgumentException("opts must not be null");
        }
        if (listener == null) {
            throw new IllegalArgumentException(
                    "listener must not be null (use ProgressListener.NONE)");
        }
        if (numClasses < 2) {
            throw new IllegalArgumentException("numClasses must be >= 2, got " + numClasses);
        }
        if (y == null || y.length != x.length) {
            throw new IllegalArgumentException(
                    "y must have one label per row of x: x has " + x.length + " rows, y has "
                            + (y == null ? "null" : y.length + " labels"));
        }
        for (int i = 0; i < y.length; i++) {
            if (y[i] < 0 || y[i] >= numClasses) {
                throw new IllegalArgumentException(
                        "y[" + i + "] = " + y[i] + " is outside [0, " + numClasses + ")");
            }
        }

        float[][] stats = featureStats(x, dim);
        float[] mean = stats[0];
        float[] sd = stats[1];
        float[] labels = new float[y.length];
        for (int i = 0; i < y.length; i++) {
            labels[i] = y[i];
        }
        int[] hidden = opts.hiddenSizes();

        Engine engine = DjlSupport.engine();
        Model model = Model.newInstance("privface-mlp", Device.cpu(), engine.getEngineName());
        boolean ok = false;
        try {
            model.setBlock(DjlSupport.buildNetwork(hidden, numClasses));
            synchronized (GLOBAL_RNG_LOCK) {
                engine.setRandomSeed(opts.seed());
                fit(model, DjlSupport.standardize(x, 0, x.length, mean, sd), labels, dim, opts,
                        listener);
            }
            MlpModel result = new MlpModel(model, dim, numClasses, hidden, mean, sd);
            ok = true;
            return result;
        } finally {
            if (!ok) {
                model.close();
            }
        }
    }

    private static void fit(Model model, float[] xStd, float[] labels, int dim, MlpOptions opts,
            ProgressListener listener) {
        Loss loss = Loss.softmaxCrossEntropyLoss();
        DefaultTrainingConfig config = new DefaultTrainingConfig(loss)
                .optOptimizer(Optimizer.adam()
                        .optLearningRateTracker(Tracker.fixed(opts.learningRate()))
                        .build())
                // He initialisation (Xavier, fan-in, magnitude 2) suits ReLU layers.
                .optInitializer(new XavierInitializer(XavierInitializer.RandomType.GAUSSIAN,
                        XavierInitializer.FactorType.IN, 2f), Parameter.Type.WEIGHT)
                .optDevices(new Device[] {Device.cpu()});
        int n = labels.length;
        try (NDManager data = model.getNDManager().newSubManager();
                Trainer trainer = model.newTrainer(config)) {
            NDArray features = data.create(xStd, new Shape(n, dim));
            NDArray target = data.create(labels, new Shape(n));
            ArrayDataset dataset = new ArrayDataset.Builder()
                    .setData(features)
                    .optLabels(target)
                    .setSampling(Math.min(opts.batchSize(), n), true)
                    .build();
            trainer.initialize(new Shape(1, dim));
            for (int epoch = 1; epoch <= opts.epochs(); epoch++) {
                double sum = 0;
                for (Batch batch : trainer.iterateDataset(dataset)) {
                    try (batch; GradientCollector gc = trainer.newGradientCollector()) {
                        NDArray l = loss.evaluate(batch.getLabels(),
                                trainer.forward(batch.getData()));
                        gc.backward(l);
                        sum += l.getFloat() * batch.getSize();
                    }
                    trainer.step();
                }
                float meanLoss = (float) (sum / n);
                if (!Float.isFinite(meanLoss)) {
                    throw new IllegalStateException(
                            "training diverged at epoch " + epoch + " (loss " + meanLoss
                                    + "); try a lower learning rate");
                }
                listener.onEpoch(epoch, meanLoss);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (TranslateException e) {
            throw new IllegalStateException("failed to iterate the in-memory dataset", e);
        }
        // Inference only from here on: no autograd graph, whatever the calling thread's grad mode.
        model.getBlock().freezeParameters(true);
    }

    /** Per-feature mean and population standard deviation (two-pass, in double). */
    static float[][] featureStats(float[][] x, int dim) {
        double[] mean = new double[dim];
        for (float[] row : x) {
            for (int j = 0; j < dim; j++) {
                mean[j] += row[j];
            }
        }
        for (int j = 0; j < dim; j++) {
            mean[j] /= x.length;
        }
        double[] var = new double[dim];
        for (float[] row : x) {
            for (int j = 0; j < dim; j++) {
                double d = row[j] - mean[j];
                var[j] += d * d;
            }
        }
        float[] m = new float[dim];
        float[] s = new float[dim];
        for (int j = 0; j < dim; j++) {
            m[j] = (float) mean[j];
            float sd = (float) Math.sqrt(var[j] / x.length);
            s[j] = sd >= MIN_SD ? sd : 1f;
        }
        return new float[][] {m, s};
    }
}
