package org.privface.evaluation.deep;

import static org.privface.evaluation.Figures.fmt;
import static org.privface.evaluation.deep.DeepFrontier.releaseAll;
import static org.privface.evaluation.Seeds.seeded;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;

import org.knowm.xchart.style.Styler;
import org.privface.evaluation.Charts;
import org.privface.evaluation.EmbeddingCache;
import org.privface.evaluation.EmbeddingSets;
import org.privface.evaluation.Metrics;
import org.privface.evaluation.MlpInputs;
import org.privface.evaluation.Progress;
import org.privface.evaluation.StratifiedSplit;
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
 * Issue 29's {@code answer} family: every enrolled face is released once by the exact sign-cap
 * embedding release at ε, the class means of those releases are the gallery's templates, and each
 * query face's raw public projection is decoded against them on the gateway and published by exact
 * k-ary randomized response at ε over C + 1 outputs ({@link Gallery}, {@link RandomizedResponse}).
 * Every face, enrolled or queried, gets the stated ε.
 *
 * <p>Public people only choose anything. {@code lfw-public} is split by person: odd-numbered people
 * with at least {@link #SELECTION_MIN_FACES} faces make the selection's galleries, the other odd
 * ones its strangers, and the enrollment presets (k, radius) are chosen per ε, network and gallery
 * size on a basis fitted on the even-numbered people only. The even-numbered people are the
 * evaluation's calibration strangers (the open-set threshold, at least 20/FPIR of them). FPIR is
 * measured on strangers outside {@code lfw-public} and outside the enrolled set: lfw139's faces for
 * lfw5 and ORL, lfw5's for lfw139; and, as a diagnostic, on lfw-public's odd-numbered people, who
 * like the calibration strangers took part in the shipped basis's fit.
 *
 * <pre>mvn -B -q -Pdeep-eval install -DskipTests -Deval.args="--answer dlib,fr_feature"</pre>
 * Writes deep-answer.csv, deep-answer-selection.csv and deep-answer-*.png.
 */
final class DeepAnswer {
    static final double FPIR = 0.01;
    static final int SELECTION_MIN_FACES = 6;
    /** Selection gallery sizes; an evaluation set uses the closest one. */
    static final int[] SELECTION_GALLERIES = {5, 40, 80};
    /** Random galleries drawn per selection size (fewer for the large ones, which use most people). */
    static final int[] SELECTION_DRAWS = {6, 3, 2};
    static final String KS = "16,24,32,48,64";
    static final String RADII = "0,1,2,4,6,8,12,16,24";

    private final int seeds;
    private final double[] epsilons;
    private final Path out;
    private final int[] ks;
    private final int[] radii;
    /** The calibration rule the gallery ships with (selection and charts use it). */
    private final Gallery.Bound shipped;
    /** The rules whose open-set figures are reported side by side. */
    private final List<Gallery.Bound> bounds;

    DeepAnswer(int seeds, double[] epsilons, Path out) {
        this(seeds, epsilons, out, ints(KS), ints(RADII), Gallery.Bound.ESTIMATE, List.of(Gallery.Bound.ESTIMATE));
    }

    DeepAnswer(int seeds, double[] epsilons, Path out, int[] ks, int[] radii, Gallery.Bound shipped,
               List<Gallery.Bound> bounds) {
        this.seeds = seeds;
        this.epsilons = epsilons;
        this.out = out;
        this.ks = ks;
        this.radii = radii;
        this.shipped = shipped;
        this.bounds = bounds;
    }

    static int[] ints(String csv) {
        return Arrays.stream(csv.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    static double[] doubles(String csv) {
        return Arrays.stream(csv.split(",")).mapToDouble(Double::parseDouble).toArray();
    }

    static Gallery.Bound bound(String name) {
        return Gallery.Bound.valueOf(name.trim().toUpperCase(Locale.ROOT));
    }

    /** One network's data: the public set split three ways and the evaluation sets. */
    record Data(String network, EmbeddingCache selectionPeople, EmbeddingCache selectionStrangers,
                EmbeddingCache calibration, EmbeddingBasis halfBasis, Map<String, EmbeddingCache> sets,
                Map<String, EmbeddingCache> measured, EmbeddingCache publicOdd) {
    }

    static void run(Map<String, String> opt, Path datasets, Path cache, Path out) throws IOException {
        double[] eps = doubles(opt.get("--eps"));
        Gallery.Bound shipped = bound(opt.get("--calibration"));
        List<Gallery.Bound> bounds = new ArrayList<>();
        bounds.add(shipped);
        for (String b : opt.get("--calibrations").split(",")) {
            if (!b.isBlank() && !bounds.contains(bound(b))) {
                bounds.add(bound(b));
            }
        }
        DeepAnswer a = new DeepAnswer(Integer.parseInt(opt.get("--seeds")), eps, out, ints(opt.get("--ks")),
                ints(opt.get("--radii")), shipped, bounds);
        Files.createDirectories(out);
        String suffix = opt.get("--suffix");
        List<String> decoderRows = new ArrayList<>();
        decoderRows.add(DecoderRow.HEADER);
        double[] decoderEps = opt.get("--decoder-eps").equals("none") ? new double[0] : doubles(opt.get("--decoder-eps"));
        List<String> selection = new ArrayList<>();
        selection.add("network,epsilon,gallery,k,radius,draws,decoder_f1,decoder_fnir,criterion,chosen");
        List<String> rows = new ArrayList<>();
        rows.add(Row.HEADER);
        for (String network : opt.get("--answer").split(",")) {
            List<String> sets = new ArrayList<>(List.of(opt.get("--sets").split(",")));
            List<String> decoderSets = decoderEps.length == 0 ? List.of() : List.of(opt.get("--decoder-sets").split(","));
            for (String s : decoderSets) {
                if (!sets.contains(s)) {
                    sets.add(s);
                }
            }
            Data d = load(datasets, cache, network, opt.get("--public"), sets);
            Map<String, Preset> chosen = a.select(d, selection);
            Files.write(out.resolve("deep-answer-selection" + suffix + ".csv"), selection);
            if (!opt.get("--evaluate").equals("false")) {
                for (Row r : a.evaluate(d, chosen, List.of(opt.get("--sets").split(",")))) {
                    rows.add(r.csv());
                }
                Files.write(out.resolve("deep-answer" + suffix + ".csv"), rows);
            }
            if (decoderEps.length > 0) {
                decoderRows.addAll(a.decoders(d, chosen, decoderSets, decoderEps).stream().map(DecoderRow::csv).toList());
                Files.write(out.resolve("deep-answer-decoders" + suffix + ".csv"), decoderRows);
            }
        }
        if (rows.size() > 1) {
            a.charts(rows, suffix);
        }
        if (decoderRows.size() > 1) {
            a.decoderChart(decoderRows, decoderEps, suffix);
        }
    }

    static Data load(Path datasets, Path cache, String network, String publicSet, List<String> setNames)
            throws IOException {
        EmbeddingCache pub = EmbeddingSets.load(datasets, publicSet, cache, network);
        int[] counts = new int[pub.classes()];
        for (int y : pub.labels()) {
            counts[y]++;
        }
        List<Integer> even = new ArrayList<>();
        List<Integer> galleryPeople = new ArrayList<>();
        List<Integer> strangers = new ArrayList<>();
        for (int c = 0; c < pub.classes(); c++) {
            (c % 2 == 0 ? even : counts[c] >= SELECTION_MIN_FACES ? galleryPeople : strangers).add(c);
        }
        EmbeddingCache calibration = pub.subset(even);
        EmbeddingBasis half = DeepFrontier.fitPublic(calibration, network, publicSet + " even people",
                DeepFrontier.BASIS_DIRECTIONS);
        Map<String, EmbeddingCache> sets = new LinkedHashMap<>();
        for (String s : setNames) {
            sets.put(s, EmbeddingSets.load(datasets, s, cache, network));
        }
        Map<String, EmbeddingCache> measured = new LinkedHashMap<>();
        for (String s : setNames) {
            String m = measuredOn(s);
            if (!measured.containsKey(m)) {
                measured.put(m, sets.containsKey(m) ? sets.get(m) : EmbeddingSets.load(datasets, m, cache, network));
            }
        }
        List<Integer> odd = new ArrayList<>(galleryPeople);
        odd.addAll(strangers);
        return new Data(network, pub.subset(galleryPeople), pub.subset(strangers), calibration, half, sets, measured,
                pub.subset(odd));
    }

    /** Where a set's FPIR is measured: LFW people outside lfw-public and outside the set. */
    static String measuredOn(String set) {
        return set.equals("lfw139") ? "lfw5" : "lfw139";
    }

    // ---------------------------------------------------------------- selection on lfw-public

    static String key(double eps, int gallery) {
        return fmt(eps) + "/" + gallery;
    }

    /** The selection gallery size closest (in log) to an enrolled set's. */
    static int selectionGallery(int people) {
        int best = SELECTION_GALLERIES[0];
        for (int g : SELECTION_GALLERIES) {
            if (Math.abs(Math.log(g) - Math.log(people)) < Math.abs(Math.log(best) - Math.log(people))) {
                best = g;
            }
        }
        return best;
    }

    /**
     * Per ε and gallery size, the (k, radius) with the best mean of the decoder's closed-set
     * weighted F1 and 1 − its open-set FNIR (threshold at the decoder rate that gives released FPIR
     * 1 %), over random galleries of public people, on the half basis. Randomized response does not
     * depend on the preset and only mixes outputs, so the decoder's scores order the presets as the
     * released ones do, with less noise.
     */
    Map<String, Preset> select(Data d, List<String> lines) {
        EmbeddingCache people = d.selectionPeople();
        Map<Integer, double[][]> strangerDirs = new LinkedHashMap<>();
        Map<Integer, double[][]> peopleDirs = new LinkedHashMap<>();
        for (int k : ks) {
            strangerDirs.put(k, directions(d.halfBasis(), k, d.selectionStrangers().x()));
            peopleDirs.put(k, directions(d.halfBasis(), k, people.x()));
        }
        int candidates = 0;
        for (int k : ks) {
            for (int r : radii) {
                candidates += r < k / 2 ? 1 : 0;
            }
        }
        Map<String, Preset> chosen = new LinkedHashMap<>();
        Progress progress = new Progress(System.out, epsilons.length * SELECTION_GALLERIES.length * candidates);
        for (int gi = 0; gi < SELECTION_GALLERIES.length; gi++) {
            int g = Math.min(SELECTION_GALLERIES[gi], people.classes());
            List<int[][]> draws = new ArrayList<>(); // {train idx, test idx, relabelled train y, test y}
            for (int draw = 0; draw < SELECTION_DRAWS[gi]; draw++) {
                draws.add(galleryDraw(people, g, new SplittableRandom(1000L * g + draw)));
            }
            for (double eps : epsilons) {
                double best = -1;
                Preset bestPreset = null;
                List<String> cand = new ArrayList<>();
                for (int k : ks) {
                    for (int r : radii) {
                        if (r >= k / 2) {
                            continue;
                        }
                        progress.step(d.network() + " selection " + g + " ε" + fmt(eps));
                        EmbeddingMechanism m;
                        try {
                            m = new EmbeddingMechanism(d.halfBasis(), true, Noise.SIGN_CAP, k, r, eps,
                                    seeded("answer-select", d.network(), eps, k * 100 + r));
                        } catch (IllegalArgumentException tooSmall) {
                            continue;
                        }
                        double f1 = 0;
                        double fnir = 0;
                        for (int[][] dr : draws) {
                            double[][] enroll = releaseAll(m, StratifiedSplit.select(people.x(), dr[0]));
                            Gallery gal = Gallery.fromReleases(0, m.releaseSpace(), labels(g), enroll, dr[2]);
                            double[][] test = StratifiedSplit.select(peopleDirs.get(k), dr[1]);
                            int[] pred = Arrays.stream(test).mapToInt(gal::decode).toArray();
                            f1 += Metrics.weighted(dr[3], pred, g + 1).f1() / draws.size();
                            RandomizedResponse rr = RandomizedResponse.forEpsilon(g, eps, ExactDraws.secure(
                                    seeded("answer-select-rr", d.network(), eps, g)));
                            Gallery open = gal.withThreshold(gal.calibrate(strangerDirs.get(k),
                                    d.selectionStrangers().labels(), rr.decoderFalsePositiveRate(FPIR), shipped).value());
                            int miss = 0;
                            for (int i = 0; i < test.length; i++) {
                                miss += open.decode(test[i]) != dr[3][i] ? 1 : 0;
                            }
                            fnir += miss / (double) test.length / draws.size();
                        }
                        double criterion = f1 + 1 - fnir;
                        cand.add(String.format(Locale.ROOT, "%s,%s,%d,%d,%d,%d,%.4f,%.4f,%.4f", d.network(), fmt(eps), g,
                                k, r, draws.size(), f1, fnir, criterion));
                        if (criterion > best) {
                            best = criterion;
                            bestPreset = new Preset(k, r);
                        }
                    }
                }
                Preset p = bestPreset;
                for (String c : cand) {
                    String[] f = c.split(",");
                    boolean isBest = p != null && Integer.parseInt(f[3]) == p.k() && Integer.parseInt(f[4]) == p.radius();
                    lines.add(c + "," + isBest);
                }
                if (p == null) {
                    throw new IllegalStateException("no sign-cap preset exists at ε " + eps);
                }
                chosen.put(key(eps, SELECTION_GALLERIES[gi]), p);
            }
        }
        return chosen;
    }

    /** g random people of the selection set, each split 70/30; labels 0 … g − 1 in draw order. */
    static int[][] galleryDraw(EmbeddingCache people, int g, SplittableRandom random) {
        int[] perm = random.ints(0, Integer.MAX_VALUE).distinct().limit(people.classes()).toArray();
        Integer[] order = new Integer[people.classes()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Integer.compare(perm[a], perm[b]));
        int[] relabel = new int[people.classes()];
        Arrays.fill(relabel, -1);
        for (int i = 0; i < g; i++) {
            relabel[order[i]] = i;
        }
        int[] y = Arrays.stream(people.labels()).map(c -> relabel[c]).toArray();
        List<Integer> inGallery = new ArrayList<>();
        for (int i = 0; i < y.length; i++) {
            if (y[i] >= 0) {
                inGallery.add(i);
            }
        }
        int[] idx = inGallery.stream().mapToInt(Integer::intValue).toArray();
        int[] yIn = Arrays.stream(idx).map(i -> y[i]).toArray();
        StratifiedSplit split = StratifiedSplit.of(yIn, g, DeepFrontier.TRAIN_FRACTION, -1,
                random.nextLong());
        int[] train = Arrays.stream(split.train()).map(i -> idx[i]).toArray();
        int[] test = Arrays.stream(split.test()).map(i -> idx[i]).toArray();
        return new int[][] {train, test, Arrays.stream(train).map(i -> y[i]).toArray(),
                Arrays.stream(test).map(i -> y[i]).toArray()};
    }

    static List<String> labels(int n) {
        List<String> l = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            l.add("p" + i);
        }
        return l;
    }

    /** What {@link EmbeddingMechanism#direction} computes, for a basis and k without a mechanism. */
    static double[][] directions(EmbeddingBasis basis, int k, double[][] x) {
        double[][] u = new double[x.length][];
        for (int i = 0; i < x.length; i++) {
            u[i] = EmbeddingMechanism.unit(basis.project(EmbeddingMechanism.unit(x[i].clone()), k));
        }
        return u;
    }

    static double[][] directions(EmbeddingMechanism m, double[][] x) {
        double[][] u = new double[x.length][];
        for (int i = 0; i < x.length; i++) {
            u[i] = m.direction(x[i]);
        }
        return u;
    }

    // ---------------------------------------------------------------- evaluation

    /** One (network, set, ε, seed) run. */
    record Row(String network, String set, int people, double epsilon, int seed, int k, int radius,
               double enrollEpsilon, double queryEpsilon, double keep, double decoderAccuracy, double accuracy,
               double f1, double vectorF1, double threshold, int calibrationStrangers, double calibrationRate,
               String measuredOn, int measuredStrangers, double fpir, double fpirLower, double fpirUpper, double fnir,
               int publicOddStrangers, double publicOddFpir, Gallery.Bound calibration) {
        static final String HEADER = "network,set,people,epsilon,seed,k,radius,epsilon_enrollment,epsilon_query,"
                + "rr_keep,decoder_accuracy,accuracy,f1,sign_cap_vector_f1,threshold,calibration_strangers,"
                + "calibration_decoder_rate,fpir_measured_on,measured_strangers,fpir,fpir_low95,fpir_high95,fnir,"
                + "public_odd_strangers,public_odd_fpir,calibration";

        String csv() {
            return String.format(Locale.ROOT, "%s,%s,%d,%s,%d,%d,%d,%.6f,%.6f,%.6f,%.4f,%.4f,%.4f,%.4f,%.6f,%d,%.5f,%s,%d,"
                            + "%.5f,%.5f,%.5f,%.4f,%d,%.5f,%s", network, set, people, fmt(epsilon), seed, k, radius,
                    enrollEpsilon, queryEpsilon, keep, decoderAccuracy, accuracy, f1, vectorF1, threshold,
                    calibrationStrangers, calibrationRate, measuredOn, measuredStrangers, fpir, fpirLower, fpirUpper, fnir,
                    publicOddStrangers, publicOddFpir, calibration.name().toLowerCase(Locale.ROOT));
        }
    }

    List<Row> evaluate(Data d, Map<String, Preset> chosen, List<String> setNames) {
        EmbeddingBasis basis = EmbeddingBasis.bundled(d.network());
        List<Row> rows = new ArrayList<>();
        Progress progress = new Progress(System.out, setNames.size() * epsilons.length * seeds);
        for (String set : setNames) {
            EmbeddingCache data = d.sets().get(set);
            int c = data.classes();
            String measuredOn = measuredOn(set);
            EmbeddingCache measured = d.measured().get(measuredOn);
            for (double eps : epsilons) {
                Preset p = chosen.get(key(eps, selectionGallery(c)));
                for (int s = 0; s < seeds; s++) {
                    DeepFrontier.Fold fold = DeepFrontier.Fold.of(data, s);
                    EmbeddingMechanism m = new EmbeddingMechanism(basis, true, Noise.SIGN_CAP, p.k(), p.radius(), eps,
                            seeded(set, "answer-" + d.network(), eps, s));
                    Gallery gallery = Gallery.fromReleases(1, m.releaseSpace(), data.people(),
                            releaseAll(m, fold.train()), fold.yTrain());
                    RandomizedResponse rr = RandomizedResponse.forEpsilon(c, eps, ExactDraws.secure(
                            seeded(set, "answer-rr-" + d.network(), eps, s)));
                    double[][] test = directions(m, fold.test());
                    int[] yTest = fold.yTest();
                    // Closed set: the decoder never says unknown; the release still has C + 1 outputs.
                    int[] decoded = Arrays.stream(test).mapToInt(gallery::decode).toArray();
                    int[] released = Arrays.stream(decoded).map(rr::release).toArray();
                    double decoderAccuracy = accuracy(decoded, yTest);
                    Metrics closed = Metrics.weighted(yTest, released, c + 1);
                    // The sign-cap vector family on the same fold at the agent's presets, for comparison.
                    Preset vp = Preset.forEpsilon(Noise.SIGN_CAP, eps);
                    EmbeddingMechanism vs = new EmbeddingMechanism(basis, true, Noise.SIGN_CAP, vp.k(), vp.radius(), eps,
                            seeded(set, "public-sign-cap-" + d.network(), eps, s));
                    double vectorF1 = DeepFrontier.score(releaseAll(vs, fold.train()), fold.yTrain(),
                            releaseAll(vs, fold.test()), yTest, c);
                    // Open set: threshold on the public calibration strangers at the decoder rate that makes the
                    // released FPIR 1 % (+∞ when no threshold can: then only RR names strangers), under each
                    // calibration rule (Gallery.Bound).
                    double[] calScores = Arrays.stream(directions(m, d.calibration().x())).mapToDouble(gallery::bestScore)
                            .toArray();
                    double[][] strangers = directions(m, measured.x());
                    // Diagnostic: the same threshold on lfw-public's odd-numbered people, who (like the
                    // calibration strangers) were in the shipped basis's fit.
                    double[][] odd = directions(m, d.publicOdd().x());
                    for (Gallery.Bound b : bounds) {
                        Gallery.Threshold th = Gallery.threshold(calScores, d.calibration().labels(),
                                rr.decoderFalsePositiveRate(FPIR), b);
                        Gallery open = gallery.withThreshold(th.value());
                        long named = Arrays.stream(strangers).filter(q -> rr.release(open.decode(q)) != c).count();
                        double[] ci = Gallery.wilson(named, strangers.length);
                        long oddNamed = Arrays.stream(odd).filter(q -> rr.release(open.decode(q)) != c).count();
                        int misses = 0;
                        for (int i = 0; i < test.length; i++) {
                            misses += rr.release(open.decode(test[i])) != yTest[i] ? 1 : 0;
                        }
                        rows.add(new Row(d.network(), set, c, eps, s, p.k(), p.radius(), m.epsilonPerFace(), rr.epsilon(),
                                rr.keepProbability(), decoderAccuracy, closed.accuracy(), closed.f1(), vectorF1,
                                th.value(), (int) th.strangers(), th.rate(), measuredOn, strangers.length,
                                named / (double) strangers.length, ci[0], ci[1], misses / (double) test.length, odd.length,
                                oddNamed / (double) odd.length, b));
                    }
                    progress.step(d.network() + " " + set + " ε" + fmt(eps) + " seed " + s);
                }
            }
        }
        return rows;
    }

    static double accuracy(int[] pred, int[] truth) {
        int ok = 0;
        for (int i = 0; i < pred.length; i++) {
            ok += pred[i] == truth[i] ? 1 : 0;
        }
        return ok / (double) pred.length;
    }

    // ---------------------------------------------------------------- decoders: templates against the MLP

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
     * {@link #evaluate} (so the template rows repeat its figures); the public selection galleries
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

    /**
     * Closed-set F1 against ε, one chart per network: a colour per set, templates solid, the MLP
     * dashed (means over seeds or draws; the MLP on signs is in the CSV only).
     */
    void decoderChart(List<String> rows, double[] eps, String suffix) throws IOException {
        Color[] colours = {Color.BLUE, new Color(0, 150, 0), Color.MAGENTA, new Color(230, 120, 0), Color.GRAY};
        Map<String, Map<String, double[]>> byNetwork = new LinkedHashMap<>();
        Map<String, int[]> n = new LinkedHashMap<>();
        List<String> sets = new ArrayList<>();
        for (String line : rows.subList(1, rows.size())) {
            String[] f = line.split(",");
            if (f[5].equals(Decoder.MLP_SIGN.label())) {
                continue;
            }
            if (!sets.contains(f[1])) {
                sets.add(f[1]);
            }
            String key = f[5] + " " + f[1];
            int e = indexOf(eps, Double.parseDouble(f[3]));
            byNetwork.computeIfAbsent(f[0], x -> new LinkedHashMap<>()).computeIfAbsent(key, x -> new double[eps.length])[e]
                    += Double.parseDouble(f[10]);
            n.computeIfAbsent(f[0] + " " + key, x -> new int[eps.length])[e]++;
        }
        for (var net : byNetwork.entrySet()) {
            List<Charts.Series> s = new ArrayList<>();
            for (var e : net.getValue().entrySet()) {
                double[] y = e.getValue().clone();
                for (int i = 0; i < y.length; i++) {
                    y[i] /= Math.max(1, n.get(net.getKey() + " " + e.getKey())[i]);
                }
                String set = e.getKey().substring(e.getKey().indexOf(' ') + 1);
                s.add(new Charts.Series(e.getKey(), eps, y, null, !e.getKey().startsWith(Decoder.TEMPLATES.label()),
                        colours[Math.min(sets.indexOf(set), colours.length - 1)]));
            }
            Charts.line(out.resolve("deep-answer-decoders-" + net.getKey() + suffix + ".png"), "Answer release, "
                            + net.getKey() + ": templates (solid) against the recognizer's MLP (dashed), weighted F1 after "
                            + "k-RR", "ε per face", "weighted F1", true, Charts.YAxis.UNIT, Styler.LegendPosition.InsideSE,
                    900, 600, s);
        }
    }

    // ---------------------------------------------------------------- charts

    /** Means over seeds per (network, set, ε) of the given column. */
    static Map<String, double[]> means(List<String> rows, String column, double[] epsilons) {
        List<String> header = List.of(rows.get(0).split(","));
        int col = header.indexOf(column);
        Map<String, double[]> sum = new LinkedHashMap<>();
        Map<String, int[]> n = new LinkedHashMap<>();
        for (String line : rows.subList(1, rows.size())) {
            String[] f = line.split(",");
            String key = f[0] + " " + f[1];
            int e = indexOf(epsilons, Double.parseDouble(f[3]));
            sum.computeIfAbsent(key, k -> new double[epsilons.length])[e] += Double.parseDouble(f[col]);
            n.computeIfAbsent(key, k -> new int[epsilons.length])[e]++;
        }
        for (var e : sum.entrySet()) {
            int[] count = n.get(e.getKey());
            for (int i = 0; i < epsilons.length; i++) {
                e.getValue()[i] /= Math.max(1, count[i]);
            }
        }
        return sum;
    }

    static int indexOf(double[] a, double v) {
        for (int i = 0; i < a.length; i++) {
            if (a[i] == v) {
                return i;
            }
        }
        throw new IllegalArgumentException(v + " not among " + Arrays.toString(a));
    }

    void charts(List<String> all, String suffix) throws IOException {
        String rule = shipped.name().toLowerCase(Locale.ROOT);
        List<String> rows = new ArrayList<>(List.of(all.get(0)));
        all.subList(1, all.size()).stream().filter(l -> l.endsWith("," + rule)).forEach(rows::add);
        Map<String, double[]> f1 = means(rows, "f1", epsilons);
        Map<String, double[]> vector = means(rows, "sign_cap_vector_f1", epsilons);
        Map<String, double[]> keep = means(rows, "rr_keep", epsilons);
        Map<String, double[]> fnir = means(rows, "fnir", epsilons);
        Map<String, double[]> fpir = means(rows, "fpir", epsilons);
        List<Charts.Series> s = new ArrayList<>();
        for (String key : f1.keySet()) {
            s.add(new Charts.Series("answer " + key, epsilons, f1.get(key), null));
            s.add(new Charts.Series("sign-cap vector " + key, epsilons, vector.get(key), null, true, null));
        }
        for (String key : keep.keySet()) {
            if (key.startsWith("dlib")) {
                s.add(new Charts.Series("RR ceiling e^ε/(e^ε + C), " + key.substring(5), epsilons, keep.get(key), null,
                        true, Color.GRAY));
            }
        }
        Charts.line(out.resolve("deep-answer-f1" + suffix + ".png"), "Answer release vs sign-cap vector (weighted F1, " + seeds
                        + " seeds, every face at ε)", "ε per face", "weighted F1", true, Charts.YAxis.UNIT,
                Styler.LegendPosition.OutsideS, 1000, 900, s);
        List<Charts.Series> o = new ArrayList<>();
        for (String key : fnir.keySet()) {
            o.add(new Charts.Series("FNIR " + key, epsilons, fnir.get(key), null));
            o.add(new Charts.Series("measured FPIR " + key, epsilons, fpir.get(key), null, true, null));
        }
        Charts.line(out.resolve("deep-answer-openset" + suffix + ".png"), "Answer release, open set at FPIR 1 % (threshold on "
                        + "public strangers, " + rule + " rule; FPIR measured on other people)", "ε per face", "rate", true, Charts.YAxis.UNIT,
                Styler.LegendPosition.OutsideS, 1000, 800, o);
        // F1 against enrolled people, one line per (network, ε).
        List<Charts.Series> sc = new ArrayList<>();
        for (String network : List.of("dlib", "fr_feature")) {
            for (int e = 0; e < epsilons.length; e++) {
                List<double[]> pts = new ArrayList<>();
                for (var entry : f1.entrySet()) {
                    if (entry.getKey().startsWith(network + " ")) {
                        String set = entry.getKey().substring(network.length() + 1);
                        pts.add(new double[] {people(rows, set), entry.getValue()[e]});
                    }
                }
                if (pts.size() > 1) {
                    pts.sort((a, b) -> Double.compare(a[0], b[0]));
                    sc.add(new Charts.Series(network + " ε " + fmt(epsilons[e]), pts.stream().mapToDouble(p -> p[0])
                            .toArray(), pts.stream().mapToDouble(p -> p[1]).toArray(), null, network.equals("dlib"), null));
                }
            }
        }
        if (!sc.isEmpty()) {
            Charts.line(out.resolve("deep-answer-scaling" + suffix + ".png"), "Answer release: weighted F1 against enrolled people",
                    "enrolled people", "weighted F1", true, Charts.YAxis.UNIT, Styler.LegendPosition.OutsideS, 900, 800,
                    sc);
        }
    }

    static int people(List<String> rows, String set) {
        for (String line : rows.subList(1, rows.size())) {
            String[] f = line.split(",");
            if (f[1].equals(set)) {
                return Integer.parseInt(f[2]);
            }
        }
        return -1;
    }
}
