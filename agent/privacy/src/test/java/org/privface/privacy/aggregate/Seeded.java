package org.privface.privacy.aggregate;

import java.security.SecureRandom;
import java.util.Random;

/** Seeded generators so statistical failures reproduce; production code uses the DRBG. */
final class Seeded {
    private Seeded() {
    }

    static SecureRandom secure(long seed) {
        return org.privface.privacy.SeededRandom.of(seed);
    }

    /** A uniform point of S^{d-1}, from test-data randomness. */
    static double[] unit(Random rnd, int d) {
        double[] v = new double[d];
        for (int j = 0; j < d; j++) {
            v[j] = rnd.nextGaussian();
        }
        return Sphere.normalize(v);
    }
}
