package org.privface.evaluation.deep;

import static org.privface.evaluation.Figures.fmt;
import static org.privface.evaluation.Seeds.seeded;
import static org.privface.evaluation.deep.DeepAnswer.FPIR;
import static org.privface.evaluation.deep.DeepAnswer.SELECTION_DRAWS;
import static org.privface.evaluation.deep.DeepAnswer.SELECTION_GALLERIES;
import static org.privface.evaluation.deep.DeepAnswer.accuracy;
import static org.privface.evaluation.deep.DeepAnswer.directions;
import static org.privface.evaluation.deep.DeepAnswer.galleryDraw;
import static org.privface.evaluation.deep.DeepAnswer.key;
import static org.privface.evaluation.deep.DeepAnswer.labels;
import static org.privface.evaluation.deep.DeepAnswer.measuredOn;
import static org.privface.evaluation.deep.DeepAnswer.selectionGallery;
import static org.privface.evaluation.deep.DeepFrontier.releaseAll;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;

import org.privface.evaluation.EmbeddingCache;
import org.privface.evaluation.Metrics;
import org.privface.evaluation.MlpInputs;
import org.privface.evaluation.Progress;
import org.privface.evaluation.StratifiedSplit;
import org.privface.evaluation.deep.DeepAnswer.Data;
import org.privface.privacy.ExactDraws;
import org.privface.privacy.answer.Gallery;
import org.privface.privacy.answer.RandomizedResponse;
import org.privface.privacy.embedding.EmbeddingBasis;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.privacy.embedding.EmbeddingMechanism.Noise;
import org.privface.privacy.embedding.EmbeddingMechanism.Preset;
import org.privface.recognizer.model.MlpModel;
import org.privface.recognizer.model.MlpOptions;
import org.privface.recognizer.model.MlpTrainer;

/**
 * {@link DeepAnswer}'s decoder comparison (issue 29): the gallery's templates against the
 * recognizer's MLP on the same enrollment releases, query directions and exact k-RR.
 */
final class AnswerDecoders {
    private final int seeds;
    /** The calibration rule the gallery ships with. */
    private final Gallery.Bound shipped;

    AnswerDecoders(int seeds, Gallery.Bound shipped) {
        this.seeds = seeds;
        this.shipped = shipped;
    }

    /** What a gallery decodes with; each gives per-identity scores, the answer is the best one above the threshold. */
    enum Decoder {
        /** Cosine of the query's raw direction to the unit class means of the releases (the shipped Gallery). */
        TEMPLATES,
        /** The recognizer's MLP ({@link MlpTrainer}, {@code MlpOptions.small()}) trained on the releases, fed the raw direction; softmax scores. */
        MLP,
        /** The same MLP fed the raw direction's signs at the release's scale (±1/√k), what a release is without its flips. */
        MLP_SIGN;

        String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** One (network, set, ε, seed, decoder) run of the decoder comparison; FPIR and FNIR under the shipped rule. */
    record DecoderRow(String network, String set, int people, double epsilon, int seed, Decoder decoder, int k,
                      int radius, int enrollReleases, double decoderAccuracy, double f1, double threshold,
                      double calibrationRate, int measuredStrangers, double fpir, double fnir, Gallery.Bound calibration) {
        static final String HEADER = "network,set,people,epsilon,seed,decoder,k,radius,enrollment_releases,"
                + "decoder_accuracy,f1,threshold,calibration_decoder_rate,measured_strangers,fpir,fnir,calibration";

        String csv() {
            return String.format(Locale.ROOT, "%s,%s,%d,%s,%d,%s,%d,%d,%d,%.4f,%.4f,%.6f,%.5f,%d,%.5f,%.4f,%s", network,
                    set, people, fmt(epsilon), seed, decoder.label(), k, radius, enrollReleases, decoderAccuracy, f1,
                    threshold, calibrationRate, measuredStrangers, fpir, fnir,
                    calibration.name().toLowerCase(Locale.ROOT));
        }
    }

    /**
     * Templates against the MLP on the same enrollment releases and the same query directions, then
     * the same exact k-RR. The evaluation sets use the same folds, mechanisms and seeds as
     * {@link DeepAnswer#evaluate} (so the template rows repeat its figures); the public selection galleries
     * ({@code lfw-public/5}, {@code lfw-public/40}: odd-numbered people, half basis, the selection's
     * draws) are where the choice between decoders may be made, with no FPIR (their strangers
     * calibrate).
     */
    List<DecoderRow> decoders(Data d, Map<String, Preset> chosen, List<String> setNames, double[] eps) {
        EmbeddingBasis basis = EmbeddingBasis.bundled(d.network());
        List<DecoderRow> rows = new ArrayList<>();
        int[] publicGalleries = {SELECTION_GALLERIES[0], SELECTION_GALLERIES[1]};
        int runs = (setNames.size() * seeds + SELECTION_DRAWS[0] + SELECTION_DRAWS[1]) * eps.length;
        Progress progress = new Progress(System.out, runs);
        for (double e : eps) {
            for (int gi = 0; gi < publicGalleries.length; gi++) {
                int g = Math.min(publicGalleries[gi], d.selectionPeople().classes());
                Preset p = chosen.get(key(e, publicGalleries[gi]));
                EmbeddingMechanism m = new EmbeddingMechanism(d.halfBasis(), true, Noise.SIGN_CAP, p.k(), p.radius(), e,
                        seeded("answer-decoders", d.network(), e, g));
                double[][] dirs = directions(m, d.selectionPeople().x());
                double[][] cal = directions(m, d.selectionStrangers().x());
                for (int draw = 0; draw < SELECTION_DRAWS[gi]; draw++) {
                    int[][] dr = galleryDraw(d.selectionPeople(), g, new SplittableRandom(1000L * g + draw));
                    double[][] enroll = releaseAll(m, StratifiedSplit.select(d.selectionPeople().x(), dr[0]));
                    RandomizedResponse rr = RandomizedResponse.forEpsilon(g, e, ExactDraws.secure(
                            seeded("answer-decoders-rr", d.network(), e, g * 100 + draw)));
                    rows.addAll(compare(d.network(), "lfw-public/" + g, g, e, draw, p, m, enroll, dr[2],
                            StratifiedSplit.select(dirs, dr[1]), dr[3], cal, d.selectionStrangers().labels(), null, rr));
                    progress.step(d.network() + " decoders lfw-public/" + g + " ε" + fmt(e) + " draw " + draw);
                }
            }
            for (String set : setNames) {
                EmbeddingCache data = d.sets().get(set);
                int c = data.classes();
                Preset p = chosen.get(key(e, selectionGallery(c)));
                double[][] measured = d.measured().get(measuredOn(set)).x();
                for (int s = 0; s < seeds; s++) {
                    DeepFrontier.Fold fold = DeepFrontier.Fold.of(data, s);
                    EmbeddingMechanism m = new EmbeddingMechanism(basis, true, Noise.SIGN_CAP, p.k(), p.radius(), e,
                            seeded(set, "answer-" + d.network(), e, s));
                    RandomizedResponse rr = RandomizedResponse.forEpsilon(c, e, ExactDraws.secure(
                            seeded(set, "answer-rr-" + d.network(), e, s)));
                    rows.addAll(compare(d.network(), set, c, e, s, p, m, releaseAll(m, fold.train()), fold.yTrain(),
                            directions(m, fold.test()), fold.yTest(), directions(m, d.calibration().x()),
                            d.calibration().labels(), directions(m, measured), rr));
                    progress.step(d.network() + " decoders " + set + " ε" + fmt(e) + " seed " + s);
                }
            }
        }
        return rows;
    }

    /** Every decoder on one gallery; measured null: no FPIR (NaN). */
    List<DecoderRow> compare(String network, String set, int c, double eps, int seed, Preset p, EmbeddingMechanism m,
                             double[][] enroll, int[] yEnroll, double[][] test, int[] yTest, double[][] calibration,
                             int[] calibrationPeople, double[][] measured, RandomizedResponse rr) {
        Gallery gallery = Gallery.fromReleases(0, m.releaseSpace(), labels(c), enroll, yEnroll);
        List<DecoderRow> rows = new ArrayList<>();
        try (MlpModel mlp = new MlpTrainer().train(MlpInputs.floats(enroll), yEnroll, c,
                MlpOptions.small().withSeed(seed + 1))) {
            for (Decoder dec : Decoder.values()) {
                Function<double[][], double[][]> score = switch (dec) {
                    case TEMPLATES -> q -> Arrays.stream(q).map(gallery::scores).toArray(double[][]::new);
                    case MLP -> q -> proba(mlp, q);
                    case MLP_SIGN -> q -> proba(mlp, signs(q));
                };
                double[][] t = score.apply(test);
                int[] decoded = Arrays.stream(t).mapToInt(v -> best(v, Double.NEGATIVE_INFINITY)).toArray();
                int[] released = Arrays.stream(decoded).map(rr::release).toArray();
                double f1 = Metrics.weighted(yTest, released, c + 1).f1();
                double[] cal = Arrays.stream(score.apply(calibration)).mapToDouble(v -> Arrays.stream(v).max()
                        .orElseThrow()).toArray();
                Gallery.Threshold th = Gallery.threshold(cal, calibrationPeople, rr.decoderFalsePositiveRate(FPIR),
                        shipped);
                double fpir = Double.NaN;
                int measuredStrangers = 0;
                if (measured != null) {
                    measuredStrangers = measured.length;
                    fpir = Arrays.stream(score.apply(measured)).filter(v -> rr.release(best(v, th.value())) != c).count()
                            / (double) measured.length;
                }
                int misses = 0;
                for (int i = 0; i < t.length; i++) {
                    misses += rr.release(best(t[i], th.value())) != yTest[i] ? 1 : 0;
                }
                rows.add(new DecoderRow(network, set, c, eps, seed, dec, p.k(), p.radius(), enroll.length,
                        accuracy(decoded, yTest), f1, th.value(), th.rate(), measuredStrangers, fpir,
                        misses / (double) t.length, shipped));
            }
        }
        return rows;
    }

    /** The index of the largest score, or its length (unknown) when that score does not exceed the threshold. */
    static int best(double[] scores, double threshold) {
        int b = 0;
        for (int i = 1; i < scores.length; i++) {
            if (scores[i] > scores[b]) {
                b = i;
            }
        }
        return scores[b] > threshold ? b : scores.length;
    }

    static double[][] proba(MlpModel mlp, double[][] x) {
        float[][] p = mlp.predictProba(MlpInputs.floats(x));
        double[][] out = new double[p.length][];
        for (int i = 0; i < p.length; i++) {
            out[i] = new double[p[i].length];
            for (int j = 0; j < p[i].length; j++) {
                out[i][j] = p[i][j];
            }
        }
        return out;
    }

    /** Each direction's signs at a sign-cap release's scale, ±1/√k (0 counts as +, as the release's code does). */
    static double[][] signs(double[][] x) {
        double[][] out = new double[x.length][];
        for (int i = 0; i < x.length; i++) {
            double s = 1 / Math.sqrt(x[i].length);
            out[i] = Arrays.stream(x[i]).map(v -> v >= 0 ? s : -s).toArray();
        }
        return out;
    }
}
