package org.privface.privacy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/** Issue 16: the frontier stopped with "only 83 components carry variance; lower nc" on a small set. */
class EigenBasisFitUpToTest {
    @Test
    void fitUpToKeepsWhatCarriesVarianceWhereFitRefuses() {
        SplittableRandom r = new SplittableRandom(4);
        int d = 64;
        double[][] distinct = new double[6][d];
        for (double[] f : distinct) {
            for (int j = 0; j < d; j++) {
                f[j] = r.nextDouble();
            }
        }
        // 12 faces, each image twice: they span 5 directions around their mean, not 11.
        double[][] faces = new double[12][];
        for (int i = 0; i < faces.length; i++) {
            faces[i] = distinct[i / 2].clone();
        }
        var e = assertThrows(EigenBasis.TooFewComponents.class, () -> EigenBasis.fit(faces, 11, 8, 8));
        assertEquals(5, e.carried());
        EigenBasis b = EigenBasis.fitUpTo(faces, 128, 8, 8);
        assertEquals(5, b.eigenvalues().length);
    }
}
