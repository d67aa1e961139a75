package org.privface.recognizer.model;

import ai.djl.Device;
import ai.djl.MalformedModelException;
import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.inference.Predictor;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.types.Shape;
import ai.djl.translate.NoBatchifyTranslator;
import ai.djl.translate.TranslateException;
import ai.djl.translate.TranslatorContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A trained MLP classifier (see {@link MlpTrainer}). Holds native memory: close it.
 *
 * <p>Thread safety: {@link #predictProba} and {@link #predict} may be called concurrently; each
 * call uses its own DJL {@code Predictor} (DJL predictors are not thread-safe) over shared,
 * frozen parameters. {@link #close} waits for in-flight predictions; later calls throw
 * {@link IllegalStateException}.
 */
public final class MlpModel implements AutoCloseable {

    static final String PARAMS_PREFIX = "mlp";
    static final String METADATA_FILE = "mlp-metadata.properties";
    static final int FORMAT_VERSION = 1;

    /** Rows per forward pass: bounds native memory for large inputs. */
    static final int INFERENCE_BATCH = 1024;

    private final Model model;
    private final int inputDim;
    private final int numClasses;
    private final int[] hiddenSizes;
    private final float[] mean;
    private final float[] sd;
    private final ReadWriteLock lifecycle = new ReentrantReadWriteLock();
    private boolean closed; // guarded by lifecycle

    MlpModel(Model model, int inputDim, int numClasses, int[] hiddenSizes, float[] mean,
            float[] sd) {
        this.model = model;
        this.inputDim = inputDim;
        this.numClasses = numClasses;
        this.hiddenSizes = hiddenSizes.clone();
        this.mean = mean.clone();
        this.sd = sd.clone();
    }

    public int inputDim() {
        return inputDim;
    }

    public int numClasses() {
        return numClasses;
    }

    public int[] hiddenSizes() {
        return hiddenSizes.clone();
    }

    /**
     * Class probabilities (softmax) for each row; {@code result[i][c]} is P(class c | x[i]).
     *
     * @throws IllegalArgumentException if {@code x} is empty, ragged, has the wrong width, or
     *     contains NaN/infinite values
     */
    public float[][] predictProba(float[][] x) {
        DjlSupport.checkMatrix(x, inputDim, "x");
        lifecycle.readLock().lock();
        try {
            ensureOpen();
            float[][] out = new float[x.length][];
            try (Predictor<float[], float[]> predictor =
                    model.newPredictor(new ProbaTranslator())) {
                for (int from = 0; from < x.length; from += INFERENCE_BATCH) {
                    int to = Math.min(x.length, from + INFERENCE_BATCH);
                    float[] flat = predictor.predict(DjlSupport.standardize(x, from, to, mean, sd));
                    for (int i = from; i < to; i++) {
                        int off = (i - from) * numClasses;
                        out[i] = Arrays.copyOfRange(flat, off, off + numClasses);
                    }
                }
            } catch (TranslateException e) {
                throw new IllegalStateException("inference failed", e);
            }
            return out;
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    /** Most probable class for each row (lowest index on ties). */
    public int[] predict(float[][] x) {
        float[][] p = predictProba(x);
        int[] labels = new int[p.length];
        for (int i = 0; i < p.length; i++) {
            int best = 0;
            for (int c = 1; c < numClasses; c++) {
                if (p[i][c] > p[i][best]) {
                    best = c;
                }
            }
            labels[i] = best;
        }
        return labels;
    }

    /**
     * Writes the parameters ({@code mlp-0000.params}, DJL format) and {@value #METADATA_FILE}
     * into {@code dir}, creating it if needed. Existing files of the same names are replaced.
     */
    public void save(Path dir) throws IOException {
        if (dir == null) {
            throw new IllegalArgumentException("dir must not be null");
        }
        lifecycle.readLock().lock();
        try {
            ensureOpen();
            Files.createDirectories(dir);
            model.save(dir, PARAMS_PREFIX);
            Properties p = new Properties();
            p.setProperty("formatVersion", Integer.toString(FORMAT_VERSION));
            p.setProperty("inputDim", Integer.toString(inputDim));
            p.setProperty("numClasses", Integer.toString(numClasses));
            p.setProperty("hiddenSizes", join(hiddenSizes));
            p.setProperty("mean", join(mean));
            p.setProperty("sd", join(sd));
            try (OutputStream os = Files.newOutputStream(dir.resolve(METADATA_FILE))) {
                p.store(os, "privface MLP metadata");
            }
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    /**
     * Loads a model written by {@link #save}.
     *
     * @throws IOException if files are missing, unreadable or inconsistent
     */
    public static MlpModel load(Path dir) throws IOException {
        if (dir == null) {
            throw new IllegalArgumentException("dir must not be null");
        }
        Path metaFile = dir.resolve(METADATA_FILE);
        if (!Files.isRegularFile(metaFile)) {
            throw new IOException("no " + METADATA_FILE + " in " + dir);
        }
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(metaFile)) {
            p.load(in);
        }
        int inputDim;
        int numClasses;
        int[] hidden;
        float[] mean;
        float[] sd;
        try {
            int version = Integer.parseInt(required(p, "formatVersion"));
            if (version != FORMAT_VERSION) {
                throw new IOException("unsupported model format version " + version);
            }
            inputDim = Integer.parseInt(required(p, "inputDim"));
            numClasses = Integer.parseInt(required(p, "numClasses"));
            hidden = parseInts(required(p, "hiddenSizes"));
            mean = parseFloats(required(p, "mean"));
            sd = parseFloats(required(p, "sd"));
        } catch (NumberFormatException e) {
            throw new IOException("corrupt " + metaFile + ": " + e.getMessage(), e);
        }
        if (inputDim < 1 || numClasses < 2 || hidden.length == 0 || mean.length != inputDim
                || sd.length != inputDim) {
            throw new IOException("inconsistent dimensions in " + metaFile);
        }

        Engine engine = DjlSupport.engine();
        Model model = Model.newInstance("privface-mlp", Device.cpu(), engine.getEngineName());
        boolean ok = false;
        try {
            model.setBlock(DjlSupport.buildNetwork(hidden, numClasses));
            model.load(dir, PARAMS_PREFIX);
            model.getBlock().freezeParameters(true);
            MlpModel result = new MlpModel(model, inputDim, numClasses, hidden, mean, sd);
            ok = true;
            return result;
        } catch (MalformedModelException | IllegalArgumentException | IllegalStateException e) {
            throw new IOException("cannot load MLP parameters from " + dir + ": " + e.getMessage(),
                    e);
        } finally {
            if (!ok) {
                model.close();
            }
        }
    }

    @Override
    public void close() {
        lifecycle.writeLock().lock();
        try {
            if (!closed) {
                closed = true;
                model.close();
            }
        } finally {
            lifecycle.writeLock().unlock();
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("model is closed");
        }
    }

    /** Row-major standardised features in, row-major softmax probabilities out. */
    private final class ProbaTranslator implements NoBatchifyTranslator<float[], float[]> {
        @Override
        public NDList processInput(TranslatorContext ctx, float[] input) {
            long rows = input.length / inputDim;
            return new NDList(ctx.getNDManager().create(input, new Shape(rows, inputDim)));
        }

        @Override
        public float[] processOutput(TranslatorContext ctx, NDList list) {
            NDArray logits = list.singletonOrThrow();
            return logits.softmax(1).toFloatArray();
        }
    }

    private static String required(Properties p, String key) throws IOException {
        String v = p.getProperty(key);
        if (v == null) {
            throw new IOException("missing '" + key + "' in " + METADATA_FILE);
        }
        return v;
    }

    // Float.toString/parseFloat round-trip exactly, so reloaded statistics are bit-identical.
    private static String join(float[] v) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < v.length; i++) {
            sb.append(i == 0 ? "" : ",").append(v[i]);
        }
        return sb.toString();
    }

    private static String join(int[] v) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < v.length; i++) {
            sb.append(i == 0 ? "" : ",").append(v[i]);
        }
        return sb.toString();
    }

    private static float[] parseFloats(String s) {
        String[] parts = s.split(",");
        float[] v = new float[parts.length];
        for (int i = 0; i < parts.length; i++) {
            v[i] = Float.parseFloat(parts[i].trim());
        }
        return v;
    }

    private static int[] parseInts(String s) {
        String[] parts = s.split(",");
        int[] v = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            v[i] = Integer.parseInt(parts[i].trim());
        }
        return v;
    }
}
