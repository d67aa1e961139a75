package org.privface.privacy.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SecureDrawsTest {

    @Test
    void granularityIsAPowerOfTwoJustAboveSigmaOverAMillion() {
        double g = SecureDraws.granularity(3.0);
        assertEquals(Math.scalb(1.0, Math.getExponent(g)), g);
        assertTrue(g >= 3.0 / (1 << 20) && g < 6.0 / (1 << 20));
    }

    @Test
    void exponentialsAndNormalsHaveTheirMoments() {
        SecureDraws d = new SecureDraws(Seeded.secure(3));
        int n = 200_000;
        double e = 0;
        double z = 0;
        double z2 = 0;
        for (int i = 0; i < n; i++) {
            e += d.exponential();
            double x = d.normal();
            z += x;
            z2 += x * x;
        }
        assertEquals(1.0, e / n, 0.01);
        assertEquals(0.0, z / n, 0.01);
        assertEquals(1.0, z2 / n, 0.015);
    }
}
