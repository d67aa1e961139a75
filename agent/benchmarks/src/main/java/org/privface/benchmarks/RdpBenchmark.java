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
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.rdp.RdpBasis;
import org.privface.privacy.rdp.RdpMechanism;
import org.privface.privacy.rdp.RdpMode;
import org.privface.privacy.rdp.RdpRelease;

/**
 * Cost of sanitizing one 64×64 face with RDP on one thread: Haar transform, ranking, scales,
 * secure Laplace on the noised coefficients, inverse transform and eigenface features. The
 * issue's target is NA ≤ 1 ms per face.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@Threads(1)
public class RdpBenchmark {
    private RdpMechanism na;
    private RdpMechanism lmgd;
    private RdpMechanism uniform;
    private RdpMechanism strict;
    private double[] face;

    @Setup
    public void setUp() {
        SplittableRandom r = new SplittableRandom(1);
        double[][] faces = new double[200][64 * 64];
        for (double[] f : faces) {
            for (int j = 0; j < f.length; j++) {
                f[j] = r.nextDouble();
            }
        }
        RdpBasis basis = RdpBasis.fit(faces, 32, 64, 64, 3);
        na = new RdpMechanism(basis, RdpMode.NA, 0.6, new SecureLaplace());
        lmgd = new RdpMechanism(basis, RdpMode.LMGD, 0.6, new SecureLaplace());
        uniform = new RdpMechanism(basis, RdpMode.UNIFORM, 0.6, new SecureLaplace());
        strict = new RdpMechanism(basis, RdpMode.STRICT, 8, new SecureLaplace());
        face = faces[7];
    }

    @Benchmark
    public RdpRelease naWithImage() {
        return na.sanitize(face, true);
    }

    @Benchmark
    public RdpRelease lmgdWithImage() {
        return lmgd.sanitize(face, true);
    }

    @Benchmark
    public RdpRelease uniformWithImage() {
        return uniform.sanitize(face, true);
    }

    @Benchmark
    public RdpRelease strictFeatures() {
        return strict.sanitize(face, false);
    }

    @Benchmark
    public RdpRelease strictWithImage() {
        return strict.sanitize(face, true);
    }

    public static void main(String[] args) throws Exception {
        new Runner(new OptionsBuilder().include(RdpBenchmark.class.getSimpleName()).jvmArgsAppend("-Xmx1g").build()).run();
    }
}
