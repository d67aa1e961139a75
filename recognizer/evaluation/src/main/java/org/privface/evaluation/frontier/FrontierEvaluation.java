package org.privface.evaluation.frontier;

import static org.privface.evaluation.Figures.fmt;
import static org.privface.evaluation.frontier.FrontierClassifiers.classMeans;
import static org.privface.evaluation.frontier.FrontierClassifiers.clip;
import static org.privface.evaluation.frontier.FrontierClassifiers.fisherDirections;
import static org.privface.evaluation.frontier.FrontierClassifiers.kmeans;
import static org.privface.evaluation.frontier.FrontierClassifiers.lda;
import static org.privface.evaluation.frontier.FrontierClassifiers.multiply;
import static org.privface.evaluation.frontier.FrontierClassifiers.ncm;
import static org.privface.evaluation.frontier.FrontierClassifiers.nearest;
import static org.privface.evaluation.frontier.FrontierClassifiers.norms;
import static org.privface.evaluation.frontier.FrontierClassifiers.quantile;
import static org.privface.evaluation.frontier.FrontierClassifiers.scaled;
import static org.privface.evaluation.frontier.FrontierClassifiers.table;
import static org.privface.evaluation.frontier.FrontierClassifiers.truncate;
import static org.privface.evaluation.frontier.FrontierClassifiers.wiener;
import static org.privface.evaluation.frontier.FrontierFamilies.DELTA;
import static org.privface.evaluation.frontier.FrontierFamilies.INNER_FRACTION;
import static org.privface.evaluation.frontier.FrontierFamilies.PCA_DIM;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.image.OpenCv;
import org.privface.evaluation.EvalOptions;
import org.privface.evaluation.Figures;
import org.privface.evaluation.Metrics;
import org.privface.evaluation.MlpInputs;
import org.privface.evaluation.Progress;
import org.privface.evaluation.StratifiedSplit;
import org.privface.evaluation.frontier.FrontierClassifiers.Released;
import org.privface.evaluation.frontier.FrontierFamilies.Classifier;
import org.privface.evaluation.frontier.FrontierFamilies.Config;
import org.privface.evaluation.frontier.FrontierFamilies.Pick;
import org.privface.evaluation.frontier.FrontierFamilies.Group;
import org.privface.evaluation.frontier.FrontierFamilies.Noise;
import org.privface.evaluation.frontier.FrontierFamilies.Space;
import org.privface.evaluation.frontier.FrontierReport.Row;
import org.privface.privacy.EigenBasis;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.SeededRandom;
import org.privface.privacy.gdp.MuGdp;
import org.privface.privacy.gdp.SecureGaussian;
import org.privface.recognizer.model.MlpModel;
import org.privface.recognizer.model.MlpOptions;
import org.privface.recognizer.model.MlpTrainer;

/**
 * Issue 11: the utility frontier of honest per-face local DP on lfw5 and ORL. Every point is PEEP's
 * protocol (stratified 70/30 split, 5 seeds, weighted F1) with both the enrollment (training) and
 * the query (test) faces released through the mechanism at the stated per-face ε, each face once
 * (r1) unless the name says r4 (four independent releases per enrolled face: enrollment ε = 4ε for
 * pure mechanisms, μ√4 for Gaussian ones; the query ε is unchanged).
 *
 * <p>Pipeline of one release, everything fitted on the training split only and then treated as
 * public (as the agent treats its basis): eigenface coordinates ({@link EigenBasis}); a reduction
 * to a release space (the first nc coordinates, optionally scaled by λ^-α; or Fisher directions
 * fitted with the enrollment identities, within-class whitened); clipping to an L1 or L2 ball whose
 * radius is a quantile of the training faces' norms; then noise from {@link SecureLaplace}
 * (Laplace(2R/ε), ε-LDP) or {@link SecureGaussian} (σ = 2τ/μ with μ = {@link MuGdp#muFor}(ε, δ),
 * which is the exact (analytic) calibration of the Gaussian mechanism, so (ε, δ)-LDP with
 * δ = 1e-5), or k-ary randomized response on a quantized code (ε-LDP), with its coin from a
 * {@link SecureRandom}. The per-seed generators are SHA1PRNG instances seeded for a reproducible
 * CSV, as in {@code papers.PeepEvaluation}; production uses a DRBG.
 *
 * <p>Hyper-parameters (nc, α, clip quantile, Fisher dimensions, code size) are chosen per ε and per
 * seed on a validation split carved from the training split (75/25, stratified; basis, clip radii
 * and classifier refitted on the 75%); only the chosen configuration is then scored on the test
 * split. Rows ending in {@code -val} are these honest curves; {@code best-val-*} picks, per seed and
 * ε, the family whose chosen configuration scores best on fresh validation noise (which must also
 * beat releasing nothing). Rows without {@code -val} are fixed configurations.
 *
 * <pre>mvn -B -q -Pfrontier-eval install -DskipTests</pre>
 */
public final class FrontierEvaluation {
    static final double[] EPSILONS = {0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
    /**
     * Independent noise draws whose validation F1 is averaged per configuration: one draw on a
     * validation set of a few hundred faces is too noisy to rank configurations at small ε.
     */
    static final int VALIDATION_DRAWS = 3;

    /** Test F1 per seed of a fixed or derived configuration, with what its row states. */
    record Extra(double[] f1, int nc, int enrollReleases, String note) {
    }

    private final LabelledFaces data;
    private final String name;
    private final Path out;
    private final int seeds;
    private final double[] epsilons;
    private final double[] mlpEpsilons;
    private final MlpOptions mlp;
    private final int classes;
    private final List<Group> groups;
    private final Map<Double, Double> muCache = new HashMap<>();
    private Progress progress;

    FrontierEvaluation(LabelledFaces data, String name, Path out, int seeds, double[] epsilons, double[] mlpEpsilons,
                       MlpOptions mlp) {
        this.mlp = mlp;
        this.data = data;
        this.name = name;
        this.out = out;
        this.seeds = seeds;
        this.epsilons = epsilons;
        // The MLP runs on configurations the grid's validation chose, so only at ε on the grid.
        this.mlpEpsilons = Arrays.stream(mlpEpsilons).filter(e -> Arrays.stream(epsilons).anyMatch(x -> x == e))
                .toArray();
        this.classes = data.names().size();
        this.groups = FrontierFamilies.groups(classes, data.size());
    }

    public static void main(String[] args) throws Exception {
        org.privface.agent.dataset.BadDataset.exitOnError(() -> run(args));
    }

    /** The command; a bad data-set folder ends it with a message naming the file (exit status 2), not a stack trace. */
    static void run(String[] args) throws Exception {
        Map<String, String> opt = EvalOptions.parse(Map.of("--datasets", FaceDatasets.root().map(Path::toString)
                .orElse("../shared/datasets"), "--out", "docs/results", "--seeds", "5", "--sets", "lfw5,orl",
                "--eps", Arrays.stream(EPSILONS).mapToObj(Figures::fmt).collect(Collectors.joining(",")),
                "--mlp-eps", "5,20,100", "--mlp-epochs", "60"), args);
        OpenCv.load();
        Path datasets = Path.of(opt.get("--datasets"));
        Path out = Files.createDirectories(Path.of(opt.get("--out")));
        int seeds = Integer.parseInt(opt.get("--seeds"));
        double[] eps = parseList(opt.get("--eps"));
        double[] mlpEps = "none".equals(opt.get("--mlp-eps")) ? new double[0] : parseList(opt.get("--mlp-eps"));
        MlpOptions mlp = MlpOptions.small().withEpochs(Integer.parseInt(opt.get("--mlp-epochs")));
        long t0 = System.nanoTime();
        for (String set : opt.get("--sets").split(",")) {
            Path dir = datasets.resolve(set);
            if (!Files.isDirectory(dir)) {
                System.err.println("skipping " + set + ": " + dir + " not found (set FACE_DATASETS)");
                continue;
            }
            LabelledFaces data = set.startsWith("orl") ? FaceDatasets.orl(dir) : FaceDatasets.lfw(dir);
            new FrontierEvaluation(data, set, out, seeds, eps, mlpEps, mlp).run();
        }
        System.err.printf(Locale.ROOT, "frontier evaluation took %.0f s%n", (System.nanoTime() - t0) / 1e9);
    }

    // ---------------------------------------------------------------------------------------------
    // Folds: eigen-coordinates of a fitting set and an evaluation set, and the release spaces.

    /** One fit/evaluate pair: the basis and everything else is fitted on {@code fit} only. */
    final class Fold {
        final String tag;
        final double[][] fit;
        final double[][] eval;
        final double[] lambda;
        final int[] yFit;
        final int[] yEval;
        private final Map<String, double[][][]> spaces = new HashMap<>();
        private final Map<String, double[][]> codebooks = new HashMap<>();

        Fold(String tag, int[] fitIdx, int[] evalIdx) {
            this.tag = tag;
            double[][] faces = Arrays.stream(fitIdx).mapToObj(i -> data.faces()[i]).toArray(double[][]::new);
            // Small sets span fewer than PCA_DIM directions: keep what carries variance (spaces are capped to it).
            EigenBasis basis = EigenBasis.fitUpTo(faces, PCA_DIM, FaceCrops.WIDTH, FaceCrops.HEIGHT);
            this.fit = Arrays.stream(fitIdx).mapToObj(i -> basis.project(data.faces()[i])).toArray(double[][]::new);
            this.eval = Arrays.stream(evalIdx).mapToObj(i -> basis.project(data.faces()[i])).toArray(double[][]::new);
            this.lambda = basis.eigenvalues();
            this.yFit = Arrays.stream(fitIdx).map(i -> data.labels()[i]).toArray();
            this.yEval = Arrays.stream(evalIdx).map(i -> data.labels()[i]).toArray();
        }

        /** {fit, eval} coordinates in the given space. */
        double[][][] space(Space s) {
            return spaces.computeIfAbsent(s.key(), k -> s.fisher() ? fisherSpace(s) : pcaSpace(s));
        }

        private double[][][] pcaSpace(Space s) {
            double[] scale = new double[Math.min(s.dim(), lambda.length)];
            for (int i = 0; i < scale.length; i++) {
                scale[i] = Math.pow(lambda[i] / lambda[0], -s.alpha());
            }
            return new double[][][] {scaled(fit, scale), scaled(eval, scale)};
        }

        private double[][][] fisherSpace(Space s) {
            int dim = Math.min(s.dim(), lambda.length);
            double[][] w = fisherDirections(truncate(fit, dim), yFit, classes, Math.min(s.k(), dim));
            return new double[][][] {multiply(truncate(fit, dim), w), multiply(truncate(eval, dim), w)};
        }

        /** Codebook of a code release: the class means of the fitting faces (codes 0) or k-means on them. */
        double[][] codebook(Config c) {
            return codebooks.computeIfAbsent(c.key(), k -> {
                double[][] z = space(c.space())[0];
                return c.codes() <= 0 ? classMeans(z, yFit, classes) : kmeans(z, c.codes(), seedOf(tag + "|" + k));
            });
        }
    }

    Released release(Fold f, Config c, double eps, int enrollReleases, String stream) {
        SecureRandom random = secureRandom(name + "|" + stream + "|" + f.tag + "|" + c.key() + "|" + fmt(eps) + "|r"
                + enrollReleases);
        int[] y = new int[f.yFit.length * enrollReleases];
        for (int r = 0; r < enrollReleases; r++) {
            System.arraycopy(f.yFit, 0, y, r * f.yFit.length, f.yFit.length);
        }
        if (c.noise() == Noise.NOTHING) {
            double[][] none = new double[y.length][1];
            return new Released(none, y, new double[f.yEval.length][1], 0, 1);
        }
        double[][][] z = f.space(c.space());
        if (c.noise() == Noise.RR) {
            double[][] book = f.codebook(c);
            int k = book.length;
            double[] bias = new double[k];
            if (c.codes() < 0) {
                // The LDA decision in the within-class-whitened Fisher space: squared distance - 2 log prior.
                for (int j = 0; j < k; j++) {
                    final int label = j;
                    bias[j] = -2 * Math.log(Math.max(1, Arrays.stream(f.yFit).filter(v -> v == label).count())
                            / (double) f.yFit.length);
                }
            }
            int[] fitCodes = nearest(z[0], book, bias);
            int[] evalCodes = nearest(z[1], book, bias);
            double[][] fit = new double[y.length][];
            for (int r = 0; r < enrollReleases; r++) {
                for (int i = 0; i < fitCodes.length; i++) {
                    fit[r * fitCodes.length + i] = new double[] {randomizedResponse(fitCodes[i], k, eps, random)};
                }
            }
            double[][] eval = Arrays.stream(evalCodes).mapToObj(code -> new double[] {randomizedResponse(code, k, eps,
                    random)}).toArray(double[][]::new);
            return new Released(fit, y, eval, 0, k);
        }
        boolean l1 = c.noise() == Noise.LAPLACE;
        double radius = quantile(norms(z[0], l1), c.quantile());
        double[][] clipFit = clip(z[0], radius, l1);
        double[][] clipEval = clip(z[1], radius, l1);
        double[][] fit = new double[y.length][];
        double[][] eval = new double[clipEval.length][];
        double variance;
        if (l1) {
            SecureLaplace laplace = new SecureLaplace(random);
            for (int r = 0; r < enrollReleases; r++) {
                for (int i = 0; i < clipFit.length; i++) {
                    fit[r * clipFit.length + i] = laplace.addNoise(clipFit[i], 2 * radius, eps);
                }
            }
            for (int i = 0; i < clipEval.length; i++) {
                eval[i] = laplace.addNoise(clipEval[i], 2 * radius, eps);
            }
            double b = 2 * radius / eps;
            variance = 2 * b * b;
        } else {
            SecureGaussian gaussian = new SecureGaussian(random);
            double[] sigmas = new double[clipEval[0].length]; // the space may be capped below its nominal k on small sets
            Arrays.fill(sigmas, gaussianSigma(radius, eps, sigmas.length));
            for (int r = 0; r < enrollReleases; r++) {
                for (int i = 0; i < clipFit.length; i++) {
                    fit[r * clipFit.length + i] = gaussian.addNoise(clipFit[i], sigmas);
                }
            }
            for (int i = 0; i < clipEval.length; i++) {
                eval[i] = gaussian.addNoise(clipEval[i], sigmas);
            }
            double s = SecureGaussian.effectiveSigma(sigmas[0]);
            variance = s * s;
        }
        return new Released(fit, y, eval, variance, 0);
    }

    /**
     * σ of the Gaussian mechanism on an L2 ball of radius τ at (ε, δ): the L2 sensitivity is 2τ, and
     * 2τ/σ must not exceed μ = muFor(ε, δ) less what the noise grid costs (as in GaussianMechanism).
     */
    double gaussianSigma(double tau, double eps, int dims) {
        double mu = mu(eps);
        double grid = SecureGaussian.roundingMu(dims);
        if (!(mu > 2 * grid)) {
            throw new IllegalArgumentException("epsilon " + eps + " is too small for the noise grid");
        }
        return 2 * tau / (mu - grid);
    }

    double mu(double eps) {
        return muCache.computeIfAbsent(eps, e -> MuGdp.muFor(e, DELTA));
    }

    /** k-ary randomized response: the true code with probability e^ε/(e^ε + k - 1), else a uniform other one. */
    static int randomizedResponse(int code, int k, double eps, SecureRandom random) {
        double keep = 1 / (1 + (k - 1) * Math.exp(-eps));
        double u = ((random.nextLong() >>> 11) + 1) * 0x1.0p-53;
        if (u <= keep) {
            return code;
        }
        return (code + 1 + random.nextInt(k - 1)) % k;
    }

    /** Weighted F1 of one classifier on one release. */
    double score(Released r, Classifier c, int[] yEval, int seed) {
        int[] predicted = switch (c) {
            case LDA -> lda(r.fit(), r.yFit(), r.eval(), classes);
            case NCM -> ncm(r.fit(), r.yFit(), r.eval(), classes, null);
            case WIENER -> wiener(r, classes);
            case TABLE -> table(r, classes);
            case MLP -> mlp(r, seed);
        };
        return Metrics.weighted(yEval, predicted, classes).f1();
    }

    private int[] mlp(Released r, int seed) {
        try (MlpModel model = new MlpTrainer().train(MlpInputs.floats(r.fit()), r.yFit(), classes,
                mlp.withSeed(seed + 1))) {
            return model.predict(MlpInputs.floats(r.eval()));
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The evaluation.

    void run() throws IOException {
        int perSeed = groups.size() * epsilons.length + 1 + 2 * mlpEpsilons.length + 2;
        progress = new Progress(System.err, Math.max(1, seeds * perSeed));
        System.err.printf("%s: %d faces of %d people, %d seeds, %d configurations per epsilon%n", name, data.size(),
                classes, seeds, groups.stream().mapToInt(g -> g.grid().size()).sum());
        // family -> eps -> per-seed picks
        Map<String, Map<Double, Pick[]>> picks = new LinkedHashMap<>();
        Map<String, Group> groupOf = new HashMap<>();
        Map<String, Classifier> classifierOf = new HashMap<>();
        for (Group g : groups) {
            for (Classifier c : g.classifiers()) {
                picks.put(g.family(c), new LinkedHashMap<>());
                groupOf.put(g.family(c), g);
                classifierOf.put(g.family(c), c);
            }
        }
        List<Row> rows = new ArrayList<>();
        Map<String, double[]> fixed = new LinkedHashMap<>();
        Map<String, Extra> extra = new LinkedHashMap<>();
        List<Fold> testFolds = new ArrayList<>();
        Map<String, Double> seconds = new LinkedHashMap<>();
        for (int s = 0; s < seeds; s++) {
            StratifiedSplit outer = StratifiedSplit.of(data.labels(), classes, 0.7, -1, 1000L + s);
            int[] trainLabels = Arrays.stream(outer.train()).map(i -> data.labels()[i]).toArray();
            StratifiedSplit inner = StratifiedSplit.of(trainLabels, classes, INNER_FRACTION, -1, 2000L + s);
            Fold val = new Fold("s" + s + "-val", Arrays.stream(inner.train()).map(i -> outer.train()[i]).toArray(),
                    Arrays.stream(inner.test()).map(i -> outer.train()[i]).toArray());
            Fold test = new Fold("s" + s + "-test", outer.train(), outer.test());
            testFolds.add(test);
            for (Group g : groups) {
                for (double eps : epsilons) {
                    // Validation: every configuration, every classifier of the group on one release.
                    Map<Classifier, Config> best = new HashMap<>();
                    Map<Classifier, Double> bestF1 = new HashMap<>();
                    long t0 = System.nanoTime();
                    for (Config c : g.grid()) {
                        double[] f1 = new double[g.classifiers().size()];
                        for (int draw = 0; draw < VALIDATION_DRAWS; draw++) {
                            Released r = release(val, c, eps, 1, "val" + draw);
                            for (int j = 0; j < f1.length; j++) {
                                f1[j] += score(r, g.classifiers().get(j), val.yEval, s) / VALIDATION_DRAWS;
                            }
                        }
                        for (int j = 0; j < f1.length; j++) {
                            Classifier cl = g.classifiers().get(j);
                            double f = f1[j];
                            if (f > bestF1.getOrDefault(cl, Double.NEGATIVE_INFINITY)) {
                                bestF1.put(cl, f);
                                best.put(cl, c);
                            }
                        }
                    }
                    // The maximum over many noisy validation scores is biased upwards (winner's curse), so
                    // the chosen configuration is scored again on fresh noise draws: that unbiased score is
                    // what families are compared by, and what must beat releasing nothing.
                    Map<Classifier, Double> confirmed = new HashMap<>();
                    for (Classifier cl : g.classifiers()) {
                        double f = 0;
                        for (int draw = 0; draw < VALIDATION_DRAWS; draw++) {
                            f += score(release(val, best.get(cl), eps, 1, "confirm" + draw), cl, val.yEval, s)
                                    / VALIDATION_DRAWS;
                        }
                        confirmed.put(cl, f);
                    }
                    // Test: the chosen configuration only, refitted on the whole training split.
                    Map<Config, Released> cache = new HashMap<>();
                    for (Classifier cl : g.classifiers()) {
                        Config c = best.get(cl);
                        Released r = cache.computeIfAbsent(c, k -> release(test, k, eps, 1, "test"));
                        double f = score(r, cl, test.yEval, s);
                        picks.get(g.family(cl)).computeIfAbsent(eps, k -> new Pick[seeds])[s] = new Pick(c,
                                confirmed.get(cl), f);
                    }
                    seconds.merge(g.name(), (System.nanoTime() - t0) / 1e9, Double::sum);
                    progress.step(name + " s" + s + " " + g.name() + " eps=" + fmt(eps));
                }
            }
            for (Config c : FrontierFamilies.fixedConfigs(classes)) {
                for (double eps : epsilons) {
                    double f = score(release(test, c, eps, 1, "test"), Classifier.LDA, test.yEval, s);
                    fixed.computeIfAbsent(c.key() + "-lda-r1|" + fmt(eps), k -> new double[seeds])[s] = f;
                }
            }
            // Augmentation: four releases per enrolled face, with the configuration the r1 validation chose.
            for (double eps : epsilons) {
                Config c = picks.get("fisher-lap-l1-lda-r1").get(eps)[s].config();
                double f = score(release(test, c, eps, 4, "test"), Classifier.LDA, test.yEval, s);
                put(extra, "fisher-lap-l1-lda-r4-val", eps, s, f, c, 4);
            }
            progress.step(name + " s" + s + " fixed configurations");
            long tMlp = System.nanoTime();
            // The MLP at a few points, on the configuration the LDA validation chose.
            for (double eps : mlpEpsilons) {
                Config c = picks.get("fisher-lap-l1-lda-r1").get(eps)[s].config();
                double f = score(release(test, c, eps, 1, "test"), Classifier.MLP, test.yEval, s);
                put(extra, "fisher-lap-l1-mlp-r1-val", eps, s, f, c, 1);
                progress.step(name + " s" + s + " mlp eps=" + fmt(eps));
                Config p = picks.get("pca-lap-l1-lda-r1").get(eps)[s].config();
                f = score(release(test, p, eps, 1, "test"), Classifier.MLP, test.yEval, s);
                put(extra, "pca-lap-l1-mlp-r1-val", eps, s, f, p, 1);
                progress.step(name + " s" + s + " mlp pca eps=" + fmt(eps));
            }
            if (mlpEpsilons.length > 0) {
                double eps = mlpEpsilons[mlpEpsilons.length / 2];
                Config c = picks.get("fisher-lap-l1-lda-r1").get(eps)[s].config();
                double f = score(release(test, c, eps, 4, "test"), Classifier.MLP, test.yEval, s);
                put(extra, "fisher-lap-l1-mlp-r4-val", eps, s, f, c, 4);
            }
            progress.step(name + " s" + s + " mlp r4");
            // Without privacy: the PEEP pipeline (128 eigen-coordinates, MLP) and the Fisher + LDA one.
            Released clean = cleanRelease(test, Space.pca(PCA_DIM, 0));
            put(extra, "none-pca128-mlp", Double.POSITIVE_INFINITY, s, score(clean, Classifier.MLP, test.yEval, s),
                    new Config(Space.pca(PCA_DIM, 0), Noise.LAPLACE, 1, 0), 1);
            seconds.merge("mlp", (System.nanoTime() - tMlp) / 1e9, Double::sum);
            progress.step(name + " s" + s + " no privacy");
            Space full = Space.fisher(128, Math.min(128, classes - 1));
            put(extra, "none-" + full.key() + "-lda", Double.POSITIVE_INFINITY, s, score(cleanRelease(test, full),
                    Classifier.LDA, test.yEval, s), new Config(full, Noise.LAPLACE, 1, 0), 1);
            put(extra, "none-pca64-lda", Double.POSITIVE_INFINITY, s, score(cleanRelease(test, Space.pca(64, 0)),
                    Classifier.LDA, test.yEval, s), new Config(Space.pca(64, 0), Noise.LAPLACE, 1, 0), 1);
        }
        // Rows: validation-selected families.
        for (Map.Entry<String, Map<Double, Pick[]>> e : picks.entrySet()) {
            for (double eps : epsilons) {
                rows.add(pickRow(e.getKey() + "-val", eps, e.getValue().get(eps)));
            }
        }
        // The best family per seed and ε by validation F1: over all families, over those that release a
        // vector (no codes), and over the label-free ones (eigenface basis, no Fisher directions).
        Map<String, Map<Double, Pick[]>> bestPicks = new LinkedHashMap<>();
        Map<String, Map<Double, String[]>> bestFamilies = new LinkedHashMap<>();
        for (String selection : List.of("all", "vector", "label-free")) {
            for (double eps : epsilons) {
                Pick[] chosen = new Pick[seeds];
                String[] families = new String[seeds];
                for (int s = 0; s < seeds; s++) {
                    for (Map.Entry<String, Map<Double, Pick[]>> e : picks.entrySet()) {
                        Group g = groupOf.get(e.getKey());
                        boolean codes = g.grid().get(0).noise() == Noise.RR;
                        if (selection.equals("label-free") && g.supervised() || selection.equals("vector") && codes) {
                            continue;
                        }
                        Pick p = e.getValue().get(eps)[s];
                        if (chosen[s] == null || p.valF1() > chosen[s].valF1()) {
                            chosen[s] = p;
                            families[s] = e.getKey();
                        }
                    }
                }
                Row r = pickRow("best-val-" + selection, eps, chosen);
                String detail = String.join(";", Arrays.stream(families).map(f -> f.replace("-r1", "")).toList());
                rows.add(new Row(r.mechanism(), r.epsilon(), r.delta(), r.mu(), r.epsilonEnrollment(), r.nc(), r.f1(),
                        r.valF1(), detail + " / " + r.chosen()));
                bestPicks.computeIfAbsent(selection, k -> new LinkedHashMap<>()).put(eps, chosen);
                bestFamilies.computeIfAbsent(selection, k -> new LinkedHashMap<>()).put(eps, families);
            }
        }
        for (Map.Entry<String, double[]> e : fixed.entrySet()) {
            String[] parts = e.getKey().split("\\|");
            double eps = Double.parseDouble(parts[1]);
            Config c = FrontierFamilies.fixedConfigs(classes).stream().filter(x -> parts[0].startsWith(x.key() + "-")).findFirst().orElseThrow();
            rows.add(new Row(parts[0], eps, c.delta(), Double.NaN, eps, c.space().released(), e.getValue(), Double.NaN,
                    "fixed"));
        }
        for (Map.Entry<String, Extra> e : extra.entrySet()) {
            String[] parts = e.getKey().split("\\|");
            double eps = parts[1].equals("inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(parts[1]);
            Extra x = e.getValue();
            rows.add(new Row(parts[0], eps, 0, Double.NaN, x.enrollReleases() * eps, x.nc(), x.f1(), Double.NaN,
                    x.note()));
        }
        System.err.println(name + ": seconds per group " + seconds.entrySet().stream().map(e -> e.getKey() + " "
                + Math.round(e.getValue())).collect(Collectors.joining(", ")));
        FrontierReport report = new FrontierReport(name, out, seeds, epsilons, groups);
        report.writeCsv(rows);
        report.writeDetail(rows);
        report.printFrontier(rows);
        report.writePresets("frontier-presets-" + name + ".csv", "all families", FrontierPresets.presets(epsilons, bestPicks.get("all"),
                bestFamilies.get("all"), testFolds, classifierOf, this::presetScore));
        report.writePresets("frontier-presets-vector-" + name + ".csv", "vector releases only (no codes)", FrontierPresets.presets(
                epsilons, bestPicks.get("vector"), bestFamilies.get("vector"), testFolds, classifierOf, this::presetScore));
        FrontierPlot.chart(out.resolve("frontier-" + name + ".png"), name, out, epsilons, groups, rows);
    }

    /** Records seed s of a derived configuration; the note keeps the configurations chosen per seed. */
    private void put(Map<String, Extra> extra, String mechanism, double eps, int s, double f1, Config c, int releases) {
        Extra x = extra.computeIfAbsent(mechanism + "|" + fmt(eps), k -> new Extra(new double[seeds],
                c.space().released(), releases, ""));
        x.f1()[s] = f1;
        extra.put(mechanism + "|" + fmt(eps), new Extra(x.f1(), x.nc(), releases, x.note().isEmpty() ? c.key()
                : x.note() + ";" + c.key()));
    }

    private Released cleanRelease(Fold f, Space s) {
        double[][][] z = f.space(s);
        return new Released(z[0], f.yFit, z[1], 0, 0);
    }

    private Row pickRow(String mechanism, double eps, Pick[] p) {
        double[] f1 = Arrays.stream(p).mapToDouble(Pick::testF1).toArray();
        double val = Arrays.stream(p).mapToDouble(Pick::valF1).average().orElse(Double.NaN);
        boolean gaussian = Arrays.stream(p).anyMatch(x -> x.config().noise() == Noise.GAUSSIAN);
        String chosen = String.join(";", Arrays.stream(p).map(x -> x.config().key()).toList());
        return new Row(mechanism, eps, gaussian ? DELTA : 0, gaussian ? mu(eps) : Double.NaN, eps, modalNc(p), f1, val,
                chosen);
    }

    /** Test F1 of a preset's configuration on one seed's test split, on its own noise stream. */
    private double presetScore(Fold f, Config c, double eps, Classifier cl, int seed) {
        return score(release(f, c, eps, 1, "preset"), cl, f.yEval, seed);
    }

    private static int modalNc(Pick[] p) {
        Map<Integer, Long> counts = Arrays.stream(p).collect(Collectors.groupingBy(x -> x.config().space().released(),
                Collectors.counting()));
        return counts.entrySet().stream().max(Map.Entry.<Integer, Long>comparingByValue()
                .thenComparing(Map.Entry.comparingByKey())).orElseThrow().getKey();
    }

    /** A reproducible SecureRandom stream per release, so a rerun gives the same CSV; production uses a DRBG. */
    static SecureRandom secureRandom(String key) {
        return SeededRandom.of(seedOf(key));
    }

    static long seedOf(String key) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            long v = 0;
            for (int i = 0; i < 8; i++) {
                v = (v << 8) | (h[i] & 0xff);
            }
            return v;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static double[] parseList(String s) {
        return Arrays.stream(s.split(",")).filter(x -> !x.isBlank()).mapToDouble(Double::parseDouble).toArray();
    }
}
