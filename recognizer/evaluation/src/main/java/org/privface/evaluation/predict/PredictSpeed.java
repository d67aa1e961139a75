package org.privface.evaluation.predict;

import java.util.Collection;
import java.util.Locale;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs {@link PredictBenchmark} with JMH and prints docs/performance.md's table row. It lives with
 * the evaluations, beside the recognizer it measures, so that the gateway's benchmarks
 * ({@code agent/benchmarks}) do not depend on the cloud's artifact (issue 40).
 *
 * <pre>mvn -B -q -pl recognizer/evaluation -am install -DskipTests -Ppredict-bench</pre>
 * Arguments, if any, replace the options (JMH's own, for example {@code -wi 1 -i 1 -f 1}).
 */
public final class PredictSpeed {
    private PredictSpeed() {
    }

    public static void main(String[] given) throws Exception {
        // Maven passes -Dbench.args as one argument, possibly empty: split it into JMH's options.
        String joined = String.join(" ", given).trim();
        String[] args = joined.isEmpty() ? new String[0] : joined.split("\\s+");
        Options opt = args.length > 0
                ? new org.openjdk.jmh.runner.options.CommandLineOptions(
                        concat(args, PredictBenchmark.class.getSimpleName()))
                : new OptionsBuilder().include(PredictBenchmark.class.getSimpleName()).jvmArgsAppend("-Xmx1g").build();
        Collection<RunResult> results = new Runner(opt).run();
        System.out.println();
        System.out.println("| benchmark | predictions per second, one core | error (99.9%) |");
        System.out.println("|---|---|---|");
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark().replaceAll(".*\\.", "");
            System.out.printf(Locale.ROOT, "| %s (%s) | %.0f | ±%.0f |%n", name, r.getParams().getParam("architecture"),
                    r.getPrimaryResult().getScore(), r.getPrimaryResult().getScoreError());
        }
    }

    private static String[] concat(String[] args, String include) {
        String[] all = java.util.Arrays.copyOf(args, args.length + 1);
        all[args.length] = include;
        return all;
    }
}
