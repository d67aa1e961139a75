package org.privface.benchmarks;

import java.util.List;
import java.util.Locale;

import org.privface.benchmarks.EdgePasses.Run;

/** Lines printed as they come and kept for --out, and the table cells the benchmark's sections share. */
final class Report {
    private final StringBuilder text = new StringBuilder();

        void line(String s) {
            System.out.println(s);
            text.append(s).append('\n');
        }

        String text() {
            return text.toString();
        }

    static String meanSd(List<Double> xs, int decimals) {
        double mean = xs.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
        double var = xs.size() < 2 ? 0 : xs.stream().mapToDouble(x -> (x - mean) * (x - mean)).sum() / (xs.size() - 1);
        String f = "%." + decimals + "f";
        return String.format(Locale.ROOT, f + " ± " + f, mean, Math.sqrt(var));
    }

    static void row(Report report, String name, List<Run> runs) {
        if (runs == null || runs.isEmpty()) {
            return;
        }
        List<Double> fps = runs.stream().map(Run::fps).toList();
        List<Double> cpu = runs.stream().map(Run::cpuFps).toList();
        List<Double> ms = runs.stream().map(r -> 1000.0 / r.fps()).toList();
        report.line(String.format(Locale.ROOT, "| %s | %s | %s | %s |", name, meanSd(fps, 1), meanSd(cpu, 1), meanSd(ms, 1)));
    }
}
