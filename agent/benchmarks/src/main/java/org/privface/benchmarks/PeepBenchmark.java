package org.privface.benchmarks;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.privface.agent.detect.FaceCrops;
import org.privface.privacy.EigenBasis;
import org.privface.privacy.PeepMechanism;
import org.privface.privacy.Release;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.SensitivityMode;

/**
 * Cost of perturbing one 47×62 face with PEEP at nc = 128 on one thread: projection, clamp,
 * scale and secure discrete Laplace noise, as the agent does per detected face.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@Threads(1)
public class PeepBenchmark {
    static final int NC = 128;

    private PeepMechanism vector;
    private PeepMechanism l1;
    private EigenBasis basis;
    private double[] face;

    @Setup
    public void setUp() {
        int d = FaceCrops.WIDTH * FaceCrops.HEIGHT;
        SplittableRandom r = new SplittableRandom(1);
        double[][] faces = new double[300][d];
        for (double[] f : faces) {
            for (int j = 0; j < d; j++) {
                f[j] = r.nextDouble();
            }
        }
        basis = EigenBasis.fit(faces, NC, FaceCrops.WIDTH, FaceCrops.HEIGHT);
        vector = new PeepMechanism(basis, SensitivityMode.VECTOR, 8, new SecureLaplace());
        l1 = new PeepMechanism(basis, SensitivityMode.L1_CLIP, 8, new SecureLaplace());
        face = faces[7];
    }

    @Benchmark
    public double[] projectOnly() {
        return basis.project(face);
    }

    @Benchmark
    public Release perturbVector() {
        return vector.perturb(face);
    }

    @Benchmark
    public Release perturbL1Clip() {
        return l1.perturb(face);
    }
}
