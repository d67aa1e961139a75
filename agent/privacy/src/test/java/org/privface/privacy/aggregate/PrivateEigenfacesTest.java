package org.privface.privacy.aggregate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.privface.privacy.EigenBasis;

class PrivateEigenfacesTest {
    static final int W = 12;
    static final int H = 16;

    /** Smooth random faces in [0.2, 0.8]: a few blobs over grey. */
    static double[][] faces(int n, long seed) {
        Random rnd = new Random(seed);
        double[][] f = new double[n][W * H];
        for (double[] face : f) {
            double a = rnd.nextGaussian() * 0.1;
            double b = rnd.nextGaussian() * 0.1;
            for (int y = 0; y < H; y++) {
                for (int x = 0; x < W; x++) {
                    double v = 0.5 + a * Math.sin(x / 3.0) + b * Math.cos(y / 4.0) + rnd.nextGaussian() * 0.01;
                    face[y * W + x] = Math.max(0.2, Math.min(0.8, v));
                }
            }
        }
        return f;
    }

    static double[][] plus(double[][] faces, double[] extra) {
        double[][] all = Arrays.copyOf(faces, faces.length + 1);
        all[faces.length] = extra;
        return all;
    }

    static double[] flat(double v) {
        double[] x = new double[W * H];
        Arrays.fill(x, v);
        return x;
    }

    static EigenBasis privateFit(double[][] faces, long seed) {
        return PrivateEigenfaces.fit(faces, W, H, 3, 2.0, new PrivateMean(Seeded.secure(seed)),
                new PrivateCovariance(Seeded.secure(seed + 1))).basis();
    }

    static double[] ranges(EigenBasis b) {
        double[] r = new double[2 * b.dimension() + 2];
        for (int k = 0; k < b.dimension(); k++) {
            r[2 * k] = b.lower(k);
            r[2 * k + 1] = b.upper(k);
        }
        r[2 * b.dimension()] = b.l1Radius();
        r[2 * b.dimension() + 1] = b.l2Radius();
        return r;
    }

    /**
     * An outlier is clipped before anything is measured, so swapping it for one twice as far off
     * leaves the ranges and radii as they were; a fit that reads them off the faces moves them.
     */
    @Test
    void rangesAndRadiiDoNotMoveWhenAnOutlierIsSwappedForAFartherOne() {
        double[][] base = faces(40, 1);
        double[][] near = plus(base, flat(0.75));
        double[][] far = plus(base, flat(1.0));
        assertArrayEquals(ranges(privateFit(near, 7)), ranges(privateFit(far, 7)), 1e-9);

        // The control: bounds read off the raw faces, as EigenBasis.fit does, follow the outlier.
        double[] clean = ranges(EigenBasis.fit(near, 3, W, H));
        double[] raw = ranges(EigenBasis.fit(far, 3, W, H));
        assertNotEquals(Arrays.toString(clean), Arrays.toString(raw));
    }

    /** Ranges and radii are functions of the released eigenvalues only: post-processing of the μ-GDP release. */
    @Test
    void boundsComeFromThePrivateEigenvaluesAlone() {
        EigenBasis b = privateFit(faces(40, 2), 3);
        double[] eig = b.eigenvalues();
        double l1 = 0;
        double sum = 0;
        for (int k = 0; k < b.dimension(); k++) {
            assertTrue(eig[k] > 0);
            assertEquals(-PrivateEigenfaces.RANGE_SDS * Math.sqrt(eig[k]), b.lower(k), 0);
            assertEquals(PrivateEigenfaces.RANGE_SDS * Math.sqrt(eig[k]), b.upper(k), 0);
            l1 += Math.sqrt(eig[k]);
            sum += eig[k];
        }
        assertEquals(l1, b.l1Radius(), 1e-12);
        assertEquals(PrivateEigenfaces.L2_FACTOR * Math.sqrt(sum), b.l2Radius(), 1e-12);
    }

    /** The lifted eigenfaces are orthonormal in pixel space, and the fit states the μ it was asked for. */
    @Test
    void liftedComponentsAreOrthonormalAndTheFitStatesItsMu() {
        PrivateEigenfaces.Fit fit = PrivateEigenfaces.fit(faces(40, 4), W, H, 3, 2.0, new PrivateMean(Seeded.secure(5)),
                new PrivateCovariance(Seeded.secure(6)));
        assertEquals(2.0, fit.mu(), 1e-12);
        assertEquals(40, fit.n());
        EigenBasis b = fit.basis();
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) {
                double dot = 0;
                double[] u = b.component(i);
                double[] v = b.component(j);
                for (int p = 0; p < u.length; p++) {
                    dot += u[p] * v[p];
                }
                assertEquals(i == j ? 1 : 0, dot, 1e-9);
            }
        }
    }
}
