package org.privface.privacy.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.junit.jupiter.api.Test;

class PrivateBasisTest {

    @Test
    void recoversAPlantedDirectionAtLargeN() {
        Random rnd = new Random(1);
        int d = 10;
        int n = 20_000;
        double[] u = Seeded.unit(rnd, d);
        double[] centre = new double[d];
        double[][] data = new double[n][d];
        for (double[] row : data) {
            double a = 1.0 * rnd.nextGaussian();
            for (int j = 0; j < d; j++) {
                row[j] = 0.5 + a * u[j] + 0.1 * rnd.nextGaussian();
            }
        }
        double tau = 4.0;
        PrivateMean.Release mean = new PrivateMean(Seeded.secure(2)).release(data, centre, tau, 1.0);
        PrivateCovariance.Release second = new PrivateCovariance(Seeded.secure(3)).release(data, centre, tau, 1.0);
        PrivateBasis basis = PrivateBasis.fit(mean, second, 2);
        double cos = Math.abs(Sphere.dot(basis.component(0), u));
        assertTrue(cos > 0.99, "|cos| with the planted direction " + cos);
        assertEquals(1.0, Sphere.norm(basis.component(0)), 1e-12);
        assertEquals(0, Sphere.dot(basis.component(0), basis.component(1)), 1e-9);
        double[] eig = basis.eigenvalues();
        assertTrue(eig[0] > 0.8 && eig[0] < 1.2, "top eigenvalue ≈ 1 + 0.01: " + eig[0]);
        assertTrue(eig[1] < 0.1, "second eigenvalue small: " + eig[1]);
        assertEquals(Math.sqrt(2), basis.mu(), 1e-12);
        assertTrue(basis.guarantee().contains("GDP"));
        for (int j = 0; j < d; j++) {
            assertEquals(0.5, basis.mean()[j], 0.05);
        }
    }
}
