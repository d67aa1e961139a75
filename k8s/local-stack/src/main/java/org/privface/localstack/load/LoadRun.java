package org.privface.localstack.load;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.privface.evaluation.EvalOptions;

/**
 * What every load run does around its own measurement (issue 40): parse {@code --root}, {@code --out}
 * and its own options, prepare its inputs, start the {@link LoadStack} (broker and topics), stop it
 * however the run ends (a signal too), keep the processes' logs in {@code k8s/local-stack/target/NAME-logs},
 * print the verdict and the report and write it to a summary file, and exit 0 when the run passed,
 * 2 when it did not. A run fills in {@link #options}, {@link #sites} and {@link #measure} (and {@link #prepare}); the
 * sampling helpers (rates and deltas of scraped counters, heap windows of a GC log, finite means)
 * are here because each run samples the same meters.
 */
abstract class LoadRun {
    static final double MIB = 1024 * 1024;

    /** The run's name as it prints it ("soak", "query burst"). */
    private final String name;
    /** Where its logs are kept: k8s/local-stack/target/{@code logs}. */
    private final String logs;
    protected Map<String, String> opt;
    protected Path root;
    protected Path out;
    /** When the run started, before its inputs were prepared. */
    protected long t0;
    protected LoadStack stack;

    protected LoadRun(String name, String logs) {
        this.name = name;
        this.logs = logs;
    }

    /** The run's own options and their defaults, in the order they are documented. */
    protected abstract void options(Map<String, String> defaults);

    /** Reads the options and prepares what the run needs before the broker starts. */
    protected void prepare() throws Exception {
    }

    /** The sites whose topics the broker is created with. */
    protected abstract List<String> sites();

    /** The broker and topics; a run may retry a start that a busy machine slowed past the launcher's bound. */
    protected LoadStack startStack() throws Exception {
        return LoadStack.start(root, sites());
    }

    /** The run itself, with the stack up; whether it passed. The stack is closed after it, whatever happens. */
    protected abstract boolean measure() throws Exception;

    /** Parses the options, runs, cleans up and exits: 0 when the run passed, 2 when it did not. */
    final void run(String[] args) throws Exception {
        Map<String, String> d = new LinkedHashMap<>();
        d.put("--root", ".");
        d.put("--out", "docs/results");
        options(d);
        opt = EvalOptions.parse(d, args);
        root = Path.of(opt.get("--root")).toAbsolutePath().normalize();
        out = root.resolve(opt.get("--out"));
        t0 = System.nanoTime();
        prepare();
        stack = startStack();
        LoadStack started = stack;
        Thread cleanup = new Thread(started::close, name.replace(' ', '-') + "-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        boolean passed = false;
        try {
            passed = measure();
        } finally {
            stack.close();
            Runtime.getRuntime().removeShutdownHook(cleanup);
            stack.keepLogsAndClean(root.resolve("k8s/local-stack/target/" + logs));
        }
        System.exit(passed ? 0 : 2);
    }

    /** Prints the verdict and the report, and writes the report to {@code summary} under {@code --out}. */
    protected final void report(boolean ok, List<String> report, String summary) throws java.io.IOException {
        System.out.println();
        System.out.println("=== " + name + " " + (ok ? "PASSED" : "FAILED") + " ===");
        report.forEach(System.out::println);
        Files.writeString(out.resolve(summary), String.join("\n", report) + "\n");
    }

    /** A chart of sampled columns against {@code x}, to {@code png} under {@code --out}. */
    protected final void chart(String png, String title, String xTitle, String yTitle, boolean logY, double[] x,
                               Map<String, double[]> series) throws java.io.IOException {
        LoadStack.chart(out.resolve(png), title, xTitle, yTitle, logY, x, series);
    }

    static double seconds(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }

    static void sleepUntil(long nanoTime) throws InterruptedException {
        long wait = nanoTime - System.nanoTime();
        if (wait > 0) {
            Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
        }
    }

    /** A counter's increase per second between two scrapes. */
    static double rate(Prometheus now, Prometheus before, String counter, double seconds) {
        return delta(now, before, counter) / seconds;
    }

    static double delta(Prometheus now, Prometheus before, String counter) {
        if (before == null || now.empty()) {
            return Double.NaN;
        }
        return nz(now.sum(counter)) - nz(before.sum(counter));
    }

    /** A meter that is not registered yet counts 0. */
    static double nz(double v) {
        return Double.isNaN(v) ? 0 : v;
    }

    static double mean(double[] v) {
        return Arrays.stream(v).filter(Double::isFinite).average().orElse(Double.NaN);
    }

    static double firstFinite(double[] v) {
        return Arrays.stream(v).filter(Double::isFinite).findFirst().orElse(Double.NaN);
    }

    static double lastFinite(double[] v) {
        double last = Double.NaN;
        for (double x : v) {
            if (Double.isFinite(x)) {
                last = x;
            }
        }
        return last;
    }

    /** Heap figures of the pauses logged in one window. */
    record HeapWindow(double afterFull, double minAfter, double maxPauseMillis) {
    }

    static HeapWindow heap(List<GcLog.Pause> pauses) {
        double full = Double.NaN;
        double min = Double.NaN;
        double max = Double.NaN;
        for (GcLog.Pause p : pauses) {
            if (p.full()) {
                full = p.afterBytes();
            }
            min = Double.isNaN(min) ? p.afterBytes() : Math.min(min, p.afterBytes());
            max = Double.isNaN(max) ? p.millis() : Math.max(max, p.millis());
        }
        return new HeapWindow(full, min, max);
    }
}
