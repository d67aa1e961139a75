package org.privface.recognizer.model;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class OpenSetTest {
    static float[][] cloud(SplittableRandom r, int n, double[] centre, double spread) {
        float[][] x = new float[n][centre.length];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < centre.length; j++) {
                x[i][j] = (float) (centre[j] + spread * r.nextGaussian());
            }
        }
        return x;
    }

    @Test
    void marginCalibratedOnStrangersLetsThroughAtMostTheTargetShareOfThem() {
        SplittableRandom r = new SplittableRandom(11);
        int d = 8;
        double[][] centres = {new double[d], new double[d]};
        centres[1][0] = 10;
        float[][] a = cloud(r, 50, centres[0], 1);
        float[][] b = cloud(r, 50, centres[1], 1);
        float[][] x = new float[100][];
        int[] y = new int[100];
        for (int i = 0; i < 50; i++) {
            x[i] = a[i];
            x[50 + i] = b[i];
            y[50 + i] = 1;
        }
        OpenSet open = OpenSet.fit(x, y, 2);
        double[] strangerCentre = new double[d];
        strangerCentre[0] = 5;
        float[][] strangers = cloud(r, 1000, strangerCentre, 2);
        int[] predicted = new int[strangers.length];
        for (int i = 0; i < strangers.length; i++) {
            predicted[i] = OpenSet.distance(strangers[i], open.centroids()[0]) <= OpenSet.distance(strangers[i],
                    open.centroids()[1]) ? 0 : 1;
        }
        double margin = open.marginForFpir(strangers, predicted, 0.01);
        int accepted = 0;
        for (int i = 0; i < strangers.length; i++) {
            accepted += open.accept(strangers[i], predicted[i], margin) >= 0 ? 1 : 0;
        }
        assertTrue(accepted <= 10, "FPIR on the calibration strangers: " + accepted + "/1000");
        // The next larger margin lets the 11th stranger in: the calibration is as loose as allowed.
        int acceptedUp = 0;
        double up = margin * (1 + 1e-8);
        for (int i = 0; i < strangers.length; i++) {
            acceptedUp += open.accept(strangers[i], predicted[i], up) >= 0 ? 1 : 0;
        }
        assertTrue(acceptedUp >= 11, "a slightly larger margin accepts " + acceptedUp);
        // The fixed default margin (1.5 radii) would let far more of these strangers through.
        int atDefault = 0;
        for (int i = 0; i < strangers.length; i++) {
            atDefault += open.accept(strangers[i], predicted[i], 1.5) >= 0 ? 1 : 0;
        }
        assertTrue(atDefault > 10, "the default margin accepts " + atDefault);
        assertThrows(IllegalArgumentException.class, () -> open.marginForFpir(strangers, new int[3], 0.01));
        assertThrows(IllegalArgumentException.class, () -> open.marginForFpir(strangers, predicted, 1));
    }
}
