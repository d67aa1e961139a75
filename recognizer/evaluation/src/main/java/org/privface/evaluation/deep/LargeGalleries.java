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
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;

import org.knowm.xchart.style.Styler;
import org.privface.evaluation.Charts;
import org.privface.evaluation.EmbeddingCache;
import org.privface.evaluation.EmbeddingSets;
import org.privface.evaluation.Progress;
import org.privface.privacy.ExactDraws;
import org.privface.privacy.answer.Gallery;
import org.privface.privacy.answer.RandomizedResponse;
import org.privface.privacy.embedding.EmbeddingBasis;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.privacy.embedding.EmbeddingMechanism.Noise;
import org.privface.privacy.embedding.EmbeddingMechanism.Preset;

/**
 * Issue 45: the answer release's open set on large galleries. Same folds, releases, seeds, public
 * calibration strangers (lfw-public's even-numbered people), Wilson-bounded calibration and
 * measured strangers as {@link DeepAnswer}; what varies is how a query's cosines to the templates
 * become the open-set score ({@link Gallery.Score}, calibrated on the public strangers with the same
 * rule), and, per track, whether one answer is given for several faces of one person (the unit
 * mean of their directions, decoded and released once).
 *
 * <p>The enrollment presets are the ones issue 29's public selection chose
 * ({@code deep-answer-selection.csv}, {@code chosen} rows), so nothing here is chosen on the
 * evaluation sets.
 *
 * <p>Tracks ({@link Gallery#trackDirection}): a person's test faces (and a measured stranger's faces) taken
 * {@code --track} (a list) at a time
 * in fold order, the rest dropped; the threshold is calibrated on single public faces, as lfw-public
 * has too few people for the thousand-odd public tracks a Wilson bound at this rate needs; LFW's and ORL's photos of one person are more varied than the frames of
 * one camera track, so this is a conservative stand-in for a real track.
 */
final class LargeGalleries {
    private final int seeds;
    private final double[] epsilons;
    /** {@link Gallery.Score} names, or {@code znorm} (evaluation only, see {@link #rule}). */
    private final List<String> scores;
    /** Faces per track, one decision unit each (besides single faces). */
    private final int[] tracks;
    /** Whether tracks are calibrated on public tracks (true) or on single public faces. */
    private boolean trackCalibration;
    private final Map<String, Preset> presets;

    private List<String> templates = List.of("releases");
    /** ε of each template release; NaN: the answer's ε, as the agent enrolls by default. */
    private double templateEpsilon = Double.NaN;

    /** Releases of each enrolled face (agent.enroll-releases): its ε is that many times the template ε. */
    private int enrollReleases = 1;

    LargeGalleries templateEpsilon(double e, int releases) {
        templateEpsilon = e;
        enrollReleases = releases;
        return this;
    }

    LargeGalleries(int seeds, double[] epsilons, List<String> scores, int[] tracks, Map<String, Preset> presets) {
        this.seeds = seeds;
        this.epsilons = epsilons;
        this.scores = scores;
        this.tracks = tracks;
        this.presets = presets;
    }

    /** Which templates each gallery is built from ({@link #templateReleases}); {@code releases} is the shipped kind. */
    LargeGalleries templates(List<String> kinds) {
        templates = kinds;
        return this;
    }

    /**
     * The releases a gallery's templates average, per training face (the gallery takes each class's unit mean):
     * <ul>
     *   <li>{@code releases}: each enrolled face released at ε by the preset's sign-cap, as shipped;</li>
     *   <li>{@code exact}: each face's raw direction, no release: the non-private ceiling of these
     *       templates, a diagnostic only;</li>
     *   <li>{@code person-dither}: a person-level release. As many releases per person as it has faces,
     *       each at the same ε and preset (so the person's ε is what {@code releases} spends), but each
     *       the sign-cap of the person's unit mean direction plus a fresh uniform dither in
     *       [−2/√k, 2/√k] per coordinate, so their mean estimates the mean direction itself instead of
     *       the mean of the faces' signs.</li>
     * </ul>
     */
    static double[][] templateReleases(String kind, EmbeddingMechanism m, Preset p, double eps, DeepFrontier.Fold fold,
                                       int classes, java.security.SecureRandom random) {
        double[][] dirs = DeepAnswer.directions(m, fold.train());
        return switch (kind) {
            case "releases" -> releaseAll(m, fold.train());
            case "exact" -> dirs;
            case "person-dither" -> {
                int k = dirs[0].length;
                double[][] mean = Gallery.templates(dirs, fold.yTrain(), classes);
                org.privface.privacy.embedding.HammingCap cap = org.privface.privacy.embedding.HammingCap.forEpsilon(k,
                        p.radius(), eps, random);
                double a = 2 / Math.sqrt(k);
                double s = 1 / Math.sqrt(k);
                double[][] out = new double[dirs.length][k];
                for (int i = 0; i < dirs.length; i++) {
                    double[] mu = mean[fold.yTrain()[i]];
                    boolean[] code = new boolean[k];
                    for (int j = 0; j < k; j++) {
                        code[j] = mu[j] + a * (2 * random.nextDouble() - 1) >= 0;
                    }
                    boolean[] r = cap.release(code);
                    for (int j = 0; j < k; j++) {
                        out[i][j] = r[j] ? s : -s;
                    }
                }
                yield out;
            }
            default -> throw new IllegalArgumentException("--templates: releases, exact or person-dither, not " + kind);
        };
    }

    LargeGalleries calibrateTracksOnTracks(boolean on) {
        trackCalibration = on;
        return this;
    }

    /** The chosen (k, radius) per "network/ε/gallery" from a selection CSV of {@link DeepAnswer}. */
    static Map<String, Preset> presets(Path selectionCsv) throws IOException {
        Map<String, Preset> m = new LinkedHashMap<>();
        for (String line : Files.readAllLines(selectionCsv).subList(1, Files.readAllLines(selectionCsv).size())) {
            String[] f = line.split(",");
            if (f[9].equals("true")) {
                m.put(f[0] + "/" + DeepAnswer.key(Double.parseDouble(f[1]), Integer.parseInt(f[2])),
                        new Preset(Integer.parseInt(f[3]), Integer.parseInt(f[4])));
            }
        }
        return m;
    }

    record Row(String network, String set, int people, double epsilon, int seed, int k, int radius, String unit,
               int size, String score, double decoderAccuracy, double threshold, double calibrationRate,
               int calibrationUnits, String measuredOn, int measuredUnits, double fpir, double fpirLow, double fpirHigh,
               double fnir, String diagnosticOn, double diagnosticFpir, int queries, String templates,
               double templateEpsilon, int templateReleases) {
        static final String HEADER = "network,set,people,epsilon,seed,k,radius,unit,track_faces,score,decoder_accuracy,"
                + "threshold,calibration_decoder_rate,calibration_units,fpir_measured_on,measured_units,fpir,fpir_low95,"
                + "fpir_high95,fnir,diagnostic_on,diagnostic_fpir,queries,templates,template_epsilon,template_releases";

        String csv() {
            return String.format(Locale.ROOT, "%s,%s,%d,%s,%d,%d,%d,%s,%d,%s,%.4f,%.6f,%.5f,%d,%s,%d,%.5f,%.5f,%.5f,"
                            + "%.4f,%s,%.5f,%d,%s,%s,%d", network, set, people, fmt(epsilon), seed, k, radius, unit, size,
                    score, decoderAccuracy, threshold, calibrationRate, calibrationUnits,
                    measuredOn, measuredUnits, fpir, fpirLow, fpirHigh, fnir, diagnosticOn, diagnosticFpir, queries,
                    templates, fmt(templateEpsilon), templateReleases);
        }
    }

    /**
     * One enrolled set and what it is measured against: the basis its releases and queries use, the
     * public calibration strangers, the strangers FPIR is measured on and a second, diagnostic stranger set.
     */
    record Setup(String network, String set, EmbeddingCache data, EmbeddingBasis basis, EmbeddingCache calibration,
                 String measuredOn, EmbeddingCache measured, String diagnosticOn, EmbeddingCache diagnostic) {
    }

    /**
     * The public watchlist: every {@code publicSet} person with at least {@code minFaces} faces
     * enrolled (743 people at 3 in lfw-public). Nothing else may come from them or from the
     * bundled basis (fitted on lfw-public), so the basis is fitted on lfw139 (disjoint people),
     * the calibration strangers are the public people with fewer faces, FPIR is measured on lfw5 and
     * ORL is the diagnostic: four disjoint sets of people.
     */
    static Setup publicGallery(Path datasets, Path cache, String network, String publicSet, int minFaces)
            throws IOException {
        EmbeddingCache pub = EmbeddingSets.load(datasets, publicSet, cache, network);
        int[] counts = new int[pub.classes()];
        for (int y : pub.labels()) {
            counts[y]++;
        }
        List<Integer> enrolled = new ArrayList<>();
        List<Integer> fewer = new ArrayList<>();
        for (int c = 0; c < counts.length; c++) {
            (counts[c] >= minFaces ? enrolled : fewer).add(c);
        }
        EmbeddingCache basisPeople = EmbeddingSets.load(datasets, "lfw139", cache, network);
        EmbeddingBasis basis = DeepFrontier.fitPublic(basisPeople, network, "lfw139", DeepFrontier.BASIS_DIRECTIONS);
        EmbeddingCache gallery = pub.subset(enrolled);
        EmbeddingCache calibration = pub.subset(fewer);
        System.out.printf("public gallery: %d people (%d faces) enrolled; basis on lfw139 (%d faces); %d calibration "
                        + "strangers (%d people with < %d faces)%n", gallery.classes(), gallery.x().length,
                basisPeople.x().length, calibration.x().length, calibration.classes(), minFaces);
        return new Setup(network, publicSet + "-" + minFaces + "plus", gallery, basis, calibration, "lfw5",
                EmbeddingSets.load(datasets, "lfw5", cache, network), "orl",
                EmbeddingSets.load(datasets, "orl", cache, network));
    }

    /** DeepAnswer's sets: the bundled basis, lfw-public's even people calibrate, lfw-public's odd ones the diagnostic. */
    static List<Setup> setups(DeepAnswer.Data d, List<String> setNames) {
        EmbeddingBasis basis = EmbeddingBasis.bundled(d.network());
        List<Setup> l = new ArrayList<>();
        for (String set : setNames) {
            String on = DeepAnswer.measuredOn(set);
            l.add(new Setup(d.network(), set, d.sets().get(set), basis, d.calibration(), on, d.measured().get(on),
                    "lfw-public-odd", d.publicOdd()));
        }
        return l;
    }

    List<Row> evaluate(List<Setup> setups) {
        List<Row> rows = new ArrayList<>();
        Progress progress = new Progress(System.out, setups.size() * epsilons.length * seeds);
        for (Setup su : setups) {
            String set = su.set();
            EmbeddingCache data = su.data();
            EmbeddingBasis basis = su.basis();
            int c = data.classes();
            String measuredOn = su.measuredOn();
            EmbeddingCache measured = su.measured();
            for (double eps : epsilons) {
                // Templates at their own ε where asked (--template-eps), else at the answer's: the preset follows it.
                double tEps = Double.isNaN(templateEpsilon) ? eps : templateEpsilon;
                Preset p = presets.get(su.network() + "/" + DeepAnswer.key(tEps, DeepAnswer.selectionGallery(c)));
                if (p == null) {
                    throw new IllegalStateException("no selected preset for " + su.network() + " at ε " + fmt(eps));
                }
                for (int s = 0; s < seeds; s++) {
                    DeepFrontier.Fold fold = DeepFrontier.Fold.of(data, s);
                    // The same seeds as DeepAnswer.evaluate: the same releases and the same RR draws.
                    EmbeddingMechanism m = new EmbeddingMechanism(basis, true, Noise.SIGN_CAP, p.k(), p.radius(), tEps,
                            seeded(set, "answer-" + su.network(), eps, s));
                    for (String kind : templates) {
                    // Each training face released enrollReleases times (the agent's agent.enroll-releases).
                    List<double[]> rel = new ArrayList<>();
                    int[] relLabels = new int[fold.yTrain().length * enrollReleases];
                    for (int n = 0; n < enrollReleases; n++) {
                        rel.addAll(List.of(templateReleases(kind, m, p, tEps, fold, c,
                                seeded(set, "templates-" + kind + (n == 0 ? "" : "-" + n), eps, s))));
                        System.arraycopy(fold.yTrain(), 0, relLabels, n * fold.yTrain().length, fold.yTrain().length);
                    }
                    Gallery gallery = Gallery.fromReleases(1, m.releaseSpace(), data.people(),
                            rel.toArray(double[][]::new), relLabels);
                    double[][] test = DeepAnswer.directions(m, fold.test());
                    double[][] cal = DeepAnswer.directions(m, su.calibration().x());
                    double[][] strangers = DeepAnswer.directions(m, measured.x());
                    double[][] odd = DeepAnswer.directions(m, su.diagnostic().x());
                    List<Units> units = new ArrayList<>(List.of(Units.faces(test, fold.yTest())));
                    for (int t : tracks) {
                        if (t > 1) {
                            units.add(Units.tracks(test, fold.yTest(), t));
                        }
                    }
                    for (Units q : units) {
                        if (q.directions.length == 0) {
                            continue; // no person has that many test faces (ORL's 3 per person and tracks of 5)
                        }
                        // Tracks are calibrated on single public faces by default (lfw-public's calibration people
                        // give about 1,000 tracks of 2 and 450 of 3, few for a Wilson bound at these rates);
                        // --track-calibration tracks uses the public people's own tracks instead.
                        Units calU = q.size > 1 && trackCalibration ? Units.tracks(cal, su.calibration().labels(), q.size)
                                : Units.faces(cal, su.calibration().labels());
                        Units strU = q.size == 1 ? Units.faces(strangers, measured.labels())
                                : Units.tracks(strangers, measured.labels(), q.size);
                        Units oddU = q.size == 1 ? Units.faces(odd, su.diagnostic().labels())
                                : Units.tracks(odd, su.diagnostic().labels(), q.size);
                        double[][] qCos = cosines(gallery, q.directions);
                        double[][] calCos = cosines(gallery, calU.directions);
                        double[][] strCos = cosines(gallery, strU.directions);
                        double[][] oddCos = cosines(gallery, oddU.directions);
                        int[] best = Arrays.stream(qCos).mapToInt(Gallery::argmax).toArray();
                        double acc = DeepAnswer.accuracy(best, q.labels);
                        for (String name : scores) {
                            ToDoubleFunction<double[]> rule = rule(name, calCos);
                            // A fresh RR per rule with DeepAnswer's seed (faces), so the rules see the same channel draws (not
                            // DeepAnswer's draws: it spends some on its closed-set figures first).
                            RandomizedResponse rr = RandomizedResponse.forEpsilon(c, eps, ExactDraws.secure(
                                    seeded(set, "answer-rr-" + su.network() + (q.size == 1 ? "" : "-track" + q.size), eps, s)));
                            double[] calScores = Arrays.stream(calCos).mapToDouble(rule).toArray();
                            Gallery.Threshold th = Gallery.threshold(calScores, calU.labels,
                                    rr.decoderFalsePositiveRate(DeepAnswer.FPIR), Gallery.Bound.WILSON);
                            long named = Arrays.stream(strCos).filter(x -> rr.release(decode(x, rule, th.value(), c)) != c)
                                    .count();
                            double[] ci = org.privface.privacy.Proportions.wilson95(named, strCos.length);
                            long oddNamed = Arrays.stream(oddCos)
                                    .filter(x -> rr.release(decode(x, rule, th.value(), c)) != c).count();
                            int misses = 0;
                            for (int i = 0; i < qCos.length; i++) {
                                misses += rr.release(decode(qCos[i], rule, th.value(), c)) != q.labels[i] ? 1 : 0;
                            }
                            rows.add(new Row(su.network(), set, c, eps, s, p.k(), p.radius(), q.unit, q.size, name, acc,
                                    th.value(), th.rate(), calScores.length, measuredOn, strCos.length,
                                    named / (double) strCos.length, ci[0], ci[1], misses / (double) qCos.length,
                                    su.diagnosticOn(), oddNamed / (double) oddCos.length, qCos.length, kind, tEps,
                                    enrollReleases));
                        }
                    }
                    }
                    progress.step(su.network() + " " + set + " ε" + fmt(eps) + " seed " + s);
                }
            }
        }
        return rows;
    }

    static double[][] cosines(Gallery g, double[][] directions) {
        return Arrays.stream(directions).map(g::scores).toArray(double[][]::new);
    }

    /** The best template, or c (unknown) when the rule's score does not exceed the threshold. */
    static int decode(double[] cosines, ToDoubleFunction<double[]> rule, double threshold, int c) {
        return rule.applyAsDouble(cosines) > threshold ? Gallery.argmax(cosines) : c;
    }

    /**
     * A named open-set score: a {@link Gallery.Score}, or {@code znorm}: per-identity thresholds, the
     * best template's cosine as a standard score against the public calibration strangers' cosines to
     * that template (their mean and sd per template; the gallery would have to carry 2C numbers more,
     * so it is evaluated here only).
     */
    static ToDoubleFunction<double[]> rule(String name, double[][] calibrationCosines) {
        if (!name.equals("znorm")) {
            Gallery.Score s = Gallery.Score.valueOf(name.toUpperCase(Locale.ROOT));
            return s::of;
        }
        int c = calibrationCosines[0].length;
        double[] mean = new double[c];
        double[] sd = new double[c];
        for (double[] x : calibrationCosines) {
            for (int j = 0; j < c; j++) {
                mean[j] += x[j] / calibrationCosines.length;
            }
        }
        for (double[] x : calibrationCosines) {
            for (int j = 0; j < c; j++) {
                sd[j] += (x[j] - mean[j]) * (x[j] - mean[j]) / calibrationCosines.length;
            }
        }
        for (int j = 0; j < c; j++) {
            sd[j] = Math.max(1e-9, Math.sqrt(sd[j]));
        }
        return x -> {
            int b = Gallery.argmax(x);
            return (x[b] - mean[b]) / sd[b];
        };
    }

    /** Decision units: single faces, or tracks of a person's faces (the unit mean of their directions). */
    record Units(String unit, int size, double[][] directions, int[] labels) {
        static Units faces(double[][] d, int[] y) {
            return new Units("face", 1, d, y);
        }

        /** Each person's faces in order, {@code size} at a time; a person's last incomplete group is dropped. */
        static Units tracks(double[][] d, int[] y, int size) {
            Map<Integer, List<Integer>> byPerson = new LinkedHashMap<>();
            for (int i = 0; i < y.length; i++) {
                byPerson.computeIfAbsent(y[i], x -> new ArrayList<>()).add(i);
            }
            List<double[]> dirs = new ArrayList<>();
            List<Integer> labels = new ArrayList<>();
            for (var e : byPerson.entrySet()) {
                List<Integer> idx = e.getValue();
                for (int start = 0; start + size <= idx.size(); start += size) {
                    dirs.add(Gallery.trackDirection(idx.subList(start, start + size).stream().map(i -> d[i])
                            .toArray(double[][]::new)));
                    labels.add(e.getKey());
                }
            }
            return new Units("track", size, dirs.toArray(double[][]::new), labels.stream().mapToInt(Integer::intValue)
                    .toArray());
        }
    }

    static void run(Map<String, String> opt, Path datasets, Path cache, Path out) throws IOException {
        List<String> rules = Arrays.stream(opt.get("--scores").split(",")).map(x -> x.trim().toLowerCase(Locale.ROOT))
                .toList();
        LargeGalleries l = new LargeGalleries(Integer.parseInt(opt.get("--seeds")), DeepAnswer.doubles(opt.get("--eps")),
                rules, DeepAnswer.ints(opt.get("--track")), presets(Path.of(opt.get("--selection-csv"))))
                .calibrateTracksOnTracks(opt.get("--track-calibration").equals("tracks"))
                .templates(List.of(opt.get("--templates").split(",")))
                .templateEpsilon(opt.get("--template-eps").isEmpty() ? Double.NaN : Double.parseDouble(opt.get("--template-eps")),
                        Integer.parseInt(opt.get("--enroll-releases")));
        Files.createDirectories(out);
        List<String> rows = new ArrayList<>();
        rows.add(Row.HEADER);
        List<String> sets = List.of(opt.get("--sets").split(","));
        Path csv = out.resolve("large-galleries" + opt.get("--suffix") + ".csv");
        for (String network : opt.get("--large-galleries").split(",")) {
            List<Setup> setups = new ArrayList<>();
            if (!sets.equals(List.of("none"))) {
                setups.addAll(setups(DeepAnswer.load(datasets, cache, network, opt.get("--public"), sets), sets));
            }
            if (!opt.get("--public-gallery").isEmpty()) {
                setups.add(publicGallery(datasets, cache, network, opt.get("--public"),
                        Integer.parseInt(opt.get("--public-gallery"))));
            }
            for (Row r : l.evaluate(setups)) {
                rows.add(r.csv());
            }
            Files.write(csv, rows);
        }
        System.out.println("wrote " + csv);
        summary(rows);
        chart(rows, out.resolve("large-galleries" + opt.get("--suffix") + ".png"));
    }

    /**
     * FNIR at FPIR 1 % (mean over seeds) against the faces per decision (1 = single faces), one line
     * per (network, set, ε), for the cosine score; the other rules are in the CSV.
     */
    static void chart(List<String> rows, Path png) throws IOException {
        Map<String, Map<Integer, double[]>> m = new LinkedHashMap<>();
        for (String line : rows.subList(1, rows.size())) {
            String[] f = line.split(",");
            if (!f[9].equals("cosine")) {
                continue;
            }
            String templates = f[23].equals("releases") ? "" : " (" + f[23] + " templates)";
            double[] a = m.computeIfAbsent(f[0] + " " + f[1] + " ε " + f[3] + templates, x -> new TreeMap<>())
                    .computeIfAbsent(Integer.parseInt(f[8]), x -> new double[2]);
            a[0] += Double.parseDouble(f[19]);
            a[1]++;
        }
        List<Charts.Series> series = new ArrayList<>();
        for (var e : m.entrySet()) {
            double[] x = e.getValue().keySet().stream().mapToDouble(Integer::doubleValue).toArray();
            double[] y = e.getValue().values().stream().mapToDouble(a -> a[0] / a[1]).toArray();
            series.add(new Charts.Series(e.getKey(), x, y, null));
        }
        Charts.line(png, "Answer release: FNIR at FPIR 1 % against faces per answer (one answer per track)",
                "faces per track", "FNIR at FPIR 1 %", false, Charts.YAxis.UNIT, Styler.LegendPosition.InsideNE, 900, 600,
                series);
    }

    /** Means over seeds per (network, set, ε, unit, score): FNIR, measured FPIR, decoder accuracy. */
    static void summary(List<String> rows) {
        Map<String, double[]> m = new LinkedHashMap<>();
        for (String line : rows.subList(1, rows.size())) {
            String[] f = line.split(",");
            String key = String.join(" ", f[0], f[1], "ε" + f[3], f[7] + f[8], f[9], f[23],
                "templates ε" + f[24] + "×" + f[25]);
            double[] a = m.computeIfAbsent(key, x -> new double[4]);
            a[0] += Double.parseDouble(f[19]);
            a[1] += Double.parseDouble(f[16]);
            a[2] += Double.parseDouble(f[10]);
            a[3]++;
        }
        System.out.println("network set ε unit score templates: FNIR, measured FPIR, decoder accuracy (mean over seeds)");
        for (var e : m.entrySet()) {
            double[] a = e.getValue();
            System.out.printf(Locale.ROOT, "%s: %.3f %.4f %.3f (n=%d)%n", e.getKey(), a[0] / a[3], a[1] / a[3],
                    a[2] / a[3], (int) a[3]);
        }
    }
}
