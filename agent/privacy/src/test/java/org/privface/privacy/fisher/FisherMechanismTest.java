package org.privface.privacy.fisher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.privface.privacy.Release;
import org.privface.privacy.SecureLaplace;

class FisherMechanismTest {
    static final int CLASSES = 4;
    static final int PER_CLASS = 30;
    static final int D = 20 * 20;

    /** Faces of 4 people: a per-person offset along a few directions, plus within-person variation. */
    static double[][] faces(int[] labels, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        double[][] dirs = new double[6][D];
        for (double[] dir : dirs) {
            for (int j = 0; j < D; j++) {
                dir[j] = r.nextDouble(-1, 1);
            }
        }
        double[][] person = new double[CLASSES][2];
        for (double[] p : person) {
            p[0] = r.nextGaussian();
            p[1] = r.nextGaussian();
        }
        double[][] x = new double[labels.length][D];
        for (int i = 0; i < labels.length; i++) {
            labels[i] = i / PER_CLASS;
            double[] w = {person[labels[i]][0], person[labels[i]][1], r.nextGaussian() * 2, r.nextGaussian() * 2,
                    r.nextGaussian(), r.nextGaussian()};
            for (int j = 0; j < D; j++) {
                double v = 0.5;
                for (int a = 0; a < dirs.length; a++) {
                    v += 0.02 * w[a] * dirs[a][j];
                }
                x[i][j] = v + 0.002 * r.nextGaussian();
            }
        }
        return x;
    }

    @Test
    void fisherCoordinatesSeparateThePeopleAndTheReleaseSpendsEpsilonPerFace() {
        int[] y = new int[CLASSES * PER_CLASS];
        double[][] x = faces(y, 3);
        FisherBasis basis = FisherBasis.fit(x, y, CLASSES, 20, 20, 16, 3, 0.9);
        assertEquals(3, basis.dimension());
        double[][] z = new double[x.length][];
        for (int i = 0; i < x.length; i++) {
            z[i] = basis.project(x[i]);
        }
        double[][] means = FisherBasis.classMeans(z, y, CLASSES);
        int correct = 0;
        for (int i = 0; i < z.length; i++) {
            int best = 0;
            for (int c = 1; c < CLASSES; c++) {
                if (dist(z[i], means[c]) < dist(z[i], means[best])) {
                    best = c;
                }
            }
            correct += best == y[i] ? 1 : 0;
        }
        assertTrue(correct > 0.9 * z.length, "the directions separate identities: " + correct + "/" + z.length);

        FisherMechanism m = new FisherMechanism(basis, 20, new SecureLaplace());
        Release r = m.perturb(x[0]);
        assertEquals("FISHER", r.mechanism());
        assertEquals(20.0, r.epsilonPerFace());
        assertEquals(20.0, r.epsilonPerCoordinate(), "under an L1 clip one coordinate can carry all of 2R");
        assertEquals(3, r.vector().length);
        assertEquals(2 * basis.l1Radius() / 20, r.noiseScale(), 1e-12, "Laplace(2R/eps) for an L1 ball of radius R");
    }

    @Test
    void presetsFollowTheFrontierAndRefuseBadInput() {
        assertEquals(new FisherMechanism.Preset(128, 3, 0.25), FisherMechanism.Preset.forEpsilon(5));
        assertEquals(new FisherMechanism.Preset(64, 3, 0.25), FisherMechanism.Preset.forEpsilon(20));
        assertEquals(new FisherMechanism.Preset(64, 4, 0.9), FisherMechanism.Preset.forEpsilon(100));
        assertThrows(IllegalArgumentException.class, () -> FisherMechanism.Preset.forEpsilon(Double.NaN));
        int[] y = new int[CLASSES * PER_CLASS];
        double[][] x = faces(y, 4);
        assertThrows(IllegalArgumentException.class, () -> FisherBasis.fit(x, new int[x.length], 1, 20, 20, 16, 3, 0.9));
    }

    private static double dist(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += (a[i] - b[i]) * (a[i] - b[i]);
        }
        return s;
    }
}
