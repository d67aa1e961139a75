package org.privface.evaluation.deep;

import static org.privface.evaluation.Figures.fmt;
import static org.privface.evaluation.MlpInputs.floats;
import static org.privface.evaluation.Seeds.seeded;

import java.awt.Color;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.knowm.xchart.style.Styler;
import org.privface.evaluation.Charts;
import org.privface.evaluation.EmbeddingCache;
import org.privface.evaluation.Metrics;
import org.privface.evaluation.Progress;
import org.privface.evaluation.StratifiedSplit;
import org.privface.privacy.embedding.EmbeddingBasis;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.privacy.embedding.EmbeddingMechanism.Noise;
import org.privface.privacy.embedding.EmbeddingMechanism.Preset;
import org.privface.recognizer.model.MlpModel;
import org.privface.recognizer.model.MlpOptions;
import org.privface.recognizer.model.MlpTrainer;
import org.privface.recognizer.model.NearestMean;

/**
 * The deep frontier's machinery ({@link DeepFrontierEvaluation} is its command): the families, the
 * folds, the scoring, the public-only selection, the scaling and the open set, shared with
 * {@link DeepAnswer}, {@link DeepOpenSet} and {@link ModelComparison}.
 */
public final class DeepFrontier {
    static final double TRAIN_FRACTION = 0.7;
    /** Directions in the bundled public basis. */
    static final int BASIS_DIRECTIONS = 64;

    /** A release family: how training (enrollment) and test (query) faces become vectors at ε. */
    interface Family {
        String name();

        /** What the ε covers: "every face", "query faces only", "ideal (float sampler)". */
        String guarantee();

        double[][][] release(double[][] train, int[] trainLabels, int classes, double[][] test, double epsilon,
                             SecureRandom random);
    }

    record Row(String set, String family, String guarantee, double epsilon, double[] f1, String mode) {
        double mean() {
            return Arrays.stream(f1).average().orElse(Double.NaN);
        }

        double sd() {
            double m = mean();
            return f1.length < 2 ? 0 : Math.sqrt(Arrays.stream(f1).map(v -> (v - m) * (v - m)).sum() / (f1.length - 1));
        }
    }

    private final EmbeddingBasis basis;
    /** Enrollment-fitted bases per training split and k: the fit does not depend on ε. */
    private final Map<double[][], Map<Integer, EmbeddingBasis>> enrollmentBases = new java.util.IdentityHashMap<>();
    private final int seeds;
    private final double[] epsilons;
    private final Path out;

    DeepFrontier(EmbeddingBasis basis, int seeds, double[] epsilons, Path out) {
        this.basis = basis;
        this.seeds = seeds;
        this.epsilons = epsilons;
        this.out = out;
    }

    /** The shipped basis: Fisher directions of all public people. */
    static EmbeddingBasis fitPublic(EmbeddingCache pub, String model, String name, int k) {
        return EmbeddingBasis.fit(model, name + ": " + pub.classes() + " people, " + pub.x().length + " faces",
                pub.x(), pub.labels(), pub.classes(), k);
    }

    // ---------------------------------------------------------------- families

    /** The agent's mode on a basis: the public one, or one fitted on the training split. */
    Family agentMode(Noise noise, boolean enrollmentFitted) {
        String name = (enrollmentFitted ? "enrollment-" : "public-") + noise.wireName;
        return new Family() {
            public String name() {
                return name;
            }

            public String guarantee() {
                return enrollmentFitted ? "query faces only" : "every face";
            }

            public double[][][] release(double[][] train, int[] y, int classes, double[][] test, double epsilon,
                                        SecureRandom random) {
                Preset p = Preset.forEpsilon(noise, epsilon);
                EmbeddingBasis b = basis;
                int k = p.k();
                if (enrollmentFitted) {
                    k = Math.min(k, Math.min(classes - 1, BASIS_DIRECTIONS));
                    int kk = k;
                    b = enrollmentBases.computeIfAbsent(train, t -> new java.util.concurrent.ConcurrentHashMap<>())
                            .computeIfAbsent(k, key -> EmbeddingBasis.fit(basis.modelId(), "training split", train, y,
                                    classes, kk));
                }
                // Fewer directions than the preset's (an enrollment of few people): keep the cap's relative radius.
                int radius = (int) Math.floor(p.radius() * (double) k / p.k());
                EmbeddingMechanism m = new EmbeddingMechanism(b, !enrollmentFitted, noise, k, radius, epsilon, random);
                return new double[][][] {releaseAll(m, train), releaseAll(m, test), {{m.epsilonPerFace()}}};
            }
        };
    }

    Family floatCap() {
        return new Family() {
            public String name() {
                return "reference-float-cap";
            }

            public String guarantee() {
                return "ideal mechanism (float sampler, not the product)";
            }

            public double[][][] release(double[][] train, int[] y, int classes, double[][] test, double epsilon,
                                        SecureRandom random) {
                int k = epsilon < 15 ? 16 : epsilon < 35 ? 24 : 64;
                double p = epsilon < 15 ? 0.95 : 0.995;
                FloatCap cap = new FloatCap(k, p, epsilon, random);
                return new double[][][] {cap.releaseAll(units(train, k)), cap.releaseAll(units(test, k)), {{epsilon}}};
            }
        };
    }

    double[][] units(double[][] x, int k) {
        double[][] u = new double[x.length][];
        for (int i = 0; i < x.length; i++) {
            u[i] = EmbeddingMechanism.unit(basis.project(x[i], k));
        }
        return u;
    }

    static double[][] releaseAll(EmbeddingMechanism m, double[][] x) {
        double[][] r = new double[x.length][];
        for (int i = 0; i < x.length; i++) {
            r[i] = m.perturb(x[i]).vector();
        }
        return r;
    }

    List<Family> families() {
        return List.of(agentMode(Noise.SIGN_CAP, false), agentMode(Noise.LAPLACE, false),
                agentMode(Noise.GAUSSIAN, false), agentMode(Noise.SIGN_CAP, true), agentMode(Noise.LAPLACE, true),
                floatCap());
    }

    // ---------------------------------------------------------------- frontier

    List<Row> frontier(Map<String, EmbeddingCache> sets, double mlpEpsilon) throws IOException {
        List<Family> families = families();
        int total = sets.size() * seeds * (1 + families.size() * epsilons.length);
        Progress progress = new Progress(System.out, total);
        List<Row> rows = new ArrayList<>();
        for (var entry : sets.entrySet()) {
            String set = entry.getKey();
            EmbeddingCache d = entry.getValue();
            peopleCount.put(set, d.classes());
            Map<String, double[]> f1 = new LinkedHashMap<>();
            Map<String, String> modes = new LinkedHashMap<>();
            for (int s = 0; s < seeds; s++) {
                Fold fold = Fold.of(d, s);
                double[][] train = fold.train();
                double[][] test = fold.test();
                int[] yTrain = fold.yTrain();
                int[] yTest = fold.yTest();
                record("none", 0, s, f1, score(train, yTrain, test, yTest, d.classes()));
                progress.step(set + " none");
                for (Family fam : families) {
                    for (double eps : epsilons) {
                        double[][][] r = fam.release(train, yTrain, d.classes(), test, eps, seeded(set, fam.name(), eps, s));
                        record(fam.name(), eps, s, f1, score(r[0], yTrain, r[1], yTest, d.classes()));
                        modes.put(fam.name() + "@" + eps, fam.guarantee() + String.format(Locale.ROOT, "; ε spent %.4g",
                                r[2][0][0]));
                        if (eps == mlpEpsilon && fam.name().equals("public-sign-cap")) {
                            record(fam.name() + "-mlp", eps, s, f1, mlpScore(r[0], yTrain, r[1], yTest, d.classes(), s));
                            modes.put(fam.name() + "-mlp@" + eps, "every face; recognizer's MLP (small preset)");
                        }
                        progress.step(set + " " + fam.name() + " ε" + fmt(eps));
                    }
                }
            }
            for (var e : f1.entrySet()) {
                String[] key = e.getKey().split("@");
                double eps = Double.parseDouble(key[1]);
                rows.add(new Row(set, key[0], eps == 0 ? "no privacy" : modes.getOrDefault(e.getKey(), ""), eps,
                        e.getValue(), ""));
            }
            writeFrontier(set, rows.stream().filter(r -> r.set().equals(set)).toList());
        }
        return rows;
    }

    void record(String family, double eps, int seed, Map<String, double[]> f1, double value) {
        f1.computeIfAbsent(family + "@" + eps, k -> new double[seeds])[seed] = value;
    }

    /** Weighted F1 of the nearest class mean (cosine) on the released vectors. */
    static double score(double[][] train, int[] yTrain, double[][] test, int[] yTest, int classes) {
        NearestMean m = NearestMean.fit(train, yTrain, classes);
        int[] pred = new int[test.length];
        for (int i = 0; i < test.length; i++) {
            pred[i] = m.predict(test[i]);
        }
        return Metrics.weighted(yTest, pred, classes).f1();
    }

    static double mlpScore(double[][] train, int[] yTrain, double[][] test, int[] yTest, int classes, int seed) {
        try (MlpModel model = new MlpTrainer().train(floats(train), yTrain, classes,
                MlpOptions.small().withSeed(seed + 1))) {
            return Metrics.weighted(yTest, model.predict(floats(test)), classes).f1();
        }
    }

    /** Seed s's stratified 70/30 split of a set: the closed-set frontier and the open-set run use the same folds. */
    record Fold(double[][] train, int[] yTrain, double[][] test, int[] yTest) {
        static Fold of(EmbeddingCache d, int seed) {
            StratifiedSplit split = StratifiedSplit.of(d.labels(), d.classes(), TRAIN_FRACTION, -1, seed + 1);
            return new Fold(StratifiedSplit.select(d.x(), split.train()), StratifiedSplit.select(d.labels(), split.train()),
                    StratifiedSplit.select(d.x(), split.test()), StratifiedSplit.select(d.labels(), split.test()));
        }
    }

    // ---------------------------------------------------------------- selection on public data

    /**
     * Which k (and cap radius) fits each ε, judged on lfw-public alone: a basis fitted on the
     * even-numbered people, scored on the odd-numbered people with at least 4 faces (70/30). The
     * agent's {@link Preset}s were read off this table; the frontier then uses the presets.
     */
    void selection(EmbeddingCache pub, String model) throws IOException {
        List<Integer> fitPeople = new ArrayList<>();
        List<Integer> scorePeople = new ArrayList<>();
        int[] counts = new int[pub.classes()];
        for (int y : pub.labels()) {
            counts[y]++;
        }
        for (int c = 0; c < pub.classes(); c++) {
            if (c % 2 == 0) {
                fitPeople.add(c);
            } else if (counts[c] >= 4) {
                scorePeople.add(c);
            }
        }
        EmbeddingCache fitSet = pub.subset(fitPeople);
        EmbeddingCache scoreSet = pub.subset(scorePeople);
        EmbeddingBasis half = fitPublic(fitSet, model, "lfw-public even people", BASIS_DIRECTIONS);
        StratifiedSplit split = StratifiedSplit.of(scoreSet.labels(), scoreSet.classes(), TRAIN_FRACTION, -1, 1);
        double[][] train = StratifiedSplit.select(scoreSet.x(), split.train());
        double[][] test = StratifiedSplit.select(scoreSet.x(), split.test());
        int[] yTrain = StratifiedSplit.select(scoreSet.labels(), split.train());
        int[] yTest = StratifiedSplit.select(scoreSet.labels(), split.test());
        int[] ks = {8, 16, 24, 32, 48, 64};
        List<String> lines = new ArrayList<>();
        lines.add("epsilon,noise,k,radius,val_f1,best_for_noise,preset_k,preset_radius");
        Progress progress = new Progress(System.out, epsilons.length * Noise.values().length);
        for (double eps : epsilons) {
            for (Noise noise : Noise.values()) {
                List<String> cand = new ArrayList<>();
                double best = -1;
                String bestKey = "";
                for (int k : ks) {
                    int[] radii = noise == Noise.SIGN_CAP ? new int[] {0, 1, 2, 3, 4, 6, 8, 12, 16} : new int[] {0};
                    for (int r : radii) {
                        if (r >= k / 2 && r > 0) {
                            continue;
                        }
                        EmbeddingMechanism m;
                        try {
                            m = new EmbeddingMechanism(half, true, noise, k, r, eps, seeded("select", noise.name(), eps, k * 100 + r));
                        } catch (IllegalArgumentException tooSmall) {
                            continue;
                        }
                        double f = score(releaseAll(m, train), yTrain, releaseAll(m, test), yTest, scoreSet.classes());
                        String key = k + "," + r;
                        cand.add(String.format(Locale.ROOT, "%s,%s,%d,%d,%.4f", fmt(eps), noise.wireName, k, r, f));
                        if (f > best) {
                            best = f;
                            bestKey = key;
                        }
                    }
                }
                Preset p = Preset.forEpsilon(noise, eps);
                for (String c : cand) {
                    String[] parts = c.split(",");
                    boolean isBest = (parts[2] + "," + parts[3]).equals(bestKey);
                    lines.add(c + "," + isBest + "," + p.k() + "," + p.radius());
                }
                progress.step("selection " + noise.wireName + " ε" + fmt(eps));
            }
        }
        Files.write(out.resolve("deep-selection.csv"), lines);
    }

    // ---------------------------------------------------------------- outputs

    void writeFrontier(String set, List<Row> rows) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("deep-frontier-" + set + ".csv")))) {
            w.println("family,epsilon_per_face,f1_mean,f1_sd,f1_per_seed,guarantee");
            for (Row r : rows) {
                w.printf(Locale.ROOT, "%s,%s,%.4f,%.4f,%s,%s%n", r.family(), fmt(r.epsilon()), r.mean(), r.sd(),
                        String.join(";", Arrays.stream(r.f1()).mapToObj(v -> String.format(Locale.ROOT, "%.4f", v))
                                .toList()), r.guarantee().replace(',', ';'));
            }
        }
        List<Charts.Series> series = new ArrayList<>();
        Map<String, List<Row>> byFamily = new LinkedHashMap<>();
        for (Row r : rows) {
            if (r.epsilon() > 0) {
                byFamily.computeIfAbsent(r.family(), k -> new ArrayList<>()).add(r);
            }
        }
        for (var e : byFamily.entrySet()) {
            List<Row> rs = e.getValue();
            if (rs.size() < 2) {
                continue;
            }
            series.add(new Charts.Series("deep: " + e.getKey() + " (" + rs.get(0).guarantee().split(";")[0] + ")",
                    rs.stream().mapToDouble(Row::epsilon).toArray(), rs.stream().mapToDouble(Row::mean).toArray(),
                    rs.stream().mapToDouble(Row::sd).toArray(), e.getKey().startsWith("reference"), null));
        }
        rows.stream().filter(r -> r.epsilon() == 0).findFirst().ifPresent(none -> series.add(new Charts.Series(
                "deep: no privacy", new double[] {epsilons[0], epsilons[epsilons.length - 1]},
                new double[] {none.mean(), none.mean()}, null, true, Color.GRAY)));
        series.addAll(pixelFamilies(set));
        Charts.line(out.resolve("deep-frontier-" + set + ".png"), "Deep-embedding LDP frontier, " + set
                + " (weighted F1, " + seeds + " seeds)", "ε per face", "weighted F1", true, Charts.YAxis.UNIT,
                Styler.LegendPosition.OutsideS, 1000, 760, series);
    }

    /** The pixel families' honest curves from FrontierEvaluation's CSV, when it was run for this set. */
    List<Charts.Series> pixelFamilies(String set) throws IOException {
        Path csv = out.resolve("frontier-" + set + ".csv");
        if (!Files.exists(csv)) {
            return List.of();
        }
        List<Charts.Series> series = new ArrayList<>();
        for (String family : List.of("best-val-all", "best-val-label-free")) {
            List<double[]> pts = new ArrayList<>();
            for (String line : Files.readAllLines(csv)) {
                String[] f = line.split(",");
                if (f[0].equals(family)) {
                    pts.add(new double[] {Double.parseDouble(f[1]), Double.parseDouble(f[4])});
                }
            }
            if (!pts.isEmpty()) {
                series.add(new Charts.Series("pixels: " + family + " (frontier-" + set + ".csv)",
                        pts.stream().mapToDouble(p -> p[0]).toArray(), pts.stream().mapToDouble(p -> p[1]).toArray(),
                        null, true, family.equals("best-val-all") ? Color.DARK_GRAY : Color.LIGHT_GRAY));
            }
        }
        return series;
    }

    /** F1 against the number of enrolled people, at one ε, from the frontier's rows. */
    void scaling(List<Row> rows, double epsilon) throws IOException {
        Map<String, Integer> people = new LinkedHashMap<>();
        List<String> lines = new ArrayList<>();
        lines.add("set,people,family,epsilon_per_face,f1_mean,f1_sd");
        Map<String, List<double[]>> pts = new LinkedHashMap<>();
        for (Row r : rows) {
            if (r.epsilon() != 0 && r.epsilon() != epsilon) {
                continue;
            }
            if (r.family().endsWith("-mlp")) {
                continue;
            }
            int n = peopleIn(r.set());
            people.put(r.set(), n);
            lines.add(String.format(Locale.ROOT, "%s,%d,%s,%s,%.4f,%.4f", r.set(), n, r.family(), fmt(r.epsilon()),
                    r.mean(), r.sd()));
            pts.computeIfAbsent(r.family(), k -> new ArrayList<>()).add(new double[] {n, r.mean(), r.sd()});
        }
        Files.write(out.resolve("deep-scaling.csv"), lines);
        List<Charts.Series> series = new ArrayList<>();
        for (var e : pts.entrySet()) {
            List<double[]> p = e.getValue().stream().sorted((a, b) -> Double.compare(a[0], b[0])).toList();
            if (p.size() < 2) {
                continue;
            }
            series.add(new Charts.Series(e.getKey() + (e.getKey().equals("none") ? "" : " ε " + fmt(epsilon)),
                    p.stream().mapToDouble(v -> v[0]).toArray(), p.stream().mapToDouble(v -> v[1]).toArray(),
                    p.stream().mapToDouble(v -> v[2]).toArray(), e.getKey().startsWith("reference"), null));
        }
        Charts.line(out.resolve("deep-scaling.png"), "F1 against enrolled people (deep embedding, ε " + fmt(epsilon)
                + " per face)", "enrolled people", "weighted F1", true, Charts.YAxis.UNIT,
                Styler.LegendPosition.OutsideS, 900, 640, series);
    }

    private final Map<String, Integer> peopleCount = new LinkedHashMap<>();

    int peopleIn(String set) {
        return peopleCount.getOrDefault(set, -1);
    }

    /** The open-set run ({@link DeepOpenSet}) on the same folds, released like the public-sign-cap rows. */
    List<DeepOpenSet.Row> openSet(Map<String, EmbeddingCache> sets, EmbeddingCache strangers, double epsilon)
            throws IOException {
        List<DeepOpenSet.Row> rows = DeepOpenSet.rows(sets, strangers, agentMode(Noise.SIGN_CAP, false), seeds, epsilon);
        Files.write(out.resolve("deep-openset.csv"), DeepOpenSet.csv(rows));
        Map<String, Integer> people = new LinkedHashMap<>();
        sets.forEach((name, d) -> people.put(name, d.classes()));
        DeepOpenSet.plot(rows, people, epsilon, out.resolve("deep-openset.png"));
        return rows;
    }

}
