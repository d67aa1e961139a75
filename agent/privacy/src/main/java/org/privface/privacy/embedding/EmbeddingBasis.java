package org.privface.privacy.embedding;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

import org.privface.privacy.fisher.FisherBasis;

/**
 * The public projection of a face embedding: Fisher (LDA) directions fitted on labelled faces of
 * people who are never enrolled (the bundled file: {@code lfw-public}, 1,522 people), scaled so
 * that the within-class covariance is the identity, with the centre to subtract and the public
 * L1-norm quantiles of the unit-normalised projections that the Laplace baseline clips to. Shipped
 * as a file, so no enrolled face shapes the mechanism that releases it; its id is the SHA-256 of
 * the file's bytes, which every record carries as {@code basisId}.
 *
 * <p>File (big-endian, {@link DataOutputStream}): magic "PFEB", version 1, model id (UTF), a line
 * saying what it was fitted on (UTF), input dimension d, directions K, then d floats of the centre,
 * K·d floats of the directions (row by row), K floats of L1 radii (entry k−1: the
 * {@link #L1_QUANTILE} quantile of ‖u‖₁ over the public faces' unit-normalised first k
 * coordinates). Derived numbers only, no images.
 */
public final class EmbeddingBasis {
    static final int MAGIC = 0x50464542; // "PFEB"
    static final int VERSION = 1;
    /** Quantile of the public faces' L1 norms that the Laplace baseline clips to. */
    public static final double L1_QUANTILE = 0.9;
    /** Resource folder of bundled bases: {@code embedding/<model>-lfwpublic.bin}. */
    public static final String RESOURCE_DIR = "embedding/";
    /** The default embedding model (docs/privacy.md): {@code fr_feature.onnx}, 512-d. */
    public static final String DEFAULT_MODEL = "fr_feature";

    private final String modelId;
    private final String fittedOn;
    private final double[] centre;
    /** K × d. */
    private final double[][] directions;
    private final double[] l1Radii;
    private final String id;

    private EmbeddingBasis(String modelId, String fittedOn, double[] centre, double[][] directions, double[] l1Radii,
                           String id) {
        this.modelId = modelId;
        this.fittedOn = fittedOn;
        this.centre = centre;
        this.directions = directions;
        this.l1Radii = l1Radii;
        this.id = id;
    }

    /**
     * Fits the basis on labelled embeddings of public people: the top K Fisher directions
     * ({@link FisherBasis#directions}), then the L1 radii of the unit-normalised projections.
     * Values are stored as floats, and the returned basis is the one the file holds.
     */
    public static EmbeddingBasis fit(String modelId, String fittedOn, double[][] x, int[] labels, int classes, int k) {
        int d = x[0].length;
        if (k < 1 || k > Math.min(d, classes - 1)) {
            throw new IllegalArgumentException("need 1 ≤ K ≤ min(d, classes − 1) = " + Math.min(d, classes - 1)
                    + ", was " + k);
        }
        double[] centre = new double[d];
        for (double[] row : x) {
            for (int j = 0; j < d; j++) {
                centre[j] += row[j] / x.length;
            }
        }
        double[][] w = FisherBasis.directions(x, labels, classes, k);
        double[][] dirs = new double[k][d];
        for (int c = 0; c < k; c++) {
            for (int j = 0; j < d; j++) {
                dirs[c][j] = (float) w[j][c];
            }
        }
        for (int j = 0; j < d; j++) {
            centre[j] = (float) centre[j];
        }
        double[] radii = new double[k];
        double[][] norms = new double[k][x.length];
        for (int i = 0; i < x.length; i++) {
            double[] z = project(x[i], centre, dirs, k);
            for (int kk = 1; kk <= k; kk++) {
                double l2 = 0;
                double l1 = 0;
                for (int c = 0; c < kk; c++) {
                    l2 += z[c] * z[c];
                    l1 += Math.abs(z[c]);
                }
                norms[kk - 1][i] = l2 == 0 ? 0 : l1 / Math.sqrt(l2);
            }
        }
        for (int kk = 0; kk < k; kk++) {
            Arrays.sort(norms[kk]);
            radii[kk] = (float) norms[kk][(int) Math.floor(L1_QUANTILE * (x.length - 1))];
        }
        return read(write(modelId, fittedOn, centre, dirs, radii));
    }

    /** The bundled basis for an embedding model, from {@code embedding/<model>-lfwpublic.bin} on the classpath. */
    public static EmbeddingBasis bundled(String modelId) {
        String name = RESOURCE_DIR + modelId + "-lfwpublic.bin";
        try (InputStream in = EmbeddingBasis.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalArgumentException("no public basis bundled for embedding model '" + modelId
                        + "' (looked for " + name + ")");
            }
            return read(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static EmbeddingBasis read(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            if (in.readInt() != MAGIC) {
                throw new IllegalArgumentException("not an embedding basis file (bad magic)");
            }
            int version = in.readInt();
            if (version != VERSION) {
                throw new IllegalArgumentException("embedding basis version " + version + " is not supported");
            }
            String model = in.readUTF();
            String fitted = in.readUTF();
            int d = in.readInt();
            int k = in.readInt();
            if (d < 1 || d > 1 << 16 || k < 1 || k > d) {
                throw new IllegalArgumentException("embedding basis has a bad shape: d=" + d + ", K=" + k);
            }
            double[] centre = floats(in, d);
            double[][] dirs = new double[k][];
            for (int c = 0; c < k; c++) {
                dirs[c] = floats(in, d);
            }
            double[] radii = floats(in, k);
            if (in.read() != -1) {
                throw new IllegalArgumentException("embedding basis file has trailing bytes");
            }
            return new EmbeddingBasis(model, fitted, centre, dirs, radii, model + "-" + sha256(bytes).substring(0, 16));
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated embedding basis file", e);
        }
    }

    public byte[] toBytes() {
        return write(modelId, fittedOn, centre, directions, l1Radii);
    }

    static byte[] write(String modelId, String fittedOn, double[] centre, double[][] dirs, double[] radii) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(MAGIC);
            out.writeInt(VERSION);
            out.writeUTF(modelId);
            out.writeUTF(fittedOn);
            out.writeInt(centre.length);
            out.writeInt(dirs.length);
            for (double v : centre) {
                out.writeFloat((float) v);
            }
            for (double[] row : dirs) {
                for (double v : row) {
                    out.writeFloat((float) v);
                }
            }
            for (double v : radii) {
                out.writeFloat((float) v);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static double[] floats(DataInputStream in, int n) throws IOException {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = in.readFloat();
            if (!Float.isFinite((float) v[i])) {
                throw new IllegalArgumentException("embedding basis holds a non-finite number");
            }
        }
        return v;
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    /** The first k public coordinates of an embedding (not normalised). */
    public double[] project(double[] embedding, int k) {
        if (embedding.length != centre.length) {
            throw new IllegalArgumentException("embedding has " + embedding.length + " dimensions; the basis expects "
                    + centre.length);
        }
        if (k < 1 || k > directions.length) {
            throw new IllegalArgumentException("k must be in [1, " + directions.length + "], was " + k);
        }
        for (double v : embedding) {
            if (!Double.isFinite(v)) {
                throw new IllegalArgumentException("embedding holds a non-finite value");
            }
        }
        return project(embedding, centre, directions, k);
    }

    private static double[] project(double[] x, double[] centre, double[][] dirs, int k) {
        double[] z = new double[k];
        for (int c = 0; c < k; c++) {
            double s = 0;
            double[] w = dirs[c];
            for (int j = 0; j < x.length; j++) {
                s += (x[j] - centre[j]) * w[j];
            }
            z[c] = s;
        }
        return z;
    }

    /** Public L1 clip radius of a unit-normalised k-coordinate projection. */
    public double l1Radius(int k) {
        return l1Radii[k - 1];
    }

    public String modelId() {
        return modelId;
    }

    public String fittedOn() {
        return fittedOn;
    }

    public int inputDimension() {
        return centre.length;
    }

    public int maxDirections() {
        return directions.length;
    }

    /** {@code <model>-<first 16 hex digits of the file's SHA-256>}. */
    public String id() {
        return id;
    }
}
