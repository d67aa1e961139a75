package org.privface.privacy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

public class EigenBasisTest {

    /** n faces of d pixels drawn around a few latent directions, so the top components are known. */
    public static double[][] faces(int n, int d, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        double[][] dirs = new double[3][d];
        for (double[] dir : dirs) {
            for (int j = 0; j < d; j++) {
                dir[j] = r.nextDouble(-1, 1);
            }
        }
        double[][] x = new double[n][d];
        for (int i = 0; i < n; i++) {
            double a = r.nextGaussian() * 3;
            double b = r.nextGaussian() * 2;
            double c = r.nextGaussian();
            for (int j = 0; j < d; j++) {
                x[i][j] = 0.5 + 0.05 * (a * dirs[0][j] + b * dirs[1][j] + c * dirs[2][j]) + 0.002 * r.nextGaussian();
            }
        }
        return x;
    }

    @Test
    void componentsAreOrthonormalAndSortedByVariance() {
        EigenBasis basis = EigenBasis.fit(faces(40, 12 * 10, 1), 5, 12, 10);
        double[] eig = basis.eigenvalues();
        for (int k = 1; k < eig.length; k++) {
            assertTrue(eig[k - 1] >= eig[k]);
        }
        for (int a = 0; a < 5; a++) {
            double[] ea = new double[5];
            ea[a] = 1;
            double[] ua = basis.reconstruct(ea);
            double[] mu = basis.reconstruct(new double[5]);
            for (int b = 0; b < 5; b++) {
                double[] eb = new double[5];
                eb[b] = 1;
                double[] ub = basis.reconstruct(eb);
                double dot = 0;
                for (int j = 0; j < ua.length; j++) {
                    dot += (ua[j] - mu[j]) * (ub[j] - mu[j]);
                }
                assertEquals(a == b ? 1.0 : 0.0, dot, 1e-9);
            }
        }
    }

    @Test
    void gramTrickAgreesWithTheCovarianceRoute() {
        // 30 faces of 24 pixels takes the covariance route; the first 20 of them the Gram route.
        double[][] x = faces(30, 24, 2);
        double[][] few = java.util.Arrays.copyOf(x, 20);
        EigenBasis gram = EigenBasis.fit(few, 3, 6, 4);
        // The same 20 faces, each twice: 40 rows > 24 pixels, so this fit takes the covariance route.
        double[][] doubled = new double[40][];
        for (int i = 0; i < 40; i++) {
            doubled[i] = few[i % 20];
        }
        EigenBasis cov = EigenBasis.fit(doubled, 3, 6, 4);
        double[] eg = gram.eigenvalues();
        double[] ec = cov.eigenvalues();
        for (int k = 0; k < 3; k++) {
            // Same directions; doubling the rows doubles the scatter, divided by 39 instead of 19.
            double[] e = new double[3];
            e[k] = 1;
            double[] a = gram.reconstruct(e);
            double[] b = cov.reconstruct(e);
            double[] mu = gram.reconstruct(new double[3]);
            double dot = 0;
            for (int j = 0; j < a.length; j++) {
                dot += (a[j] - mu[j]) * (b[j] - mu[j]);
            }
            assertEquals(1.0, Math.abs(dot), 1e-9, "component " + k);
            assertEquals(eg[k] * 19 / 39 * 2, ec[k], 1e-9 * eg[k]);
        }
    }

    @Test
    void clampRangeComesFromTheFittingFacesAndScalesIntoUnitInterval() {
        double[][] x = faces(50, 30, 3);
        EigenBasis basis = EigenBasis.fit(x, 4, 6, 5);
        for (double[] f : x) {
            for (double s : basis.clampAndScale(basis.project(f))) {
                assertTrue(s >= 0 && s <= 1);
            }
        }
        // A face far outside the fitting range is clamped, never rescaled to fit.
        double[] extreme = new double[30];
        java.util.Arrays.fill(extreme, 50.0);
        for (double s : basis.clampAndScale(basis.project(extreme))) {
            assertTrue(s == 0.0 || s == 1.0);
        }
    }

    @Test
    void l2RadiusIsAFittingQuantileThatPersists(@TempDir Path dir) throws Exception {
        double[][] x = faces(30, 30, 8);
        EigenBasis basis = EigenBasis.fit(x, 4, 6, 5);
        double[] norms = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            double[] c = basis.project(x[i]);
            for (double v : c) {
                norms[i] += v * v;
            }
            norms[i] = Math.sqrt(norms[i]);
        }
        java.util.Arrays.sort(norms);
        assertEquals(norms[(int) Math.floor(EigenBasis.L2_RADIUS_QUANTILE * (x.length - 1))], basis.l2Radius(), 1e-9);
        assertTrue(basis.l2Radius() <= basis.l1Radius());
        Path file = dir.resolve("basis.bin");
        basis.save(file);
        assertEquals(basis.l2Radius(), EigenBasis.load(file).l2Radius(), 0);
    }

    /** A version-1 file has no L2 radius: it loads with the L1 radius in its place and keeps its bytes and id. */
    @Test
    void versionOneBasesStillLoad(@TempDir Path dir) throws Exception {
        EigenBasis fitted = EigenBasis.fit(faces(20, 30, 9), 3, 6, 5);
        double[][] comps = new double[3][];
        double[] lo = new double[3];
        double[] hi = new double[3];
        for (int k = 0; k < 3; k++) {
            comps[k] = fitted.component(k);
            lo[k] = fitted.lower(k);
            hi[k] = fitted.upper(k);
        }
        EigenBasis legacy = new EigenBasis(6, 5, fitted.mean(), comps, fitted.eigenvalues(), lo, hi, fitted.l1Radius(),
                Double.NaN);
        Path file = dir.resolve("v1.bin");
        legacy.save(file);
        byte[] bytes = Files.readAllBytes(file);
        assertEquals(1, java.nio.ByteBuffer.wrap(bytes, 4, 4).getInt(), "written as version 1");
        EigenBasis back = EigenBasis.load(file);
        assertEquals(legacy.id(), back.id());
        assertEquals(fitted.l1Radius(), back.l2Radius(), 0);
        back.save(file);
        assertArrayEquals(bytes, Files.readAllBytes(file), "a version-1 basis round-trips byte for byte");
    }

    @Test
    void persistsWithAStableContentId(@TempDir Path dir) throws Exception {
        EigenBasis basis = EigenBasis.fit(faces(20, 30, 4), 4, 6, 5);
        Path file = dir.resolve("basis.bin");
        basis.save(file);
        EigenBasis back = EigenBasis.load(file);
        assertEquals(basis.id(), back.id());
        assertArrayEquals(basis.eigenvalues(), back.eigenvalues());
        assertEquals(basis.id(), EigenBasis.fit(faces(20, 30, 4), 4, 6, 5).id(), "refit gives the same id");
        assertNotEquals(basis.id(), EigenBasis.fit(faces(20, 30, 5), 4, 6, 5).id());
        Files.write(file, new byte[] {1, 2, 3, 4});
        assertThrows(java.io.IOException.class, () -> EigenBasis.load(file));
    }

    @Test
    void rejectsImpossibleFits() {
        assertThrows(IllegalArgumentException.class, () -> EigenBasis.fit(faces(1, 30, 6), 1, 6, 5));
        assertThrows(IllegalArgumentException.class, () -> EigenBasis.fit(faces(10, 30, 6), 10, 6, 5));
        assertThrows(IllegalArgumentException.class, () -> EigenBasis.fit(faces(10, 30, 6), 3, 5, 5));
    }
}
