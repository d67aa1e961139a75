package org.privface.evaluation.predict;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.privface.recognizer.model.MlpModel;
import org.privface.recognizer.model.MlpOptions;
import org.privface.recognizer.model.MlpTrainer;

/**
 * Batched inference of the recognizer's default MLP on 128-dimension perturbed vectors, on one
 * core (PyTorch limited to one thread). Scores are predictions per second.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Dai.djl.offline=true", "-Dai.djl.pytorch.num_threads=1",
        "-Dai.djl.pytorch.num_interop_threads=1"})
public class PredictBenchmark {
    static final int BATCH = 512;

    @Param({"small"})
    public String architecture;

    private MlpModel model;
    private float[][] batch;

    @Setup(Level.Trial)
    public void setUp() {
        SplittableRandom r = new SplittableRandom(2);
        float[][] x = new float[1000][128];
        int[] y = new int[1000];
        for (int i = 0; i < x.length; i++) {
            y[i] = i % 5;
            for (int j = 0; j < 128; j++) {
                x[i][j] = (float) (r.nextGaussian() + (j % 5 == y[i] ? 1 : 0));
            }
        }
        model = new MlpTrainer().train(x, y, 5, MlpOptions.small().withEpochs(3));
        batch = java.util.Arrays.copyOf(x, BATCH);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        model.close();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public float[][] predictBatchOf512() {
        return model.predictProba(batch);
    }
}
