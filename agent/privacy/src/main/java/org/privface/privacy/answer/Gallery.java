package org.privface.privacy.answer;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.IntStream;

import org.privface.privacy.Proportions;
import org.privface.privacy.aggregate.Sphere;
import org.privface.privacy.fisher.FisherBasis;

/**
 * What the gateway decodes a query face against: one template per enrolled person, the open-set
 * threshold, and what identifies the model and its release space. Plain data and the decoder's
 * arithmetic; the wire form, signature and topic belong to its users.
 *
 * <p>Templates are the class means of the enrollment releases (the vectors a
 * {@code sign-cap} release publishes, already public under their own ε), scaled to unit length: a
 * template is post-processing of public releases, and so is the threshold, calibrated on public
 * strangers ({@link #calibrate}). The query is its raw public projection's unit direction
 * ({@code EmbeddingMechanism.direction}, the same basis and k as the enrollment: {@link #basisId}),
 * which never leaves the gateway; only {@link RandomizedResponse}'s output does.
 *
 * @param version   increases with each new model of a site
 * @param basisId   the enrollment releases' space ({@code EmbeddingMechanism.releaseSpace()}, e.g.
 *                  {@code fr_feature-e03564a54e1fc106.k24}); the gateway decodes only with the
 *                  projection that has this id
 * @param labels    the C enrolled people, index = identity
 * @param templates C × k unit vectors
 * @param threshold a query is named only when its best cosine exceeds it; −∞ for closed set,
 *                  +∞ names nobody
 */
public record Gallery(long version, String basisId, List<String> labels, double[][] templates, double threshold) {
    public Gallery {
        Objects.requireNonNull(basisId, "basisId");
        labels = List.copyOf(labels);
        if (labels.isEmpty() || templates.length != labels.size()) {
            throw new IllegalArgumentException("need one template per label and at least one, were " + templates.length
                    + " and " + labels.size());
        }
        int k = templates[0].length;
        double[][] copy = new double[templates.length][];
        for (int c = 0; c < templates.length; c++) {
            if (templates[c].length != k || k == 0) {
                throw new IllegalArgumentException("templates must all have the same, positive length");
            }
            double n = 0;
            for (double v : templates[c]) {
                if (!Double.isFinite(v)) {
                    throw new IllegalArgumentException("template " + c + " holds a non-finite value");
                }
                n += v * v;
            }
            if (Math.abs(Math.sqrt(n) - 1) > 1e-6) {
                throw new IllegalArgumentException("template " + c + " is not a unit vector (length " + Math.sqrt(n) + ")");
            }
            copy[c] = templates[c].clone();
        }
        templates = copy;
        if (Double.isNaN(threshold)) {
            throw new IllegalArgumentException("threshold is NaN");
        }
    }

    /** Templates from enrollment releases (release i belongs to person releaseLabels[i]); threshold −∞. */
    public static Gallery fromReleases(long version, String basisId, List<String> labels, double[][] releases,
                                       int[] releaseLabels) {
        return new Gallery(version, basisId, labels, templates(releases, releaseLabels, labels.size()),
                Double.NEGATIVE_INFINITY);
    }

    /** Per class, the mean of its releases scaled to unit length; every class needs a release. */
    public static double[][] templates(double[][] releases, int[] labels, int classes) {
        if (releases.length != labels.length || releases.length == 0) {
            throw new IllegalArgumentException("need as many labels as releases, and some releases");
        }
        int k = releases[0].length;
        int[] count = new int[classes];
        for (int i = 0; i < releases.length; i++) {
            if (releases[i].length != k) {
                throw new IllegalArgumentException("release " + i + " has length " + releases[i].length + ", not " + k);
            }
            if (labels[i] < 0 || labels[i] >= classes) {
                throw new IllegalArgumentException("label " + labels[i] + " outside [0, " + classes + ")");
            }
            count[labels[i]]++;
        }
        double[][] t = FisherBasis.classMeans(releases, labels, classes);
        for (int c = 0; c < classes; c++) {
            if (count[c] == 0) {
                throw new IllegalArgumentException("class " + c + " has no release");
            }
            if (Sphere.dot(t[c], t[c]) == 0) {
                // Releases that cancel out: any fixed unit vector keeps the model usable and public.
                t[c][0] = 1;
            } else {
                t[c] = Sphere.normalize(t[c]);
            }
        }
        return t;
    }

    /** A copy of the templates (the record keeps its own). */
    @Override
    public double[][] templates() {
        return Arrays.stream(templates).map(double[]::clone).toArray(double[][]::new);
    }

    public Gallery withThreshold(double t) {
        return new Gallery(version, basisId, labels, templates, t);
    }

    /** C, the number of enrolled people; {@link #decode} answers C for unknown. */
    public int identities() {
        return labels.size();
    }

    /** k, the length of a template and of the query's direction. */
    public int k() {
        return templates[0].length;
    }

    /** Cosine of the query's direction to each template. */
    public double[] scores(double[] direction) {
        if (direction.length != k()) {
            throw new IllegalArgumentException("need a " + k() + "-dim direction, was " + direction.length);
        }
        for (double v : direction) {
            if (!Double.isFinite(v)) {
                throw new IllegalArgumentException("direction holds a non-finite value");
            }
        }
        double n = Math.sqrt(Sphere.dot(direction, direction));
        double[] s = new double[templates.length];
        for (int c = 0; c < s.length; c++) {
            s[c] = n == 0 ? 0 : Sphere.dot(direction, templates[c]) / n;
        }
        return s;
    }

    /** The identity whose template is closest in cosine, or C (unknown) when that cosine does not exceed the threshold. */
    public int decode(double[] direction) {
        double[] s = scores(direction);
        int best = 0;
        for (int c = 1; c < s.length; c++) {
            if (s[c] > s[best]) {
                best = c;
            }
        }
        return s[best] > threshold ? best : identities();
    }

    /**
     * How a query's cosines to the C templates become the number an open-set threshold is
     * compared with. The best cosine of a stranger grows with C (it is the largest of C draws),
     * so one cosine threshold fits a large gallery worse than a score that asks how far the best
     * template stands out from the query's other cosines. Every rule names the template with the
     * best cosine (the closed-set answer does not change); only the open-set decision does.
     */
    public enum Score {
        /** The best cosine. */
        COSINE,
        /**
         * Test normalisation with the gallery as the cohort: (best − mean) / sd of the query's C
         * cosines (sd over C, population form). Needs nothing beyond the templates; with C &lt; 3
         * or all cosines equal it is the best cosine's distance to the mean, unscaled.
         */
        TNORM,
        /** The best cosine minus the second best (the best cosine when C = 1). */
        MARGIN;

        /** This rule's open-set score of one query's cosines to the templates. */
        public double of(double[] cosines) {
            if (cosines.length == 0) {
                throw new IllegalArgumentException("need at least one cosine");
            }
            double best = Double.NEGATIVE_INFINITY;
            double second = Double.NEGATIVE_INFINITY;
            double sum = 0;
            for (double c : cosines) {
                if (c > best) {
                    second = best;
                    best = c;
                } else if (c > second) {
                    second = c;
                }
                sum += c;
            }
            switch (this) {
                case COSINE:
                    return best;
                case MARGIN:
                    return cosines.length == 1 ? best : best - second;
                default:
                    double mean = sum / cosines.length;
                    double ss = 0;
                    for (double c : cosines) {
                        ss += (c - mean) * (c - mean);
                    }
                    double sd = Math.sqrt(ss / cosines.length);
                    return cosines.length < 3 || sd == 0 ? best - mean : (best - mean) / sd;
            }
        }
    }

    /**
     * What one answer for a track decodes: the unit mean of its faces' unit directions (each the
     * raw public projection's direction, as for a single face). Averaging several views of one
     * person moves the query towards that person's centre, which a template of noisy releases
     * matches better than any single face (issue 45: FNIR at FPIR 1 % on lfw139 at ε 20, 0.19 for
     * a face and 0.03 for 3 faces). A track that releases one answer at ε spends ε on all its faces
     * together. All-zero means (opposite faces) give the first axis, as {@link #templates} does.
     */
    public static double[] trackDirection(double[][] directions) {
        if (directions.length == 0) {
            throw new IllegalArgumentException("a track needs at least one face");
        }
        int k = directions[0].length;
        double[] mean = new double[k];
        for (double[] d : directions) {
            if (d.length != k) {
                throw new IllegalArgumentException("directions of a track must all have length " + k);
            }
            double n = Math.sqrt(Sphere.dot(d, d));
            for (int i = 0; i < k; i++) {
                if (!Double.isFinite(d[i])) {
                    throw new IllegalArgumentException("direction holds a non-finite value");
                }
                mean[i] += n == 0 ? 0 : d[i] / n;
            }
        }
        if (Sphere.dot(mean, mean) == 0) {
            mean[0] = 1;
            return mean;
        }
        return Sphere.normalize(mean);
    }

    /** The index of the largest value (the first on ties). */
    public static int argmax(double[] v) {
        int best = 0;
        for (int c = 1; c < v.length; c++) {
            if (v[c] > v[best]) {
                best = c;
            }
        }
        return best;
    }

    /** The best cosine to any template: what the threshold is compared with. */
    public double bestScore(double[] direction) {
        return Arrays.stream(scores(direction)).max().orElseThrow();
    }

    /**
     * The smallest threshold that lets at most ⌊rate·n⌋ of n public strangers through (named when
     * the best cosine exceeds it), with their measured rate and its 95 % Wilson interval. A rate
     * at or below 0 gives +∞ (name nobody). For the rate a release should have, pass
     * {@link RandomizedResponse#decoderFalsePositiveRate}.
     */
    public Threshold calibrate(double[][] strangerDirections, double rate) {
        return calibrate(strangerDirections, null, rate, Bound.ESTIMATE);
    }

    /**
     * As {@link #calibrate(double[][], double)}, but the strangers' rate that must not exceed
     * {@code rate} is the given bound's: with {@link Bound#PEOPLE}, {@code people[i]} names
     * stranger i's person (null: every face its own person).
     */
    public Threshold calibrate(double[][] strangerDirections, int[] people, double rate, Bound bound) {
        if (strangerDirections.length == 0) {
            throw new IllegalArgumentException("need strangers to calibrate on");
        }
        return threshold(Arrays.stream(strangerDirections).mapToDouble(this::bestScore).toArray(), people, rate, bound);
    }

    /**
     * How a calibration bounds the strangers' rate at a threshold. The rate measured on public
     * strangers is an estimate, and it transfers imperfectly to the site's strangers; an upper
     * confidence bound keeps the threshold on the safe side of it.
     */
    public enum Bound {
        /** The measured rate itself: ⌊rate·n⌋ strangers through. */
        ESTIMATE,
        /** The upper end of the rate's 95 % Wilson interval, faces taken as independent. */
        WILSON,
        /**
         * The measured rate plus 1.96 standard errors of a ratio estimator over people (each
         * person's faces one cluster), floored at the Wilson bound: a stranger who resembles
         * an enrolled person tends to be named on most of their faces.
         */
        PEOPLE
    }

    /**
     * The smallest threshold on the strangers' scores (a stranger is named when its score exceeds
     * it) whose stated bound on the named rate stays at or below {@code rate}, as the named count
     * grows from 0; +∞ when the rate is not positive or no count qualifies, −∞ when all may pass.
     */
    public static Threshold threshold(double[] scores, int[] people, double rate, Bound bound) {
        int n = scores.length;
        if (n == 0) {
            throw new IllegalArgumentException("need strangers to calibrate on");
        }
        if (people != null && people.length != n) {
            throw new IllegalArgumentException("need one person per stranger, were " + people.length + " and " + n);
        }
        double[] s = scores.clone();
        Arrays.sort(s); // ascending; the a highest are s[n − a] … s[n − 1]
        int allowed;
        if (!(rate > 0)) {
            allowed = -1;
        } else if (bound == Bound.ESTIMATE) {
            allowed = (int) Math.min(n, Math.floor(rate * n));
        } else {
            allowed = allowed(scores, people, rate, bound);
        }
        double t = allowed < 0 ? Double.POSITIVE_INFINITY : allowed >= n ? Double.NEGATIVE_INFINITY : s[n - 1 - allowed];
        long accepted = Arrays.stream(s).filter(v -> v > t).count();
        return Threshold.of(t, accepted, n, rate);
    }

    /** The largest a such that the bound stays ≤ rate for the a highest-scoring strangers and every smaller count; −1 if none. */
    private static int allowed(double[] scores, int[] people, double rate, Bound bound) {
        int n = scores.length;
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (x, y) -> Double.compare(scores[y], scores[x]));
        int[] person = people != null ? people : IntStream.range(0, n).toArray();
        Map<Integer, Integer> faces = new HashMap<>();
        for (int p : person) {
            faces.merge(p, 1, Integer::sum);
        }
        int clusters = faces.size();
        double sumNn = 0; // Σ n_j², Σ a_j n_j, Σ a_j² over people j (a_j: named faces of person j)
        for (int f : faces.values()) {
            sumNn += (double) f * f;
        }
        double sumAn = 0;
        double sumAa = 0;
        Map<Integer, Integer> named = new HashMap<>();
        for (int a = 0; a <= n; a++) {
            if (a > 0) {
                int j = person[order[a - 1]];
                int before = named.merge(j, 1, Integer::sum) - 1;
                sumAa += 2.0 * before + 1;
                sumAn += faces.get(j);
            }
            double upper = Proportions.wilson95(a, n)[1];
            if (bound == Bound.PEOPLE && clusters > 1) {
                double p = a / (double) n;
                double ss = Math.max(0, sumAa - 2 * p * sumAn + p * p * sumNn);
                double se = Math.sqrt(clusters / (clusters - 1.0) * ss) / n;
                upper = Math.max(upper, p + Proportions.Z95 * se);
            }
            if (upper > rate) {
                return a - 1;
            }
        }
        return n;
    }

    /**
     * A calibrated threshold.
     *
     * @param value     the threshold
     * @param accepted  strangers whose best cosine exceeds it
     * @param strangers how many were used
     * @param target    the decoder rate asked for
     * @param rate      accepted/strangers
     * @param lower     95 % Wilson interval of the rate
     * @param upper     ditto
     */
    public record Threshold(double value, long accepted, long strangers, double target, double rate, double lower,
                            double upper) {
        static Threshold of(double value, long accepted, long n, double target) {
            double[] w = Proportions.wilson95(accepted, n);
            return new Threshold(value, accepted, n, target, accepted / (double) n, w[0], w[1]);
        }

        /** At least 20/rate strangers: enough that about 20 of them set the threshold. */
        public boolean enoughStrangers() {
            return target <= 0 || strangers >= 20 / target;
        }
    }

}
