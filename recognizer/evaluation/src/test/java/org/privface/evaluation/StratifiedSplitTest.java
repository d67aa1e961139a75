package org.privface.evaluation;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;

import org.junit.jupiter.api.Test;

class StratifiedSplitTest {
    @Test
    void aOneImagePersonGoesToTrainingOnlyAndTheOthersSplit70To30() {
        int[] labels = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        for (long seed = 0; seed < 5; seed++) {
            StratifiedSplit s = StratifiedSplit.of(labels, 2, 0.7, -1, seed);
            assertEquals(7 + 1, s.train().length);
            assertEquals(3, s.test().length);
            assertEquals(1, Arrays.stream(s.train()).filter(i -> labels[i] == 1).count(), "the one image trains");
            assertEquals(0, Arrays.stream(s.test()).filter(i -> labels[i] == 1).count(), "and is never tested");
        }
    }
}
