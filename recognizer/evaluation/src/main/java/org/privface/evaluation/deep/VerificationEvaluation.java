package org.privface.evaluation.deep;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.privface.evaluation.EmbeddingCache;
import org.privface.evaluation.EmbeddingSets;
import org.privface.evaluation.EvalOptions;
import org.privface.evaluation.Seeds;
import org.privface.privacy.aggregate.Sphere;

/**
 * Face verification in the manner of LFW's protocol, on pairs built from a folder-per-person set
 * (default {@code lfw139}, whose people are not in {@code lfw-public} or {@code lfw5}): people are
 * dealt into 10 folds (person i to fold i mod 10), so no person is in two folds; each fold gets up to
 * 300 same-person pairs (drawn from all its same-person image pairs) and as many different-person
 * pairs (two of its people, one image each). A pair's score is the cosine of the two unit embeddings.
 * For each fold, the threshold that is most accurate on the other nine is applied to it; the result
 * is the mean and standard deviation of the ten accuracies (LFW's "unrestricted" reporting).
 *
 * <pre>java -cp (recognizer/evaluation classpath) org.privface.evaluation.deep.VerificationEvaluation [--models fr_feature,dlib]</pre>
 */
public final class VerificationEvaluation {
    static final int FOLDS = 10;
    static final int PAIRS_PER_FOLD = 300;

    /** One pair: its fold, whether both faces are one person, and its cosine. */
    record Pair(int fold, boolean same, double score) {
    }

    /** Accuracy per fold, with the means over the pairs of each kind. */
    record Result(double[] accuracy, double meanSame, double meanDifferent, int pairs) {
        double mean() {
            return Arrays.stream(accuracy).average().orElse(Double.NaN);
        }

        double sd() {
            double m = mean();
            return Math.sqrt(Arrays.stream(accuracy).map(a -> (a - m) * (a - m)).sum() / (accuracy.length - 1));
        }
    }

    private VerificationEvaluation() {
    }

    public static void main(String[] args) throws Exception {
        org.privface.agent.dataset.BadDataset.exitOnError(() -> run(args));
    }

    /** The command; a bad data-set folder ends it with a message naming the file (exit status 2), not a stack trace. */
    static void run(String[] args) throws Exception {
        Map<String, String> opt = EvalOptions.parse(Map.of("--set", "lfw139", "--models", "fr_feature,dlib",
                "--datasets", System.getProperty("privface.datasets", "../shared/datasets"),
                "--cache", "target/embeddings", "--out", "docs/results"), args);
        List<String> lines = new ArrayList<>();
        lines.add("set,model,pairs,accuracy_mean,accuracy_sd,accuracy_per_fold,mean_cosine_same,mean_cosine_different");
        for (String model : opt.get("--models").split(",")) {
            EmbeddingCache d = EmbeddingSets.load(Path.of(opt.get("--datasets")), opt.get("--set"),
                    Path.of(opt.get("--cache")), model);
            Result r = evaluate(pairs(d, opt.get("--set")));
            String line = String.format(Locale.ROOT, "%s,%s,%d,%.4f,%.4f,%s,%.4f,%.4f", opt.get("--set"), model, r.pairs(),
                    r.mean(), r.sd(), String.join(";", Arrays.stream(r.accuracy())
                            .mapToObj(a -> String.format(Locale.ROOT, "%.4f", a)).toList()), r.meanSame(), r.meanDifferent());
            System.out.println(line);
            lines.add(line);
        }
        Path out = Path.of(opt.get("--out"));
        Files.createDirectories(out);
        Files.write(out.resolve("verification-" + opt.get("--set") + ".csv"), lines);
    }

    /** The pairs of a set, seeded by its name (the same pairs for every model). */
    static List<Pair> pairs(EmbeddingCache d, String seed) {
        List<List<Integer>> byPerson = new ArrayList<>();
        for (int c = 0; c < d.classes(); c++) {
            byPerson.add(new ArrayList<>());
        }
        for (int i = 0; i < d.labels().length; i++) {
            byPerson.get(d.labels()[i]).add(i);
        }
        List<Pair> pairs = new ArrayList<>();
        for (int f = 0; f < FOLDS; f++) {
            SecureRandom random = Seeds.seeded(seed, "verification", 0, f);
            List<int[]> same = new ArrayList<>();
            List<Integer> people = new ArrayList<>();
            for (int c = f; c < d.classes(); c += FOLDS) {
                people.add(c);
                List<Integer> faces = byPerson.get(c);
                for (int a = 0; a < faces.size(); a++) {
                    for (int b = a + 1; b < faces.size(); b++) {
                        same.add(new int[] {faces.get(a), faces.get(b)});
                    }
                }
            }
            for (int i = 0; i < Math.min(PAIRS_PER_FOLD, same.size()); i++) {
                int j = i + random.nextInt(same.size() - i); // partial Fisher-Yates: a sample without replacement
                int[] t = same.get(i);
                same.set(i, same.get(j));
                same.set(j, t);
                pairs.add(new Pair(f, true, Sphere.dot(d.x()[same.get(i)[0]], d.x()[same.get(i)[1]])));
            }
            Set<Long> seen = new HashSet<>();
            int wanted = Math.min(PAIRS_PER_FOLD, same.size());
            while (seen.size() < wanted && people.size() > 1) {
                int pa = people.get(random.nextInt(people.size()));
                int pb = people.get(random.nextInt(people.size()));
                if (pa == pb) {
                    continue;
                }
                int a = byPerson.get(pa).get(random.nextInt(byPerson.get(pa).size()));
                int b = byPerson.get(pb).get(random.nextInt(byPerson.get(pb).size()));
                if (seen.add((long) Math.min(a, b) << 32 | Math.max(a, b))) {
                    pairs.add(new Pair(f, false, Sphere.dot(d.x()[a], d.x()[b])));
                }
            }
        }
        return pairs;
    }

    /** Ten-fold best-threshold accuracy: each fold is scored at the threshold chosen on the other nine. */
    static Result evaluate(List<Pair> pairs) {
        double[] acc = new double[FOLDS];
        for (int f = 0; f < FOLDS; f++) {
            int fold = f;
            double t = bestThreshold(pairs.stream().filter(p -> p.fold() != fold).toList());
            List<Pair> test = pairs.stream().filter(p -> p.fold() == fold).toList();
            acc[f] = test.stream().filter(p -> (p.score() > t) == p.same()).count() / (double) test.size();
        }
        return new Result(acc, pairs.stream().filter(Pair::same).mapToDouble(Pair::score).average().orElse(Double.NaN),
                pairs.stream().filter(p -> !p.same()).mapToDouble(Pair::score).average().orElse(Double.NaN), pairs.size());
    }

    /** The threshold (accept: score above it) most accurate on these pairs: midpoints of neighbouring scores. */
    static double bestThreshold(List<Pair> pairs) {
        Pair[] sorted = pairs.stream().sorted((a, b) -> Double.compare(a.score(), b.score())).toArray(Pair[]::new);
        // Below every score, all pairs are accepted: the same-person ones are right.
        int right = (int) pairs.stream().filter(Pair::same).count();
        int best = right;
        double threshold = sorted[0].score() - 1e-9;
        for (int i = 0; i < sorted.length; i++) {
            right += sorted[i].same() ? -1 : 1; // pair i now falls below the threshold
            double t = i + 1 < sorted.length ? (sorted[i].score() + sorted[i + 1].score()) / 2 : sorted[i].score() + 1e-9;
            if (right > best && (i + 1 == sorted.length || sorted[i + 1].score() > sorted[i].score())) {
                best = right;
                threshold = t;
            }
        }
        return threshold;
    }
}
