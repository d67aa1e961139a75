package org.privface.privacy;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.CommonOps_DDRM;

/**
 * Sufficient statistics of a partition of fitting faces (PEEP's Algorithm 2): count, mean and
 * co-moment M2 = Σ (x-μ)(x-μ)ᵀ. Partitions merge exactly with the pairwise update of Chan, Golub
 * and LeVeque (1979), so several gateways of one site can build one basis without pooling faces,
 * and the result does not depend on the merge order.
 */
public final class EigenStats {
    private static final int MAGIC = 0x45535431; // "EST1"

    private final int width;
    private final int height;
    private final long count;
    private final double[] mean;
    private final DMatrixRMaj m2;

    private EigenStats(int width, int height, long count, double[] mean, DMatrixRMaj m2) {
        this.width = width;
        this.height = height;
        this.count = count;
        this.mean = mean;
        this.m2 = m2;
    }

    /** Statistics of one partition of faces (rows of pixels in [0,1]). */
    public static EigenStats of(double[][] faces, int width, int height) {
        int d = width * height;
        int n = faces.length;
        if (n < 1) {
            throw new IllegalArgumentException("a partition needs at least one face");
        }
        double[] mean = new double[d];
        DMatrixRMaj a = EigenBasis.centre(faces, d, mean);
        DMatrixRMaj m2 = new DMatrixRMaj(d, d);
        CommonOps_DDRM.multTransA(a, a, m2);
        return new EigenStats(width, height, n, mean, m2);
    }

    /** The statistics of the union of both partitions. */
    public EigenStats merge(EigenStats other) {
        if (other.width != width || other.height != height) {
            throw new IllegalArgumentException("cannot merge statistics of different face sizes");
        }
        long n = count + other.count;
        int d = mean.length;
        double[] delta = new double[d];
        double[] merged = new double[d];
        for (int j = 0; j < d; j++) {
            delta[j] = other.mean[j] - mean[j];
            merged[j] = mean[j] + delta[j] * other.count / n;
        }
        DMatrixRMaj m = m2.copy();
        CommonOps_DDRM.addEquals(m, other.m2);
        double w = (double) count * other.count / n;
        for (int i = 0; i < d; i++) {
            double di = delta[i] * w;
            for (int j = 0; j < d; j++) {
                m.unsafe_set(i, j, m.unsafe_get(i, j) + di * delta[j]);
            }
        }
        return new EigenStats(width, height, n, merged, m);
    }

    /**
     * The basis of the merged faces: top nc components of the covariance M2/(n-1). Clamp ranges
     * are fixed from {@code boundsFaces}, the faces the merging gateway holds, since ranges need
     * projections, not moments.
     */
    public EigenBasis basis(int nc, double[][] boundsFaces) {
        if (nc < 1 || nc > Math.min(count - 1, mean.length)) {
            throw new IllegalArgumentException("nc must be in [1, " + Math.min(count - 1, mean.length) + "], was " + nc);
        }
        double[] eig = new double[nc];
        double[][] comps = EigenBasis.topComponents(m2.copy(), nc, (int) count, eig);
        return EigenBasis.bounded(width, height, mean.clone(), comps, eig, boundsFaces);
    }

    public long count() {
        return count;
    }

    public void save(Path file) throws IOException {
        try (DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(Files.newOutputStream(file)))) {
            out.writeInt(MAGIC);
            out.writeInt(width);
            out.writeInt(height);
            out.writeLong(count);
            for (double v : mean) {
                out.writeDouble(v);
            }
            for (double v : m2.getData()) {
                out.writeDouble(v);
            }
        }
    }

    public static EigenStats load(Path file) throws IOException {
        try (DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(Files.newInputStream(file)))) {
            if (in.readInt() != MAGIC) {
                throw new IOException(file + " is not a partition statistics file");
            }
            int w = in.readInt();
            int h = in.readInt();
            long n = in.readLong();
            if (w < 1 || h < 1 || w * h > 1 << 14 || n < 1) {
                throw new IOException(file + ": corrupt header");
            }
            int d = w * h;
            double[] mean = new double[d];
            for (int j = 0; j < d; j++) {
                mean[j] = in.readDouble();
            }
            DMatrixRMaj m2 = new DMatrixRMaj(d, d);
            double[] data = m2.getData();
            for (int j = 0; j < data.length; j++) {
                data[j] = in.readDouble();
            }
            return new EigenStats(w, h, n, mean, m2);
        }
    }
}
