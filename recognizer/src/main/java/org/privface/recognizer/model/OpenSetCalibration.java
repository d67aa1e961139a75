package org.privface.recognizer.model;

import java.util.Arrays;
import java.util.Properties;

import org.privface.privacy.Proportions;


/**
 * The open-set threshold of a served model, set on public strangers and checked on others. A
 * query is accepted when its open-set score ({@link TrainedModel#scores}) exceeds the threshold;
 * the threshold is the smallest that lets at most {@code fpirTarget} of the calibration strangers
 * through. That needs at least {@link #STRANGERS_PER_FPIR}/FPIR of them (2,000 at 1%), or the
 * quantile is set by a handful of faces. Strangers of the held-out people (never the calibration
 * ones) then measure the FPIR, with its 95 % Wilson interval. Faces are counted, not people:
 * a person's faces are not independent, so the interval is narrower than it would be per person.
 *
 * @param calibration strangers of the calibration people let through at the threshold
 * @param heldOut     strangers of the other people let through: the FPIR the site gets
 */
public record OpenSetCalibration(double fpirTarget, double threshold, Rate calibration, int calibrationPeople,
                                 Rate heldOut, int heldOutPeople) {
    public static final int STRANGERS_PER_FPIR = 20;

    /** Calibration faces needed for a target FPIR. */
    public static int required(double fpir) {
        return (int) Math.ceil(STRANGERS_PER_FPIR / fpir - 1e-9);
    }

    /**
     * The threshold (accept score &gt; t) that lets ⌊fpir·n⌋ of the n calibration scores through:
     * the (⌊fpir·n⌋ + 1)-th highest score.
     */
    public static double threshold(double[] calibrationScores, double fpir) {
        if (!(fpir > 0 && fpir < 1)) {
            throw new IllegalArgumentException("FPIR must be in (0, 1), was " + fpir);
        }
        if (calibrationScores.length < required(fpir)) {
            throw new IllegalArgumentException("FPIR " + fpir + " needs at least " + required(fpir)
                    + " calibration strangers (" + STRANGERS_PER_FPIR + "/FPIR), got " + calibrationScores.length);
        }
        double[] s = calibrationScores.clone();
        Arrays.sort(s);
        int allowed = (int) Math.floor(fpir * s.length);
        return s[s.length - 1 - allowed];
    }

    /** Calibrates on one people-disjoint half of the strangers and measures on the other. */
    public static OpenSetCalibration of(double fpir, double[] calibrationScores, int calibrationPeople,
                                        double[] heldOutScores, int heldOutPeople) {
        double t = threshold(calibrationScores, fpir);
        return new OpenSetCalibration(fpir, t, Rate.above(calibrationScores, t), calibrationPeople,
                Rate.above(heldOutScores, t), heldOutPeople);
    }

    /** accepted of total, with the 95 % Wilson interval ({@link Proportions#wilson95}, the project's one interval on a rate). */
    public record Rate(int accepted, int total) {
        public static Rate above(double[] scores, double threshold) {
            return new Rate((int) Arrays.stream(scores).filter(v -> v > threshold).count(), scores.length);
        }

        public double rate() {
            return total == 0 ? Double.NaN : accepted / (double) total;
        }

        public double low() {
            return total == 0 ? Double.NaN : Proportions.wilson95(accepted, total)[0];
        }

        public double high() {
            return total == 0 ? Double.NaN : Proportions.wilson95(accepted, total)[1];
        }
    }

    void store(Properties p) {
        p.setProperty("openSet.fpirTarget", Double.toString(fpirTarget));
        p.setProperty("openSet.threshold", Double.toString(threshold));
        p.setProperty("openSet.calibration", calibration.accepted() + "/" + calibration.total());
        p.setProperty("openSet.calibrationPeople", Integer.toString(calibrationPeople));
        p.setProperty("openSet.heldOut", heldOut.accepted() + "/" + heldOut.total());
        p.setProperty("openSet.heldOutPeople", Integer.toString(heldOutPeople));
        p.setProperty("openSet.heldOutFpir", Double.toString(heldOut.rate()));
        p.setProperty("openSet.heldOutFpirLow95", Double.toString(heldOut.low()));
        p.setProperty("openSet.heldOutFpirHigh95", Double.toString(heldOut.high()));
    }

    static OpenSetCalibration load(Properties p) {
        if (p.getProperty("openSet.threshold") == null) {
            return null;
        }
        return new OpenSetCalibration(Double.parseDouble(p.getProperty("openSet.fpirTarget")),
                Double.parseDouble(p.getProperty("openSet.threshold")), rate(p.getProperty("openSet.calibration")),
                Integer.parseInt(p.getProperty("openSet.calibrationPeople")), rate(p.getProperty("openSet.heldOut")),
                Integer.parseInt(p.getProperty("openSet.heldOutPeople")));
    }

    private static Rate rate(String s) {
        String[] parts = s.split("/");
        return new Rate(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]));
    }
}
