package org.privface.recognizer.model;

import ai.djl.engine.Engine;
import ai.djl.nn.Activation;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;

/** Package-private glue shared by the trainer and the model: engine access, network, checks. */
final class DjlSupport {

    static final String ENGINE_NAME = "PyTorch";

    static {
        // Must run before the engine loads: natives come from the pytorch-native-cpu jar on the
        // classpath, and nothing may be downloaded. An explicit -Dai.djl.offline wins.
        if (System.getProperty("ai.djl.offline") == null) {
            System.setProperty("ai.djl.offline", "true");
        }
    }

    private DjlSupport() {}

    /** Loads (first call: unpacks natives into the DJL cache) and returns the PyTorch engine. */
    static Engine engine() {
        return Engine.getEngine(ENGINE_NAME);
    }

    /** Linear+ReLU per hidden layer, then a linear layer producing logits. */
    static SequentialBlock buildNetwork(int[] hiddenSizes, int numClasses) {
        SequentialBlock net = new SequentialBlock();
        for (int h : hiddenSizes) {
            net.add(Linear.builder().setUnits(h).build());
            net.add(Activation.reluBlock());
        }
        net.add(Linear.builder().setUnits(numClasses).build());
        return net;
    }

    /**
     * Checks a feature matrix: non-empty, rectangular with {@code expectedDim} columns (or any
     * consistent width if {@code expectedDim < 0}), all values finite. Returns the width.
     */
    static int checkMatrix(float[][] x, int expectedDim, String name) {
        if (x == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        if (x.length == 0) {
            throw new IllegalArgumentException(name + " must contain at least one row");
        }
        int dim = expectedDim;
        for (int i = 0; i < x.length; i++) {
            float[] row = x[i];
            if (row == null) {
                throw new IllegalArgumentException(name + "[" + i + "] is null");
            }
            if (dim < 0) {
                if (row.length == 0) {
                    throw new IllegalArgumentException(name + "[0] has no features");
                }
                dim = row.length;
            } else if (row.length != dim) {
                throw new IllegalArgumentException(
                        name + "[" + i + "] has " + row.length + " features, expected " + dim);
            }
            for (int j = 0; j < row.length; j++) {
                if (!Float.isFinite(row[j])) {
                    throw new IllegalArgumentException(
                            name + "[" + i + "][" + j + "] is not finite: " + row[j]);
                }
            }
        }
        return dim;
    }

    /** (x - mean) / sd per feature into a fresh row-major array, ready for NDManager.create. */
    static float[] standardize(float[][] x, int from, int to, float[] mean, float[] sd) {
        int dim = mean.length;
        float[] out = new float[(to - from) * dim];
        int k = 0;
        for (int i = from; i < to; i++) {
            float[] row = x[i];
            for (int j = 0; j < dim; j++) {
                out[k++] = (row[j] - mean[j]) / sd[j];
            }
        }
        return out;
    }
}
