package org.privface.evaluation;

import static org.privface.evaluation.DeepFrontierEvaluation.fmt;
import static org.privface.evaluation.DeepFrontierEvaluation.floats;
import static org.privface.evaluation.DeepFrontierEvaluation.seeded;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.privface.evaluation.DeepFrontierEvaluation.Family;
import org.privface.evaluation.DeepFrontierEvaluation.NearestMean;
import org.privface.recognizer.model.MlpModel;
import org.privface.recognizer.model.MlpOptions;
import org.privface.recognizer.model.MlpTrainer;
import org.privface.recognizer.model.OpenSet;

/**
 * The deep frontier's open-set part ({@link DeepFrontierEvaluation#openSet}): FNIR at a threshold
 * that holds the false-positive identification rate at {@link #FPIR} on strangers, by the nearest
 * class mean and by the recognizer's own MLP and {@link OpenSet} rule.
 */
final class DeepOpenSet {
    static final double FPIR = 0.01;

    private DeepOpenSet() {
    }

    /**
     * Open set: enrolled people's test faces and strangers (lfw-public; odd-numbered people set
     * the threshold at FPIR 1%, even-numbered ones measure it) are released the same way; a query
     * is accepted when its best cosine to a class mean reaches the threshold. FNIR counts enrolled
     * queries rejected or given the wrong name. The closed-set frontier's folds; {@code cap} releases
     * enrolled faces, queries and strangers alike. Rows for deep-openset.csv, header first.
     */
    static List<String> lines(Map<String, EmbeddingCache> sets, EmbeddingCache strangers, Family cap, int seeds,
                              double epsilon) {
        List<Integer> calib = new ArrayList<>();
        List<Integer> measure = new ArrayList<>();
        for (int c = 0; c < strangers.classes(); c++) {
            (c % 2 == 1 ? calib : measure).add(c);
        }
        double[][] calibX = strangers.subset(calib).x();
        double[][] measureX = strangers.subset(measure).x();
        List<String> lines = new ArrayList<>();
        // threshold: the cosine threshold (nearest class mean rows) or the OpenSet margin (-mlp-openset rows).
        lines.add("set,family,epsilon_per_face,seed,threshold,fpir_calibration,fpir_measured,fnir,strangers_calibration,"
                + "strangers_measured,enrolled_queries");
        for (var entry : sets.entrySet()) {
            EmbeddingCache d = entry.getValue();
            for (int s = 0; s < seeds; s++) {
                DeepFrontierEvaluation.Fold fold = DeepFrontierEvaluation.Fold.of(d, s);
                double[][] train = fold.train();
                double[][] test = fold.test();
                int[] yTrain = fold.yTrain();
                int[] yTest = fold.yTest();
                // No privacy.
                lines.add(openSetLine(entry.getKey(), "none", 0, s, train, yTrain, test, yTest, calibX, measureX,
                        d.classes()));
                if (s == 0) {
                    lines.add(recognizerLine(entry.getKey(), "none-mlp-openset", 0, s, train, yTrain, test, yTest,
                            calibX, measureX, d.classes()));
                }
                // The recommended release: one mechanism releases enrolled faces, queries and strangers alike.
                double[][] all = concat(test, calibX, measureX);
                double[][][] r = cap.release(train, yTrain, d.classes(), all, epsilon,
                        seeded(entry.getKey(), "openset", epsilon, s));
                double[][] rTest = Arrays.copyOfRange(r[1], 0, test.length);
                double[][] rCalib = Arrays.copyOfRange(r[1], test.length, test.length + calibX.length);
                double[][] rMeasure = Arrays.copyOfRange(r[1], test.length + calibX.length, all.length);
                lines.add(openSetLine(entry.getKey(), cap.name(), epsilon, s, r[0], yTrain, rTest, yTest, rCalib,
                        rMeasure, d.classes()));
                if (s == 0) {
                    lines.add(recognizerLine(entry.getKey(), cap.name() + "-mlp-openset", epsilon, s, r[0], yTrain,
                            rTest, yTest, rCalib, rMeasure, d.classes()));
                }
            }
        }
        return lines;
    }

    static String openSetLine(String set, String family, double eps, int seed, double[][] train, int[] yTrain,
                              double[][] test, int[] yTest, double[][] calib, double[][] measure, int classes) {
        NearestMean m = NearestMean.fit(train, yTrain, classes);
        double[] calibScores = Arrays.stream(calib).mapToDouble(q -> max(m.similarities(q))).sorted().toArray();
        // The smallest threshold that lets at most 1% of calibration strangers through (accept: score > t).
        int allowed = (int) Math.floor(FPIR * calibScores.length);
        double threshold = calibScores[calibScores.length - 1 - allowed];
        double fpirCal = Arrays.stream(calibScores).filter(v -> v > threshold).count() / (double) calibScores.length;
        double fpir = Arrays.stream(measure).filter(q -> max(m.similarities(q)) > threshold).count()
                / (double) measure.length;
        int misses = 0;
        for (int i = 0; i < test.length; i++) {
            double[] sim = m.similarities(test[i]);
            int best = m.predict(test[i]);
            if (!(sim[best] > threshold) || best != yTest[i]) {
                misses++;
            }
        }
        return String.format(Locale.ROOT, "%s,%s,%s,%d,%.6f,%.4f,%.4f,%.4f,%d,%d,%d", set, family, fmt(eps), seed,
                threshold, fpirCal, fpir, misses / (double) test.length, calib.length, measure.length, test.length);
    }

    /**
     * The recognizer's own rule: its MLP names the class, its {@link OpenSet} says unknown when the
     * query is farther than margin × radius from that class's centroid, with the margin calibrated
     * on the calibration strangers ({@link OpenSet#marginForFpir}) instead of the fixed default.
     */
    static String recognizerLine(String set, String family, double eps, int seed, double[][] train, int[] yTrain,
                                 double[][] test, int[] yTest, double[][] calib, double[][] measure, int classes) {
        float[][] fTrain = floats(train);
        try (MlpModel model = new MlpTrainer().train(fTrain, yTrain, classes, MlpOptions.small().withSeed(seed + 1))) {
            OpenSet open = OpenSet.fit(fTrain, yTrain, classes);
            float[][] fCalib = floats(calib);
            double margin = open.marginForFpir(fCalib, model.predict(fCalib), FPIR);
            float[][] fMeasure = floats(measure);
            int[] pm = model.predict(fMeasure);
            int in = 0;
            for (int i = 0; i < fMeasure.length; i++) {
                in += open.accept(fMeasure[i], pm[i], margin) >= 0 ? 1 : 0;
            }
            int[] pc = model.predict(fCalib);
            int inCal = 0;
            for (int i = 0; i < fCalib.length; i++) {
                inCal += open.accept(fCalib[i], pc[i], margin) >= 0 ? 1 : 0;
            }
            float[][] fTest = floats(test);
            int[] pt = model.predict(fTest);
            int misses = 0;
            for (int i = 0; i < fTest.length; i++) {
                misses += open.accept(fTest[i], pt[i], margin) < 0 || pt[i] != yTest[i] ? 1 : 0;
            }
            return String.format(Locale.ROOT, "%s,%s,%s,%d,%.6f,%.4f,%.4f,%.4f,%d,%d,%d", set, family, fmt(eps), seed,
                    margin, inCal / (double) fCalib.length, in / (double) fMeasure.length, misses / (double) fTest.length,
                    calib.length, measure.length, test.length);
        }
    }

    static double max(double[] v) {
        return Arrays.stream(v).max().orElse(Double.NaN);
    }

    static double[][] concat(double[][]... parts) {
        return Arrays.stream(parts).flatMap(Arrays::stream).toArray(double[][]::new);
    }
}
