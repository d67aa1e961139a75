package org.privface.evaluation;

import java.awt.Color;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Collectors;

import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.CommonOps_DDRM;
import org.ejml.dense.row.factory.DecompositionFactory_DDRM;
import org.ejml.interfaces.decomposition.CholeskyDecomposition_F64;
import org.ejml.interfaces.decomposition.EigenDecomposition_F64;
import org.knowm.xchart.style.Styler;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.OpenCv;
import org.privface.privacy.EigenBasis;
import org.privface.privacy.fisher.FisherBasis;
import org.privface.privacy.SecureLaplace;
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
 * CSV, as in {@link PeepEvaluation}; production uses a DRBG.
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
    static final double DELTA = MuGdp.DEFAULT_DELTA;
    /** Share of the training split that validation models are fitted on; the rest is the validation set. */
    static final double INNER_FRACTION = 0.75;
    /**
     * Independent noise draws whose validation F1 is averaged per configuration: one draw on a
     * validation set of a few hundred faces is too noisy to rank configurations at small ε.
     */
    static final int VALIDATION_DRAWS = 3;
    /** Eigenface coordinates computed per fold; the release spaces use at most this many. */
    static final int PCA_DIM = 128;
    static final int[] NCS = {4, 8, 16, 32, 64};
    static final int[] FISHER_PCA = {32, 64, 128};
    static final double[] LAPLACE_QUANTILES = {0.25, 0.5, 0.75, 0.9};
    static final double[] GAUSS_QUANTILES = {0.25, 0.5, 0.75};
    /** Preset bands: the largest per-face ε a deployment is willing to spend per query face. */
    static final double[] BANDS = {1, 10, 20, 100, 1000};
    /** A preset takes the smallest ε whose validation F1 is this close to the best in its band. */
    static final double PRESET_TOLERANCE = 0.01;

    enum Noise {
        LAPLACE("lap-l1"), GAUSSIAN("gauss-l2"), RR("rr"),
        /** Nothing is released (ε = 0): the recognizer can only answer the enrollment prior's majority class. */
        NOTHING("prior-only");

        final String tag;

        Noise(String tag) {
            this.tag = tag;
        }
    }

    enum Classifier {
        /** Gaussian classifier: class means and pooled covariance of the noisy enrollments (= within-class + noise), priors. */
        LDA("lda"),
        /** Nearest class mean of the noisy enrollments. */
        NCM("ncm"),
        /** Per-coordinate Wiener shrinkage of the query towards the enrollment mean (known noise variance), then NCM. */
        WIENER("wiener-ncm"),
        /** For codes: the class that most often produced the noisy code among the noisy enrollments. */
        TABLE("table"),
        /** The recognizer's MLP (small preset) trained on the noisy enrollments. */
        MLP("mlp");

        final String tag;

        Classifier(String tag) {
            this.tag = tag;
        }
    }

    /**
     * The space a face is released in: the first {@code dim} eigen-coordinates scaled by λ^-α, or
     * the top {@code k} Fisher directions of the first {@code dim} eigen-coordinates.
     */
    record Space(boolean fisher, int dim, int k, double alpha) {
        static Space pca(int nc, double alpha) {
            return new Space(false, nc, nc, alpha);
        }

        static Space fisher(int p, int k) {
            return new Space(true, p, k, 0);
        }

        String key() {
            return fisher ? "fisher" + dim + "-k" + k : "pca" + dim + (alpha == 0 ? "" : "-w" + alphaName(alpha));
        }

        /** Number of coordinates released. */
        int released() {
            return k;
        }
    }

    /**
     * One mechanism configuration: space, noise, clip quantile (L1/L2) or code (RR: K &gt; 0 k-means
     * centres, 0 the nearest class mean, -1 the LDA decision, i.e. class means with priors).
     */
    record Config(Space space, Noise noise, double quantile, int codes) {
        String key() {
            return switch (noise) {
                case NOTHING -> "prior-only";
                case RR -> space.key() + "-rr-" + (codes == 0 ? "classmeans" : codes < 0 ? "ldacode" : "kmeans" + codes);
                default -> space.key() + "-" + noise.tag + "q" + fmt(quantile);
            };
        }

        double delta() {
            return noise == Noise.GAUSSIAN ? DELTA : 0;
        }
    }

    /** A family of configurations sharing a mechanism; each classifier in it is selected separately. */
    record Group(String name, boolean supervised, List<Config> grid, List<Classifier> classifiers) {
        String family(Classifier c) {
            return name + "-" + c.tag + "-r1";
        }
    }

    /** What one seed of one family gave at one ε: the configuration, its fresh validation F1, its test F1. */
    record Pick(Config config, double valF1, double testF1) {
    }

    /** Test F1 per seed of a fixed or derived configuration, with what its row states. */
    record Extra(double[] f1, int nc, int enrollReleases, String note) {
    }

    /** A row of the frontier CSV, with the detail behind it. */
    record Row(String mechanism, double epsilon, double delta, double mu, double epsilonEnrollment, int nc,
               double[] f1, double valF1, String chosen) {
        double mean() {
            return FrontierEvaluation.mean(f1);
        }

        double sd() {
            return FrontierEvaluation.sd(f1);
        }
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
        this.groups = groups(classes);
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = EvalOptions.parse(Map.of("--datasets", FaceDatasets.root().map(Path::toString)
                .orElse("../shared/datasets"), "--out", "docs/results", "--seeds", "5", "--sets", "lfw5,orl",
                "--eps", Arrays.stream(EPSILONS).mapToObj(FrontierEvaluation::fmt).collect(Collectors.joining(",")),
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

    List<Group> groups(int classes) {
        List<Group> g = new ArrayList<>();
        // The floor every selection can fall back to: release nothing and answer the majority class.
        g.add(new Group("prior-only", false, List.of(new Config(new Space(false, 0, 0, 0), Noise.NOTHING, 0, 1)),
                List.of(Classifier.TABLE)));
        g.add(new Group("pca-lap-l1", false, grid(pcaSpaces(0), Noise.LAPLACE, LAPLACE_QUANTILES),
                List.of(Classifier.LDA, Classifier.WIENER)));
        g.add(new Group("pca-eigw-lap-l1", false, grid(pcaSpaces(1.0 / 3, 0.5), Noise.LAPLACE, LAPLACE_QUANTILES),
                List.of(Classifier.LDA)));
        g.add(new Group("pca-gauss-l2", false, grid(pcaSpaces(0), Noise.GAUSSIAN, GAUSS_QUANTILES),
                List.of(Classifier.LDA, Classifier.WIENER)));
        g.add(new Group("pca-white-gauss-l2", false, grid(pcaSpaces(0.5), Noise.GAUSSIAN, GAUSS_QUANTILES),
                List.of(Classifier.LDA)));
        List<Config> pcaCodes = new ArrayList<>();
        for (int nc : new int[] {8, 16, 32}) {
            for (double alpha : new double[] {0, 0.5}) {
                for (int m : new int[] {1, 2, 4, 8, 16, 32}) {
                    // At most a third of the validation fold's faces per code, so each centre is fitted on a few.
                    if (m * classes <= data.size() * 0.7 * INNER_FRACTION / 3) {
                        pcaCodes.add(new Config(Space.pca(nc, alpha), Noise.RR, 0, m * classes));
                    }
                }
            }
        }
        g.add(new Group("pca-rr-kmeans", false, pcaCodes, List.of(Classifier.TABLE)));
        List<Space> fisher = new ArrayList<>();
        for (int p : FISHER_PCA) {
            for (int k : fisherDims(classes)) {
                if (k <= Math.min(p, classes - 1)) {
                    fisher.add(Space.fisher(p, k));
                }
            }
        }
        g.add(new Group("fisher-lap-l1", true, grid(fisher, Noise.LAPLACE, LAPLACE_QUANTILES),
                List.of(Classifier.LDA, Classifier.NCM)));
        g.add(new Group("fisher-gauss-l2", true, grid(fisher, Noise.GAUSSIAN, GAUSS_QUANTILES), List.of(Classifier.LDA)));
        List<Config> fisherCodes = new ArrayList<>();
        for (int p : FISHER_PCA) {
            for (int code : new int[] {0, -1}) {
                fisherCodes.add(new Config(Space.fisher(p, Math.min(p, classes - 1)), Noise.RR, 0, code));
            }
        }
        g.add(new Group("fisher-rr-code", true, fisherCodes, List.of(Classifier.TABLE)));
        return g;
    }

    static int[] fisherDims(int classes) {
        return classes <= 5 ? new int[] {1, 2, 3, 4} : new int[] {4, 8, 16, classes - 1};
    }

    private static List<Space> pcaSpaces(double... alphas) {
        List<Space> s = new ArrayList<>();
        for (double a : alphas) {
            for (int nc : NCS) {
                s.add(Space.pca(nc, a));
            }
        }
        return s;
    }

    private static List<Config> grid(List<Space> spaces, Noise noise, double[] quantiles) {
        List<Config> c = new ArrayList<>();
        for (Space s : spaces) {
            for (double q : quantiles) {
                c.add(new Config(s, noise, q, 0));
            }
        }
        return c;
    }

    /** Fixed configurations scored on the test split at every ε: the nc and Fisher-k levers, and the docs' l1-clip. */
    List<Config> fixedConfigs() {
        List<Config> c = new ArrayList<>();
        c.add(new Config(Space.pca(PCA_DIM, 0), Noise.LAPLACE, 0.9, 0));
        for (int nc : NCS) {
            c.add(new Config(Space.pca(nc, 0), Noise.LAPLACE, 0.5, 0));
        }
        for (int k : fisherDims(classes)) {
            c.add(new Config(Space.fisher(128, k), Noise.LAPLACE, 0.5, 0));
        }
        return c;
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

    /** Noisy enrollment and query releases of one configuration, plus what the recognizer knows of the noise. */
    record Released(double[][] fit, int[] yFit, double[][] eval, double noiseVariance, int codes) {
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
        try (MlpModel model = new MlpTrainer().train(DeepFrontierEvaluation.floats(r.fit()), r.yFit(), classes,
                mlp.withSeed(seed + 1))) {
            return model.predict(DeepFrontierEvaluation.floats(r.eval()));
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
            for (Config c : fixedConfigs()) {
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
            Config c = fixedConfigs().stream().filter(x -> parts[0].startsWith(x.key() + "-")).findFirst().orElseThrow();
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
        writeCsv(rows);
        writeDetail(rows);
        printFrontier(rows);
        writePresets("frontier-presets-" + name + ".csv", "all families", presets(bestPicks.get("all"),
                bestFamilies.get("all"), testFolds, classifierOf));
        writePresets("frontier-presets-vector-" + name + ".csv", "vector releases only (no codes)", presets(
                bestPicks.get("vector"), bestFamilies.get("vector"), testFolds, classifierOf));
        chart(rows);
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

    private static double meanValF1(Pick[] p) {
        return Arrays.stream(p).mapToDouble(Pick::valF1).average().orElse(Double.NaN);
    }

    private static int modalNc(Pick[] p) {
        Map<Integer, Long> counts = Arrays.stream(p).collect(Collectors.groupingBy(x -> x.config().space().released(),
                Collectors.counting()));
        return counts.entrySet().stream().max(Map.Entry.<Integer, Long>comparingByValue()
                .thenComparing(Map.Entry.comparingByKey())).orElseThrow().getKey();
    }

    /**
     * Per band, on validation F1 only: the smallest grid ε in the band whose validation F1 (of the
     * best family, mean over seeds) is within {@link #PRESET_TOLERANCE} of the band's best, so a
     * preset never spends budget that buys nothing; then the configuration the validation picked
     * most often there. Its F1 is measured as a fixed configuration on every seed's test split.
     */
    private List<String[]> presets(Map<Double, Pick[]> bestAll, Map<Double, String[]> families, List<Fold> folds,
                                   Map<String, Classifier> classifierOf) {
        List<String[]> out = new ArrayList<>();
        for (double band : BANDS) {
            double[] inBand = Arrays.stream(epsilons).filter(e -> e <= band).toArray();
            if (inBand.length == 0) {
                continue;
            }
            double top = Arrays.stream(inBand).map(e -> meanValF1(bestAll.get(e))).max().orElseThrow();
            double eps = Arrays.stream(inBand).filter(e -> meanValF1(bestAll.get(e)) >= top - PRESET_TOLERANCE).min()
                    .orElseThrow();
            Pick[] p = bestAll.get(eps);
            String[] fam = families.get(eps);
            Map<String, Integer> votes = new LinkedHashMap<>();
            Map<String, Integer> at = new HashMap<>();
            for (int s = 0; s < p.length; s++) {
                String key = p[s].config().key() + "|" + fam[s];
                votes.merge(key, 1, Integer::sum);
                at.putIfAbsent(key, s);
            }
            String winner = votes.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
            Config c = p[at.get(winner)].config();
            Classifier cl = classifierOf.get(winner.split("\\|")[1]);
            double[] f1 = new double[folds.size()];
            for (int s = 0; s < folds.size(); s++) {
                Fold f = folds.get(s);
                f1[s] = score(release(f, c, eps, 1, "preset"), cl, f.yEval, s);
            }
            out.add(new String[] {"<=" + fmt(band), c.key() + "-" + cl.tag + "-r1", Integer.toString(c.space()
                    .released()), fmt(eps), c.delta() == 0 ? "0" : fmt(c.delta()), String.format(Locale.ROOT, "%.4f",
                    mean(f1)), String.format(Locale.ROOT, "%.4f", sd(f1))});
        }
        return out;
    }

    // ---------------------------------------------------------------------------------------------
    // Output.

    private void writeCsv(List<Row> rows) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("frontier-" + name + ".csv")))) {
            w.println("mechanism,epsilon_per_face,delta,nc,f1_mean,f1_sd");
            for (Row r : rows) {
                w.printf(Locale.ROOT, "%s,%s,%s,%d,%.4f,%.4f%n", r.mechanism(), fmt(r.epsilon()),
                        r.delta() == 0 ? "0" : fmt(r.delta()), r.nc(), r.mean(), r.sd());
            }
        }
    }

    private void writeDetail(List<Row> rows) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("frontier-" + name + "-detail.csv")))) {
            w.println("mechanism,epsilon_per_face,delta,mu,epsilon_enrollment,nc,f1_mean,f1_sd,val_f1_mean,f1_per_seed,"
                    + "chosen_per_seed");
            for (Row r : rows) {
                w.printf(Locale.ROOT, "%s,%s,%s,%s,%s,%d,%.4f,%.4f,%s,%s,%s%n", r.mechanism(), fmt(r.epsilon()),
                        r.delta() == 0 ? "0" : fmt(r.delta()), Double.isNaN(r.mu()) ? "" : String.format(Locale.ROOT,
                                "%.4f", r.mu()), r.mechanism().contains("-gauss-") && !Double.isInfinite(r.epsilon())
                                ? String.format(Locale.ROOT, "%.4g", r.epsilonEnrollment()) : fmt(r.epsilonEnrollment()),
                        r.nc(), r.mean(), r.sd(), Double.isNaN(r.valF1()) ? "" : String.format(Locale.ROOT, "%.4f",
                                r.valF1()), Arrays.stream(r.f1()).mapToObj(v -> String.format(Locale.ROOT, "%.4f", v))
                                .collect(Collectors.joining(";")), r.chosen());
            }
        }
    }

    private void printFrontier(List<Row> rows) {
        System.out.printf("%n%s: weighted F1 per per-face epsilon (test split, mean over %d seeds; -val = chosen on "
                + "validation)%n", name, seeds);
        List<String> families = rows.stream().map(Row::mechanism).filter(m -> m.endsWith("-val") || m.startsWith("best"))
                .distinct().toList();
        StringBuilder head = new StringBuilder(String.format("%-34s", "family \\ eps"));
        for (double e : epsilons) {
            head.append(String.format("%7s", fmt(e)));
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

    private void writePresets(String file, String what, List<String[]> presets) throws IOException {
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

    private void chart(List<Row> rows) throws IOException {
        List<Charts.Series> series = new ArrayList<>();
        Color[] palette = {new Color(31, 119, 180), new Color(174, 199, 232), new Color(255, 127, 14),
            new Color(255, 187, 120), new Color(148, 103, 189), new Color(44, 160, 44), new Color(214, 39, 40),
            new Color(140, 86, 75)};
        int i = 0;
        for (Group g : groups) {
            String family = g.family(g.classifiers().get(0)) + "-val";
            List<Row> line = rows.stream().filter(r -> r.mechanism().equals(family)).toList();
            if (g.grid().get(0).noise() == Noise.NOTHING) {
                double f = line.stream().mapToDouble(Row::mean).average().orElse(Double.NaN);
                series.add(new Charts.Series(String.format(Locale.ROOT, "release nothing, answer the majority class "
                        + "(%.3f)", f), new double[] {epsilons[0], 30000}, new double[] {f, f}, null, true, Color.RED));
                continue;
            }
            series.add(new Charts.Series(family + (g.supervised() ? " [Fisher basis: enrollment labels]" : ""),
                    line.stream().mapToDouble(Row::epsilon).toArray(), line.stream().mapToDouble(Row::mean).toArray(),
                    null, false, palette[i++ % palette.length]));
        }
        List<Row> mlp = rows.stream().filter(r -> r.mechanism().equals("fisher-lap-l1-mlp-r1-val")).toList();
        if (!mlp.isEmpty()) {
            series.add(new Charts.Series("fisher-lap-l1-mlp-r1-val (MLP at a few points)", mlp.stream()
                    .mapToDouble(Row::epsilon).toArray(), mlp.stream().mapToDouble(Row::mean).toArray(), null, true,
                    new Color(23, 190, 207)));
        }
        List<Row> best = rows.stream().filter(r -> r.mechanism().equals("best-val-all")).toList();
        series.add(new Charts.Series("BEST per eps (family + config chosen on validation)", best.stream()
                .mapToDouble(Row::epsilon).toArray(), best.stream().mapToDouble(Row::mean).toArray(), best.stream()
                .mapToDouble(Row::sd).toArray(), false, Color.BLACK));
        // Horizontal reference lines span the grid and PEEP's paper-pixel points (up to 2914 x 8).
        double lo = epsilons[0];
        double hi = 30000;
        Path peep = out.resolve("peep-" + name + ".csv");
        if (Files.exists(peep)) {
            List<double[]> pts = new ArrayList<>();
            List<double[]> l1 = new ArrayList<>();
            for (String line : Files.readAllLines(peep, StandardCharsets.UTF_8)) {
                String[] c = line.split(",");
                if (c[0].equals("paper-pixel")) {
                    pts.add(new double[] {Double.parseDouble(c[2]), Double.parseDouble(c[6])});
                } else if (c[0].equals("l1-clip")) {
                    l1.add(new double[] {Double.parseDouble(c[2]), Double.parseDouble(c[6])});
                }
            }
            series.add(new Charts.Series("PEEP published curve (our paper-pixel reproduction) at honest per-face eps "
                    + "= 2914 x eps/pixel", pts.stream().mapToDouble(p -> p[0]).toArray(), pts.stream()
                    .mapToDouble(p -> p[1]).toArray(), null, true, Color.GRAY));
            if (!l1.isEmpty()) {
                series.add(new Charts.Series("PEEP l1-clip, nc=128, MLP (docs/peep.md)", l1.stream()
                        .mapToDouble(p -> p[0]).toArray(), l1.stream().mapToDouble(p -> p[1]).toArray(), null, true,
                        Color.LIGHT_GRAY));
            }
        }
        for (Row r : rows) {
            if (Double.isInfinite(r.epsilon()) && !r.mechanism().equals("none-pca64-lda")) {
                series.add(new Charts.Series("no privacy: " + r.mechanism().substring(5) + String.format(Locale.ROOT,
                        " (%.3f)", r.mean()), new double[] {lo, hi}, new double[] {r.mean(), r.mean()}, null, true,
                        r.mechanism().contains("mlp") ? Color.DARK_GRAY : new Color(0, 100, 0)));
            }
        }
        Charts.line(out.resolve("frontier-" + name + ".png"), "Honest per-face LDP on " + name + ": weighted F1 vs "
                + "per-query-face epsilon (Gaussian rows at delta=1e-5)", "epsilon per face (log)", "weighted F1", true,
                Charts.YAxis.UNIT, Styler.LegendPosition.OutsideS, 1100, 900, series);
    }

    // ---------------------------------------------------------------------------------------------
    // Linear algebra and classifiers.

    static double[][] fisherDirections(double[][] x, int[] y, int classes, int k) {
        return FisherBasis.directions(x, y, classes, k);
    }

    /** Gaussian classifier with shared covariance and class priors (linear discriminant analysis). */
    static int[] lda(double[][] fit, int[] y, double[][] eval, int classes) {
        int n = fit.length;
        int d = fit[0].length;
        double[][] means = classMeans(fit, y, classes);
        int[] counts = new int[classes];
        DMatrixRMaj cov = new DMatrixRMaj(d, d);
        for (int i = 0; i < n; i++) {
            counts[y[i]]++;
            double[] r = new double[d];
            for (int j = 0; j < d; j++) {
                r[j] = fit[i][j] - means[y[i]][j];
            }
            FisherBasis.addOuter(cov, r, 1.0);
        }
        int present = (int) Arrays.stream(counts).filter(c -> c > 0).count();
        CommonOps_DDRM.scale(1.0 / Math.max(1, n - present), cov);
        double ridge = 1e-6 * CommonOps_DDRM.trace(cov) / d + 1e-300;
        for (int j = 0; j < d; j++) {
            cov.add(j, j, ridge);
        }
        DMatrixRMaj inv = new DMatrixRMaj(d, d);
        if (!CommonOps_DDRM.invert(cov, inv)) {
            throw new IllegalStateException("pooled covariance is singular");
        }
        double[][] coef = new double[classes][d];
        double[] bias = new double[classes];
        for (int c = 0; c < classes; c++) {
            if (counts[c] == 0) {
                bias[c] = Double.NEGATIVE_INFINITY;
                continue;
            }
            for (int a = 0; a < d; a++) {
                double s = 0;
                for (int b = 0; b < d; b++) {
                    s += inv.get(a, b) * means[c][b];
                }
                coef[c][a] = s;
            }
            double q = 0;
            for (int a = 0; a < d; a++) {
                q += coef[c][a] * means[c][a];
            }
            bias[c] = -0.5 * q + Math.log(counts[c] / (double) n);
        }
        int[] out = new int[eval.length];
        for (int i = 0; i < eval.length; i++) {
            double best = Double.NEGATIVE_INFINITY;
            for (int c = 0; c < classes; c++) {
                double s = bias[c];
                for (int a = 0; a < d; a++) {
                    s += coef[c][a] * eval[i][a];
                }
                if (s > best) {
                    best = s;
                    out[i] = c;
                }
            }
        }
        return out;
    }

    /** Nearest class mean; weights (per coordinate, squared) may be null. */
    static int[] ncm(double[][] fit, int[] y, double[][] eval, int classes, double[] weights) {
        double[][] means = classMeans(fit, y, classes);
        boolean[] present = new boolean[classes];
        for (int label : y) {
            present[label] = true;
        }
        int[] out = new int[eval.length];
        for (int i = 0; i < eval.length; i++) {
            double best = Double.POSITIVE_INFINITY;
            for (int c = 0; c < classes; c++) {
                if (!present[c]) {
                    continue;
                }
                double s = 0;
                for (int a = 0; a < eval[i].length; a++) {
                    double v = eval[i][a] - means[c][a];
                    s += (weights == null ? 1 : weights[a]) * v * v;
                }
                if (s < best) {
                    best = s;
                    out[i] = c;
                }
            }
        }
        return out;
    }

    /**
     * Wiener de-noising prior: each query coordinate is shrunk towards the enrollment mean by
     * h = s/(s + v), with v the (known) noise variance and s = max(total − v, 0) the face variance
     * estimated from the noisy enrollments; then nearest class mean.
     */
    static int[] wiener(Released r, int classes) {
        double[][] fit = r.fit();
        int d = fit[0].length;
        double[] mean = new double[d];
        for (double[] row : fit) {
            for (int j = 0; j < d; j++) {
                mean[j] += row[j] / fit.length;
            }
        }
        double[] h = new double[d];
        for (int j = 0; j < d; j++) {
            double total = 0;
            for (double[] row : fit) {
                total += (row[j] - mean[j]) * (row[j] - mean[j]) / (fit.length - 1);
            }
            double signal = Math.max(0, total - r.noiseVariance());
            h[j] = signal / (signal + r.noiseVariance() + 1e-300);
        }
        double[][] eval = new double[r.eval().length][d];
        for (int i = 0; i < eval.length; i++) {
            for (int j = 0; j < d; j++) {
                eval[i][j] = mean[j] + h[j] * (r.eval()[i][j] - mean[j]);
            }
        }
        return ncm(fit, r.yFit(), eval, classes, null);
    }

    /** The class most often seen with each noisy code among the noisy enrollments (ties: the larger class). */
    static int[] table(Released r, int classes) {
        double[][] counts = new double[r.codes()][classes];
        double[] prior = new double[classes];
        for (int i = 0; i < r.fit().length; i++) {
            counts[(int) r.fit()[i][0]][r.yFit()[i]]++;
            prior[r.yFit()[i]]++;
        }
        int[] out = new int[r.eval().length];
        for (int i = 0; i < out.length; i++) {
            double[] row = counts[(int) r.eval()[i][0]];
            double best = Double.NEGATIVE_INFINITY;
            for (int c = 0; c < classes; c++) {
                // A vanishing prior term breaks ties (and empty rows) towards the larger class.
                double s = row[c] + 1e-9 * prior[c];
                if (s > best) {
                    best = s;
                    out[i] = c;
                }
            }
        }
        return out;
    }

    static double[][] classMeans(double[][] x, int[] y, int classes) {
        return FisherBasis.classMeans(x, y, classes);
    }

    /** k-means++ then Lloyd; the seed only shapes the public codebook, never the noise. */
    static double[][] kmeans(double[][] x, int k, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int n = x.length;
        double[][] centres = new double[k][];
        centres[0] = x[random.nextInt(n)].clone();
        double[] dist = new double[n];
        Arrays.fill(dist, Double.POSITIVE_INFINITY);
        for (int c = 1; c < k; c++) {
            double total = 0;
            for (int i = 0; i < n; i++) {
                dist[i] = Math.min(dist[i], squared(x[i], centres[c - 1]));
                total += dist[i];
            }
            double u = random.nextDouble() * total;
            int pick = n - 1;
            for (int i = 0; i < n; i++) {
                u -= dist[i];
                if (u <= 0) {
                    pick = i;
                    break;
                }
            }
            centres[c] = x[pick].clone();
        }
        for (int it = 0; it < 30; it++) {
            int[] a = nearest(x, centres);
            double[][] sums = new double[k][x[0].length];
            int[] counts = new int[k];
            for (int i = 0; i < n; i++) {
                counts[a[i]]++;
                for (int j = 0; j < x[i].length; j++) {
                    sums[a[i]][j] += x[i][j];
                }
            }
            for (int c = 0; c < k; c++) {
                if (counts[c] > 0) {
                    for (int j = 0; j < sums[c].length; j++) {
                        sums[c][j] /= counts[c];
                    }
                    centres[c] = sums[c];
                }
            }
        }
        return centres;
    }

    static int[] nearest(double[][] x, double[][] centres) {
        return nearest(x, centres, new double[centres.length]);
    }

    /** Index of the centre minimising squared distance + bias. */
    static int[] nearest(double[][] x, double[][] centres, double[] bias) {
        int[] out = new int[x.length];
        for (int i = 0; i < x.length; i++) {
            double best = Double.POSITIVE_INFINITY;
            for (int c = 0; c < centres.length; c++) {
                double d = squared(x[i], centres[c]) + bias[c];
                if (d < best) {
                    best = d;
                    out[i] = c;
                }
            }
        }
        return out;
    }

    private static double squared(double[] a, double[] b) {
        double s = 0;
        for (int j = 0; j < a.length; j++) {
            s += (a[j] - b[j]) * (a[j] - b[j]);
        }
        return s;
    }

    static double[] norms(double[][] x, boolean l1) {
        return Arrays.stream(x).mapToDouble(row -> {
            double s = 0;
            for (double v : row) {
                s += l1 ? Math.abs(v) : v * v;
            }
            return l1 ? s : Math.sqrt(s);
        }).toArray();
    }

    /** The same quantile rule as EigenBasis uses for its clip radii. */
    static double quantile(double[] values, double q) {
        double[] v = values.clone();
        Arrays.sort(v);
        return v[(int) Math.floor(q * (v.length - 1))];
    }

    /** Radial projection onto the L1 or L2 ball of the radius, a hair inside so rounding cannot leave it. */
    static double[][] clip(double[][] x, double radius, boolean l1) {
        double[] n = norms(x, l1);
        double[][] out = new double[x.length][];
        for (int i = 0; i < x.length; i++) {
            out[i] = x[i].clone();
            if (n[i] > radius) {
                double s = radius / n[i] * (1 - 0x1.0p-50);
                for (int j = 0; j < out[i].length; j++) {
                    out[i][j] *= s;
                }
            }
        }
        return out;
    }

    private static double[][] truncate(double[][] x, int d) {
        return Arrays.stream(x).map(r -> Arrays.copyOf(r, d)).toArray(double[][]::new);
    }

    private static double[][] scaled(double[][] x, double[] scale) {
        return Arrays.stream(x).map(r -> {
            double[] o = new double[scale.length];
            for (int j = 0; j < o.length; j++) {
                o[j] = r[j] * scale[j];
            }
            return o;
        }).toArray(double[][]::new);
    }

    private static double[][] multiply(double[][] x, double[][] w) {
        int k = w[0].length;
        return Arrays.stream(x).map(r -> {
            double[] o = new double[k];
            for (int j = 0; j < r.length; j++) {
                for (int c = 0; c < k; c++) {
                    o[c] += r[j] * w[j][c];
                }
            }
            return o;
        }).toArray(double[][]::new);
    }

    /** A reproducible SecureRandom stream per release, so a rerun gives the same CSV; production uses a DRBG. */
    static SecureRandom secureRandom(String key) {
        try {
            SecureRandom r = SecureRandom.getInstance("SHA1PRNG");
            r.setSeed(seedOf(key));
            return r;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
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

    private static String alphaName(double alpha) {
        return Math.abs(alpha - 1.0 / 3) < 1e-12 ? "0.333" : fmt(alpha);
    }

    static String fmt(double v) {
        if (Double.isInfinite(v)) {
            return "inf";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return new java.math.BigDecimal(String.format(Locale.ROOT, "%.6g", v)).stripTrailingZeros().toPlainString();
    }

    static double mean(double[] a) {
        return Arrays.stream(a).average().orElse(Double.NaN);
    }

    static double sd(double[] a) {
        double m = mean(a);
        return a.length < 2 ? 0 : Math.sqrt(Arrays.stream(a).map(x -> (x - m) * (x - m)).sum() / (a.length - 1));
    }
}
