package org.privface.privacy.aggregate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.junit.jupiter.api.Test;

class SphereTest {

    /** q at geodesic distance theta from p, in a random direction. */
    static double[] at(double[] p, double theta, Random rnd) {
        double[] v = Sphere.tangent(p, Seeded.unit(rnd, p.length));
        double n = Sphere.norm(v);
        for (int j = 0; j < v.length; j++) {
            v[j] *= theta / n;
        }
        return Sphere.exp(p, v);
    }

    @Test
    void expOfLogIsTheIdentityAndLogHasLengthRho() {
        Random rnd = new Random(1);
        double[] thetas = {0, 1e-12, 1e-8, 1e-4, 0.3, 1, Math.PI / 2, 2.5, Math.PI - 1e-4, Math.PI - 1e-7};
        for (int d : new int[] {2, 3, 16, 128}) {
            for (double theta : thetas) {
                for (int rep = 0; rep < 5; rep++) {
                    double[] p = Seeded.unit(rnd, d);
                    double[] q = theta == 0 ? p.clone() : at(p, theta, rnd);
                    double[] v = Sphere.log(p, q);
                    assertEquals(0, Sphere.dot(v, p), 1e-12, "log is tangent");
                    assertEquals(Sphere.distance(p, q), Sphere.norm(v), 1e-12, "‖log_p q‖ = ρ(p,q)");
                    assertEquals(theta, Sphere.distance(p, q), 1e-12 + 1e-9 * theta, "ρ recovers the construction");
                    assertArrayEquals(q, Sphere.exp(p, v), 1e-12, "exp_p(log_p q) = q at θ=" + theta + ", d=" + d);
                }
            }
        }
    }

    @Test
    void distanceIsAccurateNearZeroAndPi() {
        double[] p = {1, 0, 0};
        double t = 1e-9;
        assertEquals(t, Sphere.distance(p, new double[] {Math.cos(t), Math.sin(t), 0}), 1e-20);
        assertEquals(Math.PI - t, Sphere.distance(p, new double[] {-Math.cos(t), Math.sin(t), 0}), 1e-15);
        // arccos of the dot product would give 0 and π here.
        assertEquals(0, Sphere.distance(p, p));
        assertEquals(Math.PI, Sphere.distance(p, new double[] {-1, 0, 0}), 1e-15);
    }

    @Test
    void logIsUndefinedOnlyAtTheAntipode() {
        double[] p = {0, 0, 1};
        assertThrows(IllegalArgumentException.class, () -> Sphere.log(p, new double[] {0, 0, -1}));
        assertArrayEquals(new double[3], Sphere.log(p, p));
    }

    @Test
    void stepsStayOnTheSphere() {
        Random rnd = new Random(2);
        double[] p = Seeded.unit(rnd, 64);
        for (int i = 0; i < 100_000; i++) {
            double[] v = new double[64];
            for (int j = 0; j < 64; j++) {
                v[j] = 0.01 * rnd.nextGaussian();
            }
            p = Sphere.exp(p, v);
        }
        assertEquals(1, Sphere.norm(p), 1e-12);
    }

    @Test
    void clipToBallMovesOnlyOutsidePointsOntoTheBoundary() {
        Random rnd = new Random(3);
        double[] c = Seeded.unit(rnd, 5);
        double r = 0.3;
        double[] inside = at(c, 0.2, rnd);
        assertArrayEquals(inside, Sphere.clipToBall(c, inside, r));
        double[] outside = at(c, 2.0, rnd);
        double[] y = Sphere.clipToBall(c, outside, r);
        assertTrue(Sphere.distance(c, y) <= r);
        assertEquals(r, Sphere.distance(c, y), 1e-12);
        // Same geodesic: y lies between c and x.
        assertEquals(Sphere.distance(c, outside), Sphere.distance(c, y) + Sphere.distance(y, outside), 1e-12);
        double[] antipode = c.clone();
        for (int j = 0; j < antipode.length; j++) {
            antipode[j] = -antipode[j];
        }
        assertArrayEquals(c, Sphere.clipToBall(c, antipode, r));
    }

    @Test
    void frechetMeanZeroesTheGradient() {
        Random rnd = new Random(4);
        double[] c = Seeded.unit(rnd, 4);
        double[][] x = new double[50][];
        for (int i = 0; i < x.length; i++) {
            x[i] = at(c, 0.3 * rnd.nextDouble(), rnd);
        }
        double[] m = Sphere.frechetMean(x, c, 200, 1e-14);
        assertTrue(KNormGradient.gradientNorm(m, x) < 1e-12);
        assertEquals(Sphere.norm(Sphere.meanLog(m, x)), KNormGradient.gradientNorm(m, x), 1e-15);
    }
}
