package org.privface.privacy.fisher;

import java.util.Arrays;
import java.util.Comparator;

import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.CommonOps_DDRM;
import org.ejml.dense.row.factory.DecompositionFactory_DDRM;
import org.ejml.interfaces.decomposition.CholeskyDecomposition_F64;
import org.ejml.interfaces.decomposition.EigenDecomposition_F64;
import org.privface.privacy.EigenBasis;

/**
 * The release space of the frontier's best vector presets (docs/frontier.md): the top k Fisher
 * (LDA) directions of a face's first p eigen-coordinates, fitted on the gateway's labelled
 * enrollment faces and scaled so the within-class covariance is the identity. Like the eigenbasis,
 * it is fitted once on enrollment faces and then treated as public; the L1 clip radius is a
 * quantile of the enrollment faces' norms in this space, never of a face being released.
 */
public final class FisherBasis {
    private final EigenBasis eigen;
    private final int p;
    /** p × k. */
    private final double[][] w;
    private final double l1Radius;

    private FisherBasis(EigenBasis eigen, int p, double[][] w, double l1Radius) {
        this.eigen = eigen;
        this.p = p;
        this.w = w;
        this.l1Radius = l1Radius;
    }

    /**
     * @param faces    enrollment faces, pixels in [0, 1]
     * @param labels   their identities, 0..classes-1
     * @param p        eigen-coordinates to start from (capped at n − 1)
     * @param k        Fisher directions to keep (capped at classes − 1)
     * @param quantile L1 clip radius as this quantile of the enrollment faces' norms
     */
    public static FisherBasis fit(double[][] faces, int[] labels, int classes, int width, int height, int p, int k,
                                  double quantile) {
        if (classes < 2) {
            throw new IllegalArgumentException("Fisher directions need at least 2 enrolled people, got " + classes);
        }
        if (!(quantile > 0 && quantile <= 1)) {
            throw new IllegalArgumentException("clip quantile must be in (0, 1], was " + quantile);
        }
        int pp = Math.min(p, faces.length - 1);
        int kk = Math.min(k, classes - 1);
        EigenBasis eigen = EigenBasis.fit(faces, pp, width, height);
        double[][] x = new double[faces.length][];
        for (int i = 0; i < faces.length; i++) {
            x[i] = eigen.project(faces[i]);
        }
        double[][] w = directions(x, labels, classes, kk);
        double[] norms = new double[faces.length];
        for (int i = 0; i < faces.length; i++) {
            for (double v : multiply(x[i], w)) {
                norms[i] += Math.abs(v);
            }
        }
        Arrays.sort(norms);
        double radius = norms[(int) Math.floor(quantile * (norms.length - 1))];
        return new FisherBasis(eigen, pp, w, Math.max(radius, 1e-9));
    }

    /** The face's Fisher coordinates (k values). */
    public double[] project(double[] face) {
        return multiply(eigen.project(face), w);
    }

    private static double[] multiply(double[] x, double[][] w) {
        int k = w[0].length;
        double[] z = new double[k];
        for (int j = 0; j < x.length; j++) {
            for (int c = 0; c < k; c++) {
                z[c] += x[j] * w[j][c];
            }
        }
        return z;
    }

    public int dimension() {
        return w[0].length;
    }

    public double l1Radius() {
        return l1Radius;
    }

    public EigenBasis eigen() {
        return eigen;
    }

    public String id() {
        return "fisher" + p + "-k" + dimension() + "-" + eigen.id();
    }

    /**
     * Fisher directions of x (rows) with labels y: the top k generalized eigenvectors of
     * (S_b, S_w + ridge), scaled so that the within-class covariance is the identity; p × k.
     */
    public static double[][] directions(double[][] x, int[] y, int classes, int k) {
        int n = x.length;
        int p = x[0].length;
        double[][] means = classMeans(x, y, classes);
        double[] mean = new double[p];
        for (double[] row : x) {
            for (int j = 0; j < p; j++) {
                mean[j] += row[j] / n;
            }
        }
        DMatrixRMaj sw = new DMatrixRMaj(p, p);
        DMatrixRMaj sb = new DMatrixRMaj(p, p);
        int[] counts = new int[classes];
        for (int i = 0; i < n; i++) {
            counts[y[i]]++;
            double[] d = new double[p];
            for (int j = 0; j < p; j++) {
                d[j] = x[i][j] - means[y[i]][j];
            }
            addOuter(sw, d, 1.0 / n);
        }
        for (int c = 0; c < classes; c++) {
            if (counts[c] == 0) {
                continue;
            }
            double[] d = new double[p];
            for (int j = 0; j < p; j++) {
                d[j] = means[c][j] - mean[j];
            }
            addOuter(sb, d, counts[c] / (double) n);
        }
        double ridge = 1e-3 * CommonOps_DDRM.trace(sw) / p;
        for (int j = 0; j < p; j++) {
            sw.add(j, j, ridge);
        }
        CholeskyDecomposition_F64<DMatrixRMaj> chol = DecompositionFactory_DDRM.chol(p, true);
        if (!chol.decompose(sw.copy())) {
            throw new IllegalStateException("within-class scatter is not positive definite");
        }
        DMatrixRMaj l = chol.getT(null);
        DMatrixRMaj li = new DMatrixRMaj(p, p);
        CommonOps_DDRM.invert(l, li);
        DMatrixRMaj tmp = new DMatrixRMaj(p, p);
        DMatrixRMaj m = new DMatrixRMaj(p, p);
        CommonOps_DDRM.mult(li, sb, tmp);
        CommonOps_DDRM.multTransB(tmp, li, m);
        // Symmetrize against rounding before the symmetric decomposition.
        for (int a = 0; a < p; a++) {
            for (int b = a + 1; b < p; b++) {
                double v = (m.get(a, b) + m.get(b, a)) / 2;
                m.set(a, b, v);
                m.set(b, a, v);
            }
        }
        EigenDecomposition_F64<DMatrixRMaj> eig = DecompositionFactory_DDRM.eig(p, true, true);
        if (!eig.decompose(m)) {
            throw new IllegalStateException("Fisher decomposition failed");
        }
        Integer[] order = new Integer[eig.getNumberOfEigenvalues()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, Comparator.comparingDouble((Integer i) -> -eig.getEigenvalue(i).real));
        double[][] w = new double[p][k];
        for (int c = 0; c < k; c++) {
            DMatrixRMaj v = eig.getEigenVector(order[c]);
            DMatrixRMaj dir = new DMatrixRMaj(p, 1);
            CommonOps_DDRM.multTransA(li, v, dir);
            for (int j = 0; j < p; j++) {
                w[j][c] = dir.get(j, 0);
            }
        }
        return w;
    }

    /** m += weight · d dᵀ. */
    public static void addOuter(DMatrixRMaj m, double[] d, double weight) {
        int p = d.length;
        double[] a = m.getData();
        for (int r = 0; r < p; r++) {
            double dr = d[r] * weight;
            int base = r * p;
            for (int c = 0; c < p; c++) {
                a[base + c] += dr * d[c];
            }
        }
    }

    public static double[][] classMeans(double[][] x, int[] y, int classes) {
        int d = x[0].length;
        double[][] m = new double[classes][d];
        int[] counts = new int[classes];
        for (int i = 0; i < x.length; i++) {
            counts[y[i]]++;
            for (int j = 0; j < d; j++) {
                m[y[i]][j] += x[i][j];
            }
        }
        for (int c = 0; c < classes; c++) {
            for (int j = 0; j < d; j++) {
                m[c][j] /= Math.max(1, counts[c]);
            }
        }
        return m;
    }
}
