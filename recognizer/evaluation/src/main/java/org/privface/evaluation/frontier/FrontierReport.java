package org.privface.evaluation.frontier;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

import org.privface.evaluation.Figures;
import org.privface.evaluation.frontier.FrontierFamilies.Group;

/** What {@link FrontierEvaluation} writes for one data set: the CSVs, the console table, the presets and the plot. */
final class FrontierReport {
    /** A row of the frontier CSV, with the detail behind it. */
    record Row(String mechanism, double epsilon, double delta, double mu, double epsilonEnrollment, int nc,
               double[] f1, double valF1, String chosen) {
        double mean() {
            return Figures.mean(f1);
        }

        double sd() {
            return Figures.sd(f1);
        }
    }

    private final String name;
    private final Path out;
    private final int seeds;
    private final double[] epsilons;
    private final List<Group> groups;

    FrontierReport(String name, Path out, int seeds, double[] epsilons, List<Group> groups) {
        this.name = name;
        this.out = out;
        this.seeds = seeds;
        this.epsilons = epsilons;
        this.groups = groups;
    }

    void writeCsv(List<Row> rows) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("frontier-" + name + ".csv")))) {
            w.println("mechanism,epsilon_per_face,delta,nc,f1_mean,f1_sd");
            for (Row r : rows) {
                w.printf(Locale.ROOT, "%s,%s,%s,%d,%.4f,%.4f%n", r.mechanism(), Figures.fmt(r.epsilon()),
                        r.delta() == 0 ? "0" : Figures.fmt(r.delta()), r.nc(), r.mean(), r.sd());
            }
        }
    }

    void writeDetail(List<Row> rows) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("frontier-" + name + "-detail.csv")))) {
            w.println("mechanism,epsilon_per_face,delta,mu,epsilon_enrollment,nc,f1_mean,f1_sd,val_f1_mean,f1_per_seed,"
                    + "chosen_per_seed");
            for (Row r : rows) {
                w.printf(Locale.ROOT, "%s,%s,%s,%s,%s,%d,%.4f,%.4f,%s,%s,%s%n", r.mechanism(), Figures.fmt(r.epsilon()),
                        r.delta() == 0 ? "0" : Figures.fmt(r.delta()), Double.isNaN(r.mu()) ? "" : String.format(Locale.ROOT,
                                "%.4f", r.mu()), r.mechanism().contains("-gauss-") && !Double.isInfinite(r.epsilon())
                                ? String.format(Locale.ROOT, "%.4g", r.epsilonEnrollment()) : Figures.fmt(r.epsilonEnrollment()),
                        r.nc(), r.mean(), r.sd(), Double.isNaN(r.valF1()) ? "" : String.format(Locale.ROOT, "%.4f",
                                r.valF1()), Arrays.stream(r.f1()).mapToObj(v -> String.format(Locale.ROOT, "%.4f", v))
                                .collect(Collectors.joining(";")), r.chosen());
            }
        }
    }

    void printFrontier(List<Row> rows) {
        System.out.printf("%n%s: weighted F1 per per-face epsilon (test split, mean over %d seeds; -val = chosen on "
                + "validation)%n", name, seeds);
        List<String> families = rows.stream().map(Row::mechanism).filter(m -> m.endsWith("-val") || m.startsWith("best"))
                .distinct().toList();
        StringBuilder head = new StringBuilder(String.format("%-34s", "family \\ eps"));
        for (double e : epsilons) {
            head.append(String.format("%7s", Figures.fmt(e)));
        }
        System.out.println(head);
        for (String f : families) {
            StringBuilder line = new StringBuilder(String.format("%-34s", f));
            for (double e : epsilons) {
                Row r = rows.stream().filter(x -> x.mechanism().equals(f) && x.epsilon() == e).findFirst().orElse(null);
                line.append(r == null ? "      -" : String.format(Locale.ROOT, "%7.3f", r.mean()));
            }
            System.out.println(line);
        }
        rows.stream().filter(r -> Double.isInfinite(r.epsilon())).forEach(r -> System.out.printf(Locale.ROOT,
                "%-34s %.3f +- %.3f (no privacy)%n", r.mechanism(), r.mean(), r.sd()));
    }

    void writePresets(String file, String what, List<String[]> presets) throws IOException {
        System.out.printf("%n%s: best configuration per epsilon band, %s (picked on validation, scored on test)%n",
                name, what);
        System.out.printf("%-8s %-40s %4s %8s %7s %7s%n", "band", "mechanism", "nc", "eps", "delta", "f1");
        for (String[] p : presets) {
            System.out.printf("%-8s %-40s %4s %8s %7s %7s +- %s%n", p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
        }
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve(file)))) {
            w.println("band,mechanism,nc,epsilon_per_face,delta,f1_mean");
            for (String[] p : presets) {
                w.println(String.join(",", Arrays.copyOf(p, 6)));
            }
        }
    }
}
