package org.privface.evaluation.frontier;

import java.util.ArrayList;
import java.util.List;

import org.privface.evaluation.Figures;
import org.privface.privacy.gdp.MuGdp;

/**
 * The families {@link FrontierEvaluation} compares: how a face is reduced to a release space
 * ({@link Space}), the noise it gets ({@link Noise}), the grids of configurations each family's
 * validation chooses from ({@link #groups}), and the classifiers that score them.
 */
final class FrontierFamilies {
    static final int[] NCS = {4, 8, 16, 32, 64};
    static final int[] FISHER_PCA = {32, 64, 128};
    static final double[] LAPLACE_QUANTILES = {0.25, 0.5, 0.75, 0.9};
    static final double[] GAUSS_QUANTILES = {0.25, 0.5, 0.75};

    /** The Gaussian families' δ (the library's default). */
    static final double DELTA = MuGdp.DEFAULT_DELTA;
    /** Share of the training split that validation models are fitted on; the rest is the validation set. */
    static final double INNER_FRACTION = 0.75;
    /** Eigenface coordinates computed per fold; the release spaces use at most this many. */
    static final int PCA_DIM = 128;

    /** What one seed of one family gave at one ε: the configuration, its fresh validation F1, its test F1. */
    record Pick(Config config, double valF1, double testF1) {
    }

    private FrontierFamilies() {
    }

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
                default -> space.key() + "-" + noise.tag + "q" + Figures.fmt(quantile);
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

    /** The families the frontier selects among, for a set of {@code faces} faces of {@code classes} people. */
    static List<Group> groups(int classes, int faces) {
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
                    if (m * classes <= faces * 0.7 * INNER_FRACTION / 3) {
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
    static List<Config> fixedConfigs(int classes) {
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

    /** An α as the row keys write it (1/3 as 0.333). */
    static String alphaName(double alpha) {
        return Math.abs(alpha - 1.0 / 3) < 1e-12 ? "0.333" : Figures.fmt(alpha);
    }
}
