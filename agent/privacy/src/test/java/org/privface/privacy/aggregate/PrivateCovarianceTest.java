package org.privface.privacy.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.factory.DecompositionFactory_DDRM;
import org.ejml.interfaces.decomposition.EigenDecomposition_F64;
import org.junit.jupiter.api.Test;

class PrivateCovarianceTest {

    static double minEigenvalue(DMatrixRMaj m) {
        EigenDecomposition_F64<DMatrixRMaj> dec = DecompositionFactory_DDRM.eig(m.numRows, false, true);
        assertTrue(dec.decompose(m.copy()));
        double min = Double.POSITIVE_INFINITY;
        for (int k = 0; k < dec.getNumberOfEigenvalues(); k++) {
            min = Math.min(min, dec.getEigenvalue(k).real);
        }
        return min;
    }

    static void assertSymmetric(DMatrixRMaj m) {
        for (int i = 0; i < m.numRows; i++) {
            for (int j = 0; j < m.numCols; j++) {
                assertEquals(m.get(i, j), m.get(j, i), 0.0);
            }
        }
    }

    static double[][] gaussianData(Random rnd, int n, double[] scales) {
        double[][] x = new double[n][scales.length];
        for (double[] row : x) {
            for (int j = 0; j < scales.length; j++) {
                row[j] = 2.0 + scales[j] * rnd.nextGaussian();
            }
        }
        return x;
    }

    /** Covariance of the clipped offsets, (1/n) normalisation. */
    static DMatrixRMaj clippedCovariance(double[][] data, double[] centre, double tau) {
        int d = centre.length;
        int n = data.length;
        double[] m = new double[d];
        double[][] x = PrivateMean.clipAll(data, centre, tau);
        for (double[] xi : x) {
            for (int j = 0; j < d; j++) {
                m[j] += xi[j] / n;
            }
        }
        DMatrixRMaj c = new DMatrixRMaj(d, d);
        for (double[] xi : x) {
            for (int i = 0; i < d; i++) {
                for (int j = 0; j < d; j++) {
                    c.add(i, j, (xi[i] - m[i]) * (xi[j] - m[j]) / n);
                }
            }
        }
        return c;
    }

    @Test
    void sensitivityIsTheFrobeniusWorstCase() {
        double tau = 1.5;
        int n = 7;
        assertEquals(Math.sqrt(2) * tau * tau / n, PrivateCovariance.sensitivity(n, tau), 1e-15);
        // Attained by orthogonal records of norm τ; never exceeded by random ones.
        Random rnd = new Random(1);
        double worst = 0;
        for (int t = 0; t < 20_000; t++) {
            double[] x = PrivateMean.clip(new double[] {rnd.nextGaussian(), rnd.nextGaussian(), rnd.nextGaussian()}, new double[3], tau);
            double[] y = PrivateMean.clip(new double[] {rnd.nextGaussian(), rnd.nextGaussian(), rnd.nextGaussian()}, new double[3], tau);
            double f = 0;
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 3; j++) {
                    double e = x[i] * x[j] - y[i] * y[j];
                    f += e * e;
                }
            }
            worst = Math.max(worst, Math.sqrt(f) / n);
        }
        assertTrue(worst <= PrivateCovariance.sensitivity(n, tau) * (1 + 1e-12));
        assertTrue(worst > 0.5 * PrivateCovariance.sensitivity(n, tau));
    }

    @Test
    void releaseIsSymmetricPsdEvenWhenNoiseDominates() {
        Random rnd = new Random(2);
        double[][] data = gaussianData(rnd, 20, new double[] {1, 1, 1, 1, 1, 1});
        PrivateCovariance pc = new PrivateCovariance(Seeded.secure(3));
        for (int i = 0; i < 20; i++) {
            PrivateCovariance.Release rel = pc.release(data, new double[6], 3.0, 0.1);
            DMatrixRMaj s = rel.secondMoment();
            assertSymmetric(s);
            assertTrue(minEigenvalue(s) > -1e-12, "PSD after projection");
        }
    }

    @Test
    void largeNAndMuRecoverTheCovariance() {
        Random rnd = new Random(4);
        double[] scales = {2, 1, 0.5, 0.25};
        double[][] data = gaussianData(rnd, 50_000, scales);
        double[] centre = {2, 2, 2, 2};
        double tau = 5.0;
        PrivateMean pm = new PrivateMean(Seeded.secure(5));
        PrivateCovariance pc = new PrivateCovariance(Seeded.secure(6));
        PrivateMean.Release mean = pm.release(data, centre, tau, 10);
        PrivateCovariance.Release second = pc.release(data, centre, tau, 10);
        assertEquals(Math.sqrt(2) * tau * tau / (50_000 * 10), second.sigma(), 1e-5 * second.sigma());
        DMatrixRMaj cov = second.covariance(mean);
        assertSymmetric(cov);
        assertTrue(minEigenvalue(cov) > -1e-12);
        DMatrixRMaj truth = clippedCovariance(data, centre, tau);
        double err = 0;
        double norm = 0;
        for (int i = 0; i < 4; i++) {
            for (int j = 0; j < 4; j++) {
                double e = cov.get(i, j) - truth.get(i, j);
                err += e * e;
                norm += truth.get(i, j) * truth.get(i, j);
            }
        }
        // σ ≈ 7e-5 per entry against entries up to 4.
        assertTrue(Math.sqrt(err / norm) < 1e-3, "relative Frobenius error " + Math.sqrt(err / norm));
    }

    @Test
    void projectionClipsNegativeEigenvaluesOnly() {
        DMatrixRMaj m = new DMatrixRMaj(new double[][] {{2, 0}, {0, -1}});
        DMatrixRMaj p = PrivateCovariance.projectPsd(m);
        assertEquals(2, p.get(0, 0), 1e-12);
        assertEquals(0, p.get(1, 1), 1e-12);
        assertEquals(0, p.get(0, 1), 1e-12);
    }

    @Test
    void covarianceRefusesAMeanOfDifferentlyClippedData() {
        Random rnd = new Random(7);
        double[][] data = gaussianData(rnd, 30, new double[] {1, 1});
        PrivateMean.Release mean = new PrivateMean(Seeded.secure(8)).release(data, new double[2], 1.0, 1);
        PrivateCovariance.Release second = new PrivateCovariance(Seeded.secure(9)).release(data, new double[2], 2.0, 1);
        assertThrows(IllegalArgumentException.class, () -> second.covariance(mean));
    }
}
