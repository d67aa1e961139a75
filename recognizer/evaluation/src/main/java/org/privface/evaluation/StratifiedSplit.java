package org.privface.evaluation;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A seeded stratified train/test split: each class keeps its share in both parts. A class with one
 * member cannot be split: it goes to training only (the loaders name such people in a warning).
 */
public record StratifiedSplit(int[] train, int[] test) {

    /**
     * @param trainFraction share of each class used for training
     * @param maxTrainPerClass cap on training images per class (Figure 9 of PEEP), or -1
     */
    public static StratifiedSplit of(int[] labels, int classes, double trainFraction, int maxTrainPerClass, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<Integer> train = new ArrayList<>();
        List<Integer> test = new ArrayList<>();
        for (int c = 0; c < classes; c++) {
            List<Integer> members = new ArrayList<>();
            for (int i = 0; i < labels.length; i++) {
                if (labels[i] == c) {
                    members.add(i);
                }
            }
            for (int i = members.size() - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                Integer t = members.get(i);
                members.set(i, members.get(j));
                members.set(j, t);
            }
            int cut = (int) Math.round(members.size() * trainFraction);
            int keep = maxTrainPerClass > 0 ? Math.min(cut, maxTrainPerClass) : cut;
            train.addAll(members.subList(0, keep));
            test.addAll(members.subList(cut, members.size()));
        }
        return new StratifiedSplit(train.stream().mapToInt(Integer::intValue).toArray(),
                test.stream().mapToInt(Integer::intValue).toArray());
    }

    /** The rows of {@code all} at the given indices (the rows are shared, not copied). */
    public static double[][] select(double[][] all, int[] idx) {
        double[][] out = new double[idx.length][];
        for (int i = 0; i < idx.length; i++) {
            out[i] = all[idx[i]];
        }
        return out;
    }

    public static int[] select(int[] all, int[] idx) {
        int[] out = new int[idx.length];
        for (int i = 0; i < idx.length; i++) {
            out[i] = all[idx[i]];
        }
        return out;
    }
}
