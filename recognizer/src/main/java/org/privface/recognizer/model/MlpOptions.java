package org.privface.recognizer.model;

import java.util.Arrays;

/**
 * Hyper-parameters for {@link MlpTrainer}. Hidden layers use ReLU; the optimizer is always Adam
 * with a fixed learning rate.
 *
 * @param hiddenSizes width of each hidden layer, input side first (at least one layer)
 * @param learningRate Adam learning rate, finite and in (0, 1]
 * @param batchSize mini-batch size, at least 1
 * @param epochs number of passes over the training data, at least 1
 * @param seed seed for weight initialisation and shuffling (via the DJL engine)
 */
public record MlpOptions(
        int[] hiddenSizes, float learningRate, int batchSize, int epochs, int seed) {

    /** Upper bound on a single layer width; guards against typos that would exhaust memory. */
    public static final int MAX_LAYER_WIDTH = 65_536;

    public MlpOptions {
        if (hiddenSizes == null || hiddenSizes.length == 0) {
            throw new IllegalArgumentException("hiddenSizes must contain at least one layer");
        }
        for (int i = 0; i < hiddenSizes.length; i++) {
            if (hiddenSizes[i] < 1 || hiddenSizes[i] > MAX_LAYER_WIDTH) {
                throw new IllegalArgumentException(
                        "hiddenSizes[" + i + "] must be in [1, " + MAX_LAYER_WIDTH + "], got "
                                + hiddenSizes[i]);
            }
        }
        if (!(learningRate > 0f && learningRate <= 1f)) { // also rejects NaN
            throw new IllegalArgumentException(
                    "learningRate must be finite and in (0, 1], got " + learningRate);
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be >= 1, got " + batchSize);
        }
        if (epochs < 1) {
            throw new IllegalArgumentException("epochs must be >= 1, got " + epochs);
        }
        // Defensive copy: records expose their components, and arrays are mutable.
        hiddenSizes = hiddenSizes.clone();
    }

    /**
     * Small default for 16-256 dimensional inputs and up to a few dozen classes: trains ~1000
     * samples in a few seconds on 2 CPU cores.
     */
    public static MlpOptions small() {
        return new MlpOptions(new int[] {256, 128}, 1e-3f, 64, 60, 42);
    }

    /**
     * The architecture from the PEEP paper: hidden (512, 1024, 2014, 1024, 512), ReLU, Adam lr
     * 1e-3, batch 100, 200 epochs. "2014" is reproduced as printed in the paper (likely a typo
     * for 2048). About 5.2M parameters: roughly 3 minutes for 800 samples on 2 idle CPU cores.
     */
    public static MlpOptions peepPaper() {
        return new MlpOptions(new int[] {512, 1024, 2014, 1024, 512}, 1e-3f, 100, 200, 42);
    }

    public MlpOptions withEpochs(int newEpochs) {
        return new MlpOptions(hiddenSizes, learningRate, batchSize, newEpochs, seed);
    }

    public MlpOptions withSeed(int newSeed) {
        return new MlpOptions(hiddenSizes, learningRate, batchSize, epochs, newSeed);
    }

    /** Returns a copy, so callers cannot mutate the options. */
    @Override
    public int[] hiddenSizes() {
        return hiddenSizes.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MlpOptions other
                && Arrays.equals(hiddenSizes, other.hiddenSizes)
                && Float.compare(learningRate, other.learningRate) == 0
                && batchSize == other.batchSize
                && epochs == other.epochs
                && seed == other.seed;
    }

    @Override
    public int hashCode() {
        int h = Arrays.hashCode(hiddenSizes);
        h = 31 * h + Float.hashCode(learningRate);
        h = 31 * h + batchSize;
        h = 31 * h + epochs;
        return 31 * h + seed;
    }

    @Override
    public String toString() {
        return "MlpOptions[hiddenSizes=" + Arrays.toString(hiddenSizes)
                + ", learningRate=" + learningRate + ", batchSize=" + batchSize
                + ", epochs=" + epochs + ", seed=" + seed + "]";
    }
}
