package org.privface.benchmarks;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Locale;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs {@link PeepBenchmark} with JMH, then the NumPy reference of the same arithmetic, and prints
 * both with their ratio. The reference runs in the same invocation so the ratio compares like with
 * like on whatever machine runs it.
 */
public final class PeepPerformance {
    private PeepPerformance() {
    }

    public static void main(String[] args) throws Exception {
        Path script = Path.of(args.length > 0 ? args[0] : "agent/benchmarks/src/main/python/peep_numpy.py");
        Options opt = new OptionsBuilder().include(PeepBenchmark.class.getSimpleName()).jvmArgsAppend("-Xmx1g")
                .build();
        Collection<RunResult> results = new Runner(opt).run();
        double numpy = numpyMicros(script);
        System.out.println();
        System.out.println("| benchmark | µs per face (1 thread) | error (99.9%) | NumPy reference µs | NumPy / Java |");
        System.out.println("|---|---|---|---|---|");
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark().replaceAll(".*\\.", "");
            double score = r.getPrimaryResult().getScore();
            System.out.printf(Locale.ROOT, "| %s | %.2f | ±%.2f | %s | %s |%n", name, score,
                    r.getPrimaryResult().getScoreError(), name.startsWith("perturb") ? String.format(Locale.ROOT, "%.2f", numpy) : "",
                    name.startsWith("perturb") ? String.format(Locale.ROOT, "%.1fx", numpy / score) : "");
        }
    }

    private static double numpyMicros(Path script) throws Exception {
        Process p = new ProcessBuilder("python3", script.toString()).redirectErrorStream(true).start();
        String out;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream()))) {
            out = r.lines().reduce("", (a, b) -> b);
        }
        if (p.waitFor() != 0) {
            throw new IllegalStateException("NumPy reference failed: " + out);
        }
        return Double.parseDouble(out.trim());
    }
}
