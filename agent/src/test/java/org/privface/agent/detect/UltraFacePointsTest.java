package org.privface.agent.detect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The 68-point (iBUG) layout reduced to YuNet's five points. */
class UltraFacePointsTest {
    @Test
    void eyeCentresAreContourMeansAndTheRestArePicked() {
        float[] p = new float[136];
        for (int i = 0; i < 68; i++) {
            p[2 * i] = 1000 + i; // a value no chosen point can reach by accident
            p[2 * i + 1] = 2000 + i;
        }
        // Image-left eye (the person's right), 36-41: x 10..15, y 20.
        for (int i = 36; i <= 41; i++) {
            p[2 * i] = 10 + (i - 36);
            p[2 * i + 1] = 20;
        }
        for (int i = 42; i <= 47; i++) {
            p[2 * i] = 40 + (i - 42);
            p[2 * i + 1] = 22;
        }
        p[60] = 30; p[61] = 35;   // 30: nose tip
        p[96] = 15; p[97] = 50;   // 48: image-left mouth corner
        p[108] = 45; p[109] = 51; // 54: image-right mouth corner
        assertArrayEquals(new float[] {12.5f, 20, 42.5f, 22, 30, 35, 15, 50, 45, 51}, UltraFaceDetector.fivePoints(p), 1e-5f);
        assertThrows(IllegalArgumentException.class, () -> UltraFaceDetector.fivePoints(new float[10]));
    }
}
