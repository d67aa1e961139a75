package org.privface.privacy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class HaarWaveletTest {

    private static double[] random(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        double[] x = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = r.nextDouble();
        }
        return x;
    }

    @Test
    void reconstructsPerfectly() {
        HaarWavelet h = new HaarWavelet(64, 64, 3);
        double[] x = random(64 * 64, 1);
        double[] back = h.inverse(h.forward(x));
        for (int i = 0; i < x.length; i++) {
            assertEquals(x[i], back[i], 1e-12);
        }
    }

    @Test
    void isOrthonormal() {
        // Columns of H are the transforms of unit vectors: Hᵀ H = I.
        HaarWavelet h = new HaarWavelet(8, 4, 2);
        int n = 32;
        double[][] cols = new double[n][];
        for (int i = 0; i < n; i++) {
            double[] e = new double[n];
            e[i] = 1;
            cols[i] = h.forward(e);
        }
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                double dot = 0;
                for (int k = 0; k < n; k++) {
                    dot += cols[i][k] * cols[j][k];
                }
                assertEquals(i == j ? 1.0 : 0.0, dot, 1e-12);
            }
        }
    }

    @Test
    void preservesEnergy() {
        HaarWavelet h = new HaarWavelet(32, 16, 4);
        double[] x = random(32 * 16, 2);
        double ex = 0;
        double ec = 0;
        for (double v : x) {
            ex += v * v;
        }
        for (double v : h.forward(x)) {
            ec += v * v;
        }
        assertEquals(ex, ec, 1e-9);
    }

    @Test
    void approximationBandHoldsTheScaledMean() {
        // After all levels of a 4x4 image, the single approximation coefficient is mean · 4.
        HaarWavelet h = new HaarWavelet(4, 4, 2);
        double[] x = random(16, 3);
        double mean = java.util.Arrays.stream(x).average().orElseThrow();
        assertEquals(mean * 4, h.forward(x)[0], 1e-12);
    }

    @Test
    void refusesSizesThatDoNotDivide() {
        assertThrows(IllegalArgumentException.class, () -> new HaarWavelet(47, 62, 1));
        assertThrows(IllegalArgumentException.class, () -> new HaarWavelet(64, 64, 7));
        assertThrows(IllegalArgumentException.class, () -> new HaarWavelet(64, 64, 0));
        assertThrows(IllegalArgumentException.class, () -> new HaarWavelet(8, 8, 1).forward(new double[63]));
    }
}
