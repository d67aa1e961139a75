package org.privface.evaluation.deep;

import static org.privface.evaluation.Figures.fmt;
import static org.privface.evaluation.Seeds.seeded;
import static org.privface.evaluation.deep.DeepFrontier.releaseAll;

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

import org.privface.evaluation.EmbeddingCache;
import org.privface.evaluation.EmbeddingSets;
import org.privface.evaluation.Metrics;
import org.privface.evaluation.Progress;
import org.privface.evaluation.StratifiedSplit;
import org.privface.privacy.ExactDraws;
import org.privface.privacy.answer.Gallery;
import org.privface.privacy.answer.RandomizedResponse;
import org.privface.privacy.embedding.EmbeddingBasis;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.privacy.embedding.EmbeddingMechanism.Noise;
import org.privface.privacy.embedding.EmbeddingMechanism.Preset;

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
        decoderRows.add(AnswerDecoders.DecoderRow.HEADER);
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
                decoderRows.addAll(a.decoderComparison().decoders(d, chosen, decoderSets, decoderEps).stream().map(AnswerDecoders.DecoderRow::csv).toList());
                Files.write(out.resolve("deep-answer-decoders" + suffix + ".csv"), decoderRows);
            }
        }
        if (rows.size() > 1) {
            a.charts().charts(rows, suffix);
        }
        if (decoderRows.size() > 1) {
            a.charts().decoderChart(decoderRows, decoderEps, suffix);
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
                        double[] ci = org.privface.privacy.Proportions.wilson95(named, strangers.length);
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

    /** The decoder comparison on this run's seeds, output folder and shipped calibration rule. */
    AnswerDecoders decoderComparison() {
        return new AnswerDecoders(seeds, shipped);
    }

    /** The charts of this run's ε grid and shipped rule. */
    AnswerCharts charts() {
        return new AnswerCharts(seeds, epsilons, out, shipped);
    }
}
