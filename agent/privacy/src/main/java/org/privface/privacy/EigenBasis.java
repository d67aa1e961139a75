package org.privface.privacy;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.CommonOps_DDRM;
import org.ejml.dense.row.factory.DecompositionFactory_DDRM;
import org.ejml.interfaces.decomposition.EigenDecomposition_F64;

/**
 * An eigenface basis: mean face, the top principal components and, per component, clamp bounds
 * fixed when the basis was fitted. The basis and the faces it was fitted on stay on the gateway;
 * only {@link #id()} travels on Kafka.
 */
public final class EigenBasis {
    private static final int MAGIC = 0x45494746; // "EIGF"
    /** Version 2 adds the L2 radius; version 1 files still load (see {@link #l2Radius()}). */
    private static final int FORMAT_VERSION = 2;
    private static final int FORMAT_VERSION_WITHOUT_L2 = 1;
    /**
     * The l1-clip radius C is this quantile of the fitting faces' L1 norms: most faces pass
     * unclipped, and outliers cannot inflate the sensitivity 2C that every release pays for.
     */
    static final double L1_RADIUS_QUANTILE = 0.9;
    /** The L2-clip radius τ of the Gaussian mechanism: the same quantile, for the same reason, of the L2 norms. */
    static final double L2_RADIUS_QUANTILE = 0.9;

    private final int width;
    private final int height;
    private final double[] mean;
    private final double[][] components;
    private final double[] eigenvalues;
    private final double[] lower;
    private final double[] upper;
    private final double l1Radius;
    /** NaN for a basis read from a version-1 file, which predates it. */
    private final double l2Radius;
    /** U (nc × d) off-heap in single precision, for OpenBLAS. */
    private final org.bytedeco.javacpp.FloatPointer matrix;
    private final String id;

    EigenBasis(int width, int height, double[] mean, double[][] components, double[] eigenvalues,
               double[] lower, double[] upper, double l1Radius, double l2Radius) {
        if (width * height != mean.length) {
            throw new IllegalArgumentException("mean has " + mean.length + " pixels, expected " + width + "x" + height);
        }
        for (int i = 0; i < components.length; i++) {
            if (components[i].length != mean.length) {
                throw new IllegalArgumentException("component " + i + " has the wrong length");
            }
            if (!(upper[i] > lower[i])) {
                throw new IllegalArgumentException("component " + i + " has an empty clamp range");
            }
        }
        this.width = width;
        this.height = height;
        this.mean = mean;
        this.components = components;
        this.eigenvalues = eigenvalues;
        this.lower = lower;
        this.upper = upper;
        if (!(l1Radius > 0) || !Double.isFinite(l1Radius)) {
            throw new IllegalArgumentException("l1Radius must be positive and finite");
        }
        this.l1Radius = l1Radius;
        if (!Double.isNaN(l2Radius) && (!(l2Radius > 0) || !Double.isFinite(l2Radius))) {
            throw new IllegalArgumentException("l2Radius must be positive and finite");
        }
        this.l2Radius = l2Radius;
        this.matrix = Blas.matrix(components);
        this.id = "pca-" + HexFormat.of().formatHex(sha256(toBytes()), 0, 8);
    }

    /**
     * Fits nc components to faces (rows, pixel values in [0,1]) and fixes each component's clamp
     * range to the min and max of the fitting faces' projections. With fewer faces than pixels it
     * decomposes the n×n Gram matrix A·Aᵀ instead of the d×d covariance (Turk and Pentland's
     * trick): the same non-zero eigenvalues, and eigenvectors Aᵀv.
     */
    public static EigenBasis fit(double[][] faces, int nc, int width, int height) {
        int n = faces.length;
        if (n < 2) {
            throw new IllegalArgumentException("need at least 2 faces to fit a basis, got " + n);
        }
        int d = width * height;
        if (nc < 1 || nc > Math.min(n - 1, d)) {
            throw new IllegalArgumentException("nc must be in [1, " + Math.min(n - 1, d) + "] for " + n + " faces, was " + nc);
        }
        double[] mean = new double[d];
        DMatrixRMaj a = centre(faces, d, mean);
        double[][] comps = new double[nc][];
        double[] eig = new double[nc];
        if (n <= d) {
            DMatrixRMaj gram = new DMatrixRMaj(n, n);
            CommonOps_DDRM.multTransB(a, a, gram);
            Eigen e = decompose(gram, eig, nc);
            for (int k = 0; k < nc; k++) {
                DMatrixRMaj v = e.dec().getEigenVector(e.order()[k]);
                DMatrixRMaj u = new DMatrixRMaj(d, 1);
                CommonOps_DDRM.multTransA(a, v, u);
                comps[k] = normalise(u.getData());
            }
            for (int k = 0; k < nc; k++) {
                eig[k] /= (n - 1);
                orientSign(comps[k]);
            }
        } else {
            DMatrixRMaj cov = new DMatrixRMaj(d, d);
            CommonOps_DDRM.multTransA(a, a, cov);
            comps = topComponents(cov, nc, n, eig);
        }
        return bounded(width, height, mean, comps, eig, faces);
    }

    /**
     * A basis whose clamp ranges and clip radii were fixed by the caller, not read off faces: for
     * a privately fitted basis, whose bounds are post-processing of its private release.
     */
    public static EigenBasis withBounds(int width, int height, double[] mean, double[][] components, double[] eigenvalues,
                                        double[] lower, double[] upper, double l1Radius, double l2Radius) {
        return new EigenBasis(width, height, mean.clone(), components.clone(), eigenvalues.clone(), lower.clone(),
                upper.clone(), l1Radius, l2Radius);
    }

    /** The faces span fewer directions than asked for: only {@code carried} components have variance. */
    public static final class TooFewComponents extends IllegalArgumentException {
        private final int carried;

        TooFewComponents(int carried) {
            super("only " + carried + " components carry variance; lower nc");
            this.carried = carried;
        }

        public int carried() {
            return carried;
        }
    }

    /**
     * As {@link #fit}, with at most maxNc components: fewer when the faces span fewer directions
     * (a small set, or repeated images), so a harness runs on any folder-per-person set.
     */
    public static EigenBasis fitUpTo(double[][] faces, int maxNc, int width, int height) {
        int nc = Math.min(maxNc, Math.min(faces.length - 1, width * height));
        try {
            return fit(faces, nc, width, height);
        } catch (TooFewComponents e) {
            if (e.carried() < 1) {
                throw e;
            }
            return fit(faces, e.carried(), width, height);
        }
    }

    /**
     * Fixes the clamp ranges from the given fitting faces: per component the min and max of their
     * projections, and the l1- and l2-clip radii as quantiles of their L1 and L2 norms.
     */
    static EigenBasis bounded(int width, int height, double[] mean, double[][] comps, double[] eig, double[][] faces) {
        int nc = comps.length;
        int n = faces.length;
        double[] lo = new double[nc];
        double[] hi = new double[nc];
        Arrays.fill(lo, Double.POSITIVE_INFINITY);
        Arrays.fill(hi, Double.NEGATIVE_INFINITY);
        EigenBasis unbounded = new EigenBasis(width, height, mean, comps, eig, filled(nc, -1), filled(nc, 1), 1, 1);
        double[] l1 = new double[n];
        double[] l2 = new double[n];
        for (int i = 0; i < n; i++) {
            double[] c = unbounded.project(faces[i]);
            for (int k = 0; k < nc; k++) {
                lo[k] = Math.min(lo[k], c[k]);
                hi[k] = Math.max(hi[k], c[k]);
                l1[i] += Math.abs(c[k]);
                l2[i] += c[k] * c[k];
            }
            l2[i] = Math.sqrt(l2[i]);
        }
        Arrays.sort(l1);
        Arrays.sort(l2);
        double radius = l1[(int) Math.floor(L1_RADIUS_QUANTILE * (n - 1))];
        double radius2 = l2[(int) Math.floor(L2_RADIUS_QUANTILE * (n - 1))];
        return new EigenBasis(width, height, mean, comps, eig, lo, hi, radius, radius2);
    }

    /**
     * Top nc eigenvectors of a d×d scatter matrix, normalised and sign-fixed, with eigenvalues
     * divided by n-1. Shared by the direct fit and the merge of partition statistics.
     */
    static double[][] topComponents(DMatrixRMaj scatter, int nc, int n, double[] eigOut) {
        Top top = symmetricTop(scatter, nc);
        for (int k = 0; k < nc; k++) {
            if (!(top.values()[k] > 1e-12)) {
                throw new TooFewComponents(k);
            }
            eigOut[k] = top.values()[k] / (n - 1);
        }
        return top.vectors();
    }

    /** Fills {@code meanOut} with the mean face and returns the faces minus it, one per row. */
    static DMatrixRMaj centre(double[][] faces, int d, double[] meanOut) {
        int n = faces.length;
        for (double[] f : faces) {
            if (f.length != d) {
                throw new IllegalArgumentException("face of " + f.length + " pixels, expected " + d);
            }
            for (int j = 0; j < d; j++) {
                meanOut[j] += f[j] / n;
            }
        }
        DMatrixRMaj a = new DMatrixRMaj(n, d);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < d; j++) {
                a.unsafe_set(i, j, faces[i][j] - meanOut[j]);
            }
        }
        return a;
    }

    private record Eigen(EigenDecomposition_F64<DMatrixRMaj> dec, Integer[] order) {
    }

    /** Symmetric eigen decomposition with eigenvalues in descending order; fills the top nc. */
    private static Eigen decompose(DMatrixRMaj symmetric, double[] eigOut, int nc) {
        Eigen e = sorted(symmetric);
        for (int k = 0; k < nc; k++) {
            eigOut[k] = e.dec().getEigenvalue(e.order()[k]).real;
            if (!(eigOut[k] > 1e-12)) {
                throw new TooFewComponents(k);
            }
        }
        return e;
    }

    private static Eigen sorted(DMatrixRMaj symmetric) {
        EigenDecomposition_F64<DMatrixRMaj> dec = DecompositionFactory_DDRM.eig(symmetric.numRows, true, true);
        if (!dec.decompose(symmetric)) {
            throw new IllegalStateException("eigen decomposition failed");
        }
        Integer[] order = new Integer[dec.getNumberOfEigenvalues()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (x, y) -> Double.compare(dec.getEigenvalue(y).real, dec.getEigenvalue(x).real));
        return new Eigen(dec, order);
    }

    /** The top eigenvectors of a symmetric matrix, unit length and sign-fixed, with their eigenvalues. */
    public record Top(double[][] vectors, double[] values) {
    }

    /**
     * Top nc eigenpairs of a symmetric matrix, in descending order, with no variance threshold:
     * for matrices that may be rank-deficient, such as a privately released covariance.
     */
    public static Top symmetricTop(DMatrixRMaj symmetric, int nc) {
        Eigen e = sorted(symmetric);
        double[][] vectors = new double[nc][];
        double[] values = new double[nc];
        for (int k = 0; k < nc; k++) {
            values[k] = e.dec().getEigenvalue(e.order()[k]).real;
            vectors[k] = normalise(e.dec().getEigenVector(e.order()[k]).getData().clone());
            orientSign(vectors[k]);
        }
        return new Top(vectors, values);
    }

    private static double[] normalise(double[] v) {
        double norm = 0;
        for (double x : v) {
            norm += x * x;
        }
        norm = Math.sqrt(norm);
        for (int i = 0; i < v.length; i++) {
            v[i] /= norm;
        }
        return v;
    }

    /** Eigenvectors are defined up to sign; fix it so that refits give identical bases. */
    private static void orientSign(double[] v) {
        double sum = 0;
        for (double x : v) {
            sum += x;
        }
        if (sum < 0) {
            for (int i = 0; i < v.length; i++) {
                v[i] = -v[i];
            }
        }
    }

    private static double[] filled(int n, double value) {
        double[] a = new double[n];
        Arrays.fill(a, value);
        return a;
    }

    /** Coordinates c = U(x - μ) of a face with pixel values in [0,1]. */
    public double[] project(double[] face) {
        if (face.length != mean.length) {
            throw new IllegalArgumentException("face of " + face.length + " pixels, basis expects " + mean.length);
        }
        int d = mean.length;
        int nc = components.length;
        float[] centred = new float[d];
        for (int j = 0; j < d; j++) {
            centred[j] = (float) (face[j] - mean[j]);
        }
        // Single precision: its rounding (~1e-6 relative) is far below any noise added later.
        float[] out = new float[nc];
        Blas.gemv(matrix, nc, d, centred, out);
        double[] c = new double[nc];
        for (int k = 0; k < nc; k++) {
            c[k] = out[k];
        }
        return c;
    }

    /** Clamps each coordinate to its fixed range and maps it linearly onto [0,1]. */
    public double[] clampAndScale(double[] coords) {
        double[] s = new double[coords.length];
        for (int k = 0; k < coords.length; k++) {
            double c = Math.max(lower[k], Math.min(upper[k], coords[k]));
            s[k] = (c - lower[k]) / (upper[k] - lower[k]);
        }
        return s;
    }

    /** μ + Uᵀc: the face a coordinate vector stands for. */
    public double[] reconstruct(double[] coords) {
        double[] x = mean.clone();
        for (int k = 0; k < coords.length; k++) {
            double[] u = components[k];
            for (int j = 0; j < x.length; j++) {
                x[j] += coords[k] * u[j];
            }
        }
        return x;
    }

    public String id() {
        return id;
    }

    public int dimension() {
        return components.length;
    }

    public int width() {
        return width;
    }

    public int height() {
        return height;
    }

    public double[] eigenvalues() {
        return eigenvalues.clone();
    }

    /** Radius C of the L1 ball that mode l1-clip clips centred coordinates to; fixed at fitting time. */
    public double l1Radius() {
        return l1Radius;
    }

    /**
     * Radius τ of the L2 ball the Gaussian mechanism clips centred coordinates to; fixed at fitting
     * time. A basis saved before version 2 has none and answers its L1 radius: every face's L2 norm
     * is at most its L1 norm, so that quantile bounds this one. It is still fixed at fitting time,
     * so the guarantee holds; only the noise is larger.
     */
    public double l2Radius() {
        return Double.isNaN(l2Radius) ? l1Radius : l2Radius;
    }

    /** Eigenface k, unit length, at the basis' size. */
    public double[] component(int k) {
        return components[k].clone();
    }

    /** Mean face, pixels in [0,1]. */
    public double[] mean() {
        return mean.clone();
    }

    public double lower(int k) {
        return lower[k];
    }

    public double upper(int k) {
        return upper[k];
    }

    public void save(Path file) throws IOException {
        Files.write(file, toBytes());
    }

    public static EigenBasis load(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return read(in);
        }
    }

    static EigenBasis read(InputStream raw) throws IOException {
        DataInputStream in = new DataInputStream(raw);
        if (in.readInt() != MAGIC) {
            throw new IOException("not an eigenbasis file");
        }
        int version = in.readInt();
        if (version != FORMAT_VERSION && version != FORMAT_VERSION_WITHOUT_L2) {
            throw new IOException("unsupported eigenbasis format version " + version);
        }
        int w = in.readInt();
        int h = in.readInt();
        int nc = in.readInt();
        if (w < 1 || h < 1 || w * h > 1 << 22 || nc < 1 || nc > w * h) {
            throw new IOException("corrupt eigenbasis header");
        }
        double[] mean = readArray(in, w * h);
        double[][] comps = new double[nc][];
        for (int k = 0; k < nc; k++) {
            comps[k] = readArray(in, w * h);
        }
        double[] eig = readArray(in, nc);
        double[] lo = readArray(in, nc);
        double[] hi = readArray(in, nc);
        double l1 = in.readDouble();
        double l2 = version == FORMAT_VERSION_WITHOUT_L2 ? Double.NaN : in.readDouble();
        return new EigenBasis(w, h, mean, comps, eig, lo, hi, l1, l2);
    }

    private static double[] readArray(DataInputStream in, int n) throws IOException {
        double[] a = new double[n];
        for (int i = 0; i < n; i++) {
            a[i] = in.readDouble();
        }
        return a;
    }

    private byte[] toBytes() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            // A version-1 basis is written back as version 1, so its bytes and its id stay the same.
            boolean legacy = Double.isNaN(l2Radius);
            out.writeInt(MAGIC);
            out.writeInt(legacy ? FORMAT_VERSION_WITHOUT_L2 : FORMAT_VERSION);
            out.writeInt(width);
            out.writeInt(height);
            out.writeInt(components.length);
            write(out, mean);
            for (double[] c : components) {
                write(out, c);
            }
            write(out, eigenvalues);
            write(out, lower);
            write(out, upper);
            out.writeDouble(l1Radius);
            if (!legacy) {
                out.writeDouble(l2Radius);
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return bytes.toByteArray();
    }

    private static void write(OutputStream raw, double[] a) throws IOException {
        DataOutputStream out = (DataOutputStream) raw;
        for (double x : a) {
            out.writeDouble(x);
        }
    }

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
