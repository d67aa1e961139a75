package org.privface.evaluation.deep;

import static org.privface.evaluation.Figures.fmt;
import static org.privface.evaluation.MlpInputs.floats;
import static org.privface.evaluation.Seeds.seeded;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;

import org.knowm.xchart.style.Styler;
import org.privface.evaluation.Charts;
import org.privface.evaluation.EmbeddingCache;
import org.privface.evaluation.Metrics;
import org.privface.evaluation.Progress;
import org.privface.evaluation.deep.DeepFrontier.Family;
import org.privface.recognizer.model.MlpModel;
import org.privface.recognizer.model.MlpOptions;
import org.privface.recognizer.model.MlpTrainer;
import org.privface.recognizer.model.ModelChoice;
import org.privface.recognizer.model.ModelKey;
import org.privface.recognizer.model.OpenSet;
import org.privface.recognizer.model.OpenSetCalibration;
import org.privface.recognizer.model.TrainedModel;

/**
 * The deep frontier's open-set part ({@link DeepFrontier#openSet}), run through the
 * recognizer's own code: {@link ModelChoice} picks the MLP or the nearest class mean on held-out
 * enrollment releases, {@link TrainedModel#scores} gives each model's open-set score, and
 * {@link OpenSetCalibration} sets the threshold for {@link #FPIR} on calibration strangers and
 * measures the FPIR, with its 95 % Wilson interval (Clopper–Pearson before issue 40), on strangers of other people.
 */
final class DeepOpenSet {
    static final double FPIR = 0.01;
    /** The recognizer's default {@code recognizer.validation-every}. */
    static final int VALIDATION_EVERY = 5;

    private DeepOpenSet() {
    }

    /** Public strangers split by person: odd-numbered people calibrate, even-numbered ones measure. */
    record Strangers(double[][] calibration, int calibrationPeople, double[][] measured, int measuredPeople,
                     int[] firstFaceOfPerson) {
        static Strangers of(EmbeddingCache pub) {
            List<Integer> calib = new ArrayList<>();
            List<Integer> measure = new ArrayList<>();
            for (int c = 0; c < pub.classes(); c++) {
                (c % 2 == 1 ? calib : measure).add(c);
            }
            EmbeddingCache m = pub.subset(measure);
            int[] labels = m.labels();
            int[] first = IntStream.range(0, labels.length)
                    .filter(i -> IntStream.range(0, i).noneMatch(j -> labels[j] == labels[i])).toArray();
            return new Strangers(pub.subset(calib).x(), calib.size(), m.x(), measure.size(), first);
        }
    }

    /** One model's open set on one fold and release. */
    record Row(String set, String family, double epsilon, int seed, ModelChoice choice, ModelChoice.Served model,
               double testF1, OpenSetCalibration calibration, OpenSetCalibration.Rate oneFacePerPerson, double fnir,
               int enrolledQueries) {
        static final String HEADER = "set,family,epsilon_per_face,seed,model,served,heldout_accuracy_mlp,"
                + "heldout_accuracy_ncm,heldout_enrollments,test_f1,threshold,fpir_target,fpir_calibration,fpir_measured,"
                + "fpir_low95,fpir_high95,fpir_one_face_per_person,fpir_one_face_low95,fpir_one_face_high95,fnir,"
                + "strangers_calibration,people_calibration,strangers_measured,people_measured,enrolled_queries";

        boolean served() {
            return choice.served() == model;
        }

        String csv() {
            OpenSetCalibration c = calibration;
            return String.format(Locale.ROOT, "%s,%s,%s,%d,%s,%s,%.4f,%.4f,%d,%.4f,%.6f,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,"
                            + "%.4f,%.4f,%d,%d,%d,%d,%d", set, family, fmt(epsilon), seed, model.wireName(), served(),
                    choice.mlpAccuracy(), choice.ncmAccuracy(), choice.heldOut(), testF1, c.threshold(), fmt(c.fpirTarget()),
                    c.calibration().rate(), c.heldOut().rate(), c.heldOut().low(), c.heldOut().high(),
                    oneFacePerPerson.rate(), oneFacePerPerson.low(), oneFacePerPerson.high(), fnir, c.calibration().total(),
                    c.calibrationPeople(), c.heldOut().total(), c.heldOutPeople(), enrolledQueries);
        }
    }

    /**
     * Enrolled people's test faces and the strangers are released the same way as the enrollment
     * ({@code cap} at {@code epsilon}, and without privacy); the closed-set frontier's folds. FNIR
     * counts enrolled queries rejected or given the wrong name.
     */
    static List<Row> rows(Map<String, EmbeddingCache> sets, EmbeddingCache pub, Family cap, int seeds, double epsilon) {
        Strangers st = Strangers.of(pub);
        List<Row> rows = new ArrayList<>();
        Progress progress = new Progress(System.out, sets.size() * seeds * 2);
        for (var entry : sets.entrySet()) {
            EmbeddingCache d = entry.getValue();
            for (int s = 0; s < seeds; s++) {
                DeepFrontier.Fold fold = DeepFrontier.Fold.of(d, s);
                rows.addAll(models(entry.getKey(), "none", 0, s, fold.train(), fold.yTrain(), fold.test(), fold.yTest(),
                        st.calibration(), st.measured(), st, d.classes()));
                progress.step(entry.getKey() + " open set, no privacy");
                double[][] test = fold.test();
                double[][] all = concat(test, st.calibration(), st.measured());
                double[][][] r = cap.release(fold.train(), fold.yTrain(), d.classes(), all, epsilon,
                        seeded(entry.getKey(), "openset", epsilon, s));
                int a = test.length;
                int b = a + st.calibration().length;
                rows.addAll(models(entry.getKey(), cap.name(), epsilon, s, r[0], fold.yTrain(),
                        Arrays.copyOfRange(r[1], 0, a), fold.yTest(), Arrays.copyOfRange(r[1], a, b),
                        Arrays.copyOfRange(r[1], b, all.length), st, d.classes()));
                progress.step(entry.getKey() + " open set, " + cap.name() + " ε" + fmt(epsilon));
            }
        }
        return rows;
    }

    /** Both models on one fold, each calibrated on the released strangers; the recognizer's choice marked. */
    static List<Row> models(String set, String family, double eps, int seed, double[][] train, int[] yTrain,
                            double[][] test, int[] yTest, double[][] calib, double[][] measure, Strangers st,
                            int classes) {
        float[][] fTrain = floats(train);
        MlpOptions options = MlpOptions.small().withSeed(seed + 1);
        ModelChoice choice = ModelChoice.measure(fTrain, yTrain, classes, options, VALIDATION_EVERY, "best");
        List<String> labels = IntStream.range(0, classes).mapToObj(Integer::toString).toList();
        List<Row> out = new ArrayList<>();
        try (MlpModel mlp = new MlpTrainer().train(fTrain, yTrain, classes, options)) {
            OpenSet open = OpenSet.fit(fTrain, yTrain, classes);
            for (ModelChoice.Served model : ModelChoice.Served.values()) {
                ModelChoice as = new ModelChoice(model, choice.mlpAccuracy(), choice.ncmAccuracy(), choice.heldOut(), true);
                TrainedModel m = new TrainedModel(new ModelKey(set, "evaluation", family), "evaluation", mlp, labels,
                        train.length, Instant.EPOCH, Double.NaN, as, open, null);
                double[] heldScores = m.scores(floats(measure)).openScore();
                OpenSetCalibration cal = OpenSetCalibration.of(FPIR, m.scores(floats(calib)).openScore(),
                        st.calibrationPeople(), heldScores, st.measuredPeople());
                double[] firstFaces = Arrays.stream(st.firstFaceOfPerson()).mapToDouble(i -> heldScores[i]).toArray();
                TrainedModel calibrated = new TrainedModel(m.key(), m.version(), mlp, labels, train.length,
                        Instant.EPOCH, Double.NaN, as, open, cal);
                float[][] fTest = floats(test);
                List<TrainedModel.Decision> decisions = calibrated.decide(fTest, 0, 0);
                int misses = 0;
                for (int i = 0; i < fTest.length; i++) {
                    String label = decisions.get(i).label();
                    misses += label == null || Integer.parseInt(label) != yTest[i] ? 1 : 0;
                }
                double f1 = Metrics.weighted(yTest, calibrated.scores(fTest).predicted(), classes).f1();
                out.add(new Row(set, family, eps, seed, choice, model, f1, cal,
                        OpenSetCalibration.Rate.above(firstFaces, cal.threshold()), misses / (double) fTest.length,
                        fTest.length));
            }
        }
        return out;
    }

    static List<String> csv(List<Row> rows) {
        List<String> lines = new ArrayList<>();
        lines.add(Row.HEADER);
        rows.forEach(r -> lines.add(r.csv()));
        return lines;
    }

    /**
     * The served model's measured FPIR at ε against the number of enrolled people: the mean over
     * seeds, and the means of the Clopper–Pearson bounds, beside the target.
     */
    static void plot(List<Row> rows, Map<String, Integer> people, double epsilon, Path png) throws IOException {
        Map<String, List<Row>> bySet = new LinkedHashMap<>();
        rows.stream().filter(r -> r.served() && r.epsilon() == epsilon)
                .forEach(r -> bySet.computeIfAbsent(r.set(), k -> new ArrayList<>()).add(r));
        List<String> sets = bySet.keySet().stream().sorted((a, b) -> Integer.compare(people.get(a), people.get(b))).toList();
        double[] x = sets.stream().mapToDouble(people::get).toArray();
        double[] measured = sets.stream().mapToDouble(s -> bySet.get(s).stream()
                .mapToDouble(r -> r.calibration().heldOut().rate()).average().orElse(Double.NaN)).toArray();
        double[] low = sets.stream().mapToDouble(s -> bySet.get(s).stream()
                .mapToDouble(r -> r.calibration().heldOut().low()).average().orElse(Double.NaN)).toArray();
        double[] high = sets.stream().mapToDouble(s -> bySet.get(s).stream()
                .mapToDouble(r -> r.calibration().heldOut().high()).average().orElse(Double.NaN)).toArray();
        double[] target = Arrays.stream(x).map(v -> FPIR).toArray();
        Charts.line(png, "Open set: measured FPIR on held-out public strangers (served model, ε " + fmt(epsilon)
                        + " per face)", "enrolled people", "FPIR", true, new Charts.YAxis(0.0, 0.03, false),
                Styler.LegendPosition.OutsideS, 900, 640, List.of(
                        new Charts.Series("measured FPIR (mean over seeds)", x, measured, null, false, null),
                        new Charts.Series("Wilson 95% low (mean)", x, low, null, true, Color.GRAY),
                        new Charts.Series("Wilson 95% high (mean)", x, high, null, true, Color.DARK_GRAY),
                        new Charts.Series("target FPIR " + fmt(FPIR * 100) + "%", x, target, null, true, Color.RED)));
    }

    static double[][] concat(double[][]... parts) {
        return Arrays.stream(parts).flatMap(Arrays::stream).toArray(double[][]::new);
    }
}
