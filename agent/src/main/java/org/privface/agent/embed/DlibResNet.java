package org.privface.agent.embed;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.MatOfByte;
import org.opencv.dnn.Dnn;
import org.opencv.dnn.Net;
import org.privface.agent.image.OpenCv;
import org.slf4j.LoggerFactory;

/**
 * dlib's face descriptor network ({@link DlibLayers}) as an ONNX graph written from the
 * hash-pinned TensorFlow.js weights (once, to a file: {@link #graphFile}), run on the calling thread (a camera thread is one core) by
 * ONNX Runtime or by OpenCV's DNN module ({@code agent.embedder.runtime}). Maps a 150×150 aligned
 * RGB face to 128 numbers. Not thread-safe: one per camera thread.
 */
public final class DlibResNet implements DlibEmbedder.Network {
    public static final int SIDE = DlibLayers.SIDE;
    public static final int DIMENSION = DlibLayers.DIMENSION;
    private static final String INPUT = "input";

    /** What executes the graph. */
    public enum Runtime {
        ONNXRUNTIME, OPENCV;

        /** The agent's default (docs/performance.md, "Embedding runtime"). */
        public static final Runtime DEFAULT = OPENCV;

        /** By its setting's name ({@code onnxruntime}, {@code opencv}); a clear error otherwise. */
        public static Runtime of(String name) {
            for (Runtime r : values()) {
                if (r.name().equalsIgnoreCase(name)) {
                    return r;
                }
            }
            throw new IllegalArgumentException("unknown embedding runtime '" + name + "'; known: onnxruntime, opencv");
        }
    }

    private final OrtGraph ort;
    private final Net net;

    public DlibResNet(TfjsWeights w) {
        this(w, Runtime.DEFAULT);
    }

    public DlibResNet(TfjsWeights w, Runtime runtime) {
        this(onnx(DlibLayers.of(w)), null, runtime);
    }

    /** The network from an ONNX file this class wrote ({@link #graphFile}). */
    public DlibResNet(Path onnxFile, Runtime runtime) {
        this(null, onnxFile, runtime);
    }

    private DlibResNet(byte[] model, Path file, Runtime runtime) {
        if (runtime == Runtime.OPENCV) {
            OpenCv.load();
            ort = null;
            // From the file, OpenCV reads the graph without a Java copy of it.
            net = file != null ? Dnn.readNetFromONNX(file.toString()) : Dnn.readNetFromONNX(new MatOfByte(model));
            if (net.empty()) {
                throw new IllegalStateException("OpenCV could not read dlib's network");
            }
            return;
        }
        net = null;
        try {
            ort = new OrtGraph(model != null ? model : read(file), INPUT, 1, 3, SIDE, SIDE);
        } catch (NoClassDefFoundError e) {
            throw new IllegalStateException("agent.embedder.runtime is onnxruntime, but ONNX Runtime is not on the classpath"
                    + " (add com.microsoft.onnxruntime:onnxruntime, or use runtime opencv)", e);
        }
    }

    /**
     * Bumped whenever {@link #onnx} writes a different graph from the same weights, so that a graph
     * written by an older agent is not loaded by a newer one.
     */
    static final int GRAPH_VERSION = 1;

    /**
     * dlib's graph as a file in {@code cacheDir}, written from {@code weights} the first time and
     * loaded after: building it in memory takes about 270 MiB of heap (issue 44), once per
     * process at most, and never again once the file exists. Named after the pinned weights' hash
     * and {@link #GRAPH_VERSION}; written to a temporary file and moved into place, so a reader
     * never sees half a graph. Empty when the folder cannot be written (a read-only image): the
     * caller then builds the graph in memory.
     */
    public static java.util.Optional<Path> graphFile(Path cacheDir, String weightsSha256,
                                                     java.util.function.Supplier<TfjsWeights> weights) {
        Path file = cacheDir.resolve("dlib_resnet_v1-g" + GRAPH_VERSION + "-" + weightsSha256.substring(0, 16) + ".onnx");
        if (Files.isRegularFile(file)) {
            return java.util.Optional.of(file);
        }
        try {
            Files.createDirectories(cacheDir);
            Path tmp = Files.createTempFile(cacheDir, "dlib_resnet_v1", ".onnx.tmp");
            try {
                Files.write(tmp, onnx(DlibLayers.of(weights.get())));
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(tmp);
            }
            return java.util.Optional.of(file);
        } catch (IOException e) {
            LoggerFactory.getLogger(DlibResNet.class).warn("cannot write dlib's graph under {} ({}); building it in memory",
                    cacheDir.toAbsolutePath(), e.toString());
            return java.util.Optional.empty();
        }
    }

    private static byte[] read(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read dlib's graph " + file, e);
        }
    }

    /** The serialized ONNX model of the network: input "input" [1, 3, 150, 150] normalised, output [1, 128]. */
    static byte[] onnx(DlibLayers layers) {
        OnnxModel g = new OnnxModel();
        g.input(INPUT, 1, 3, SIDE, SIDE);
        String x = conv(g, layers.stem(), INPUT, true);
        int side = layers.stem().side(SIDE);
        x = g.node("MaxPool", List.of(x), OnnxModel.Attr.ints("kernel_shape", 3, 3), OnnxModel.Attr.ints("strides", 2, 2));
        side = (side - 3) / 2 + 1;
        int channels = layers.stem().out();
        for (DlibLayers.Block b : layers.blocks()) {
            String y = conv(g, b.second(), conv(g, b.first(), x, true), false);
            int ySide = b.second().side(b.first().side(side));
            String shortcut = x;
            if (b.down()) {
                shortcut = g.node("AveragePool", List.of(x), OnnxModel.Attr.ints("kernel_shape", 2, 2),
                        OnnxModel.Attr.ints("strides", 2, 2));
                side = side / 2;
                int d = side - ySide;
                if (d > 0) {
                    y = g.node("Pad", List.of(y, g.longs(g.name(b.name() + "/pad"), 0, 0, 0, 0, 0, 0, d, d)));
                }
                int dc = b.second().out() - channels;
                if (dc > 0) {
                    shortcut = g.node("Pad", List.of(shortcut,
                            g.longs(g.name(b.name() + "/channels"), 0, 0, 0, 0, 0, dc, 0, 0)));
                }
            }
            x = g.node("Relu", List.of(g.node("Add", List.of(y, shortcut))));
            channels = b.second().out();
        }
        String pooled = g.node("ReduceMean", List.of(x), OnnxModel.Attr.ints("axes", 2, 3), OnnxModel.Attr.i("keepdims", 0));
        String out = g.node("MatMul", List.of(pooled, g.floats("fc", layers.fc(), 256, DIMENSION)));
        g.output(out, 1, DIMENSION);
        return g.toBytes("dlib_face_recognition_resnet_model_v1",
                "dlib's face descriptor, from @vladmandic/face-api's faceRecognitionNet TF.js weights");
    }

    private static String conv(OnnxModel g, DlibLayers.Conv c, String x, boolean relu) {
        String w = g.floats(c.name() + "/weight", c.weight(), c.out(), c.in(), c.k(), c.k());
        String b = g.floats(c.name() + "/bias", c.bias(), c.out());
        String y = g.node("Conv", List.of(x, w, b), OnnxModel.Attr.ints("kernel_shape", c.k(), c.k()),
                OnnxModel.Attr.ints("strides", c.stride(), c.stride()),
                OnnxModel.Attr.ints("pads", c.pad(), c.pad(), c.pad(), c.pad()));
        return relu ? g.node("Relu", List.of(y)) : y;
    }

    /**
     * The 128-d descriptor (not normalised) of one face.
     *
     * @param rgb150 150×150×3 pixels 0–255, RGB, row-major interleaved (HWC)
     */
    @Override
    public float[] forward(byte[] rgb150) {
        float[] chw = DlibLayers.input(rgb150);
        if (net != null) {
            Mat blob = new Mat(new int[] {1, 3, SIDE, SIDE}, CvType.CV_32F);
            blob.put(new int[] {0, 0, 0, 0}, chw);
            net.setInput(blob);
            Mat out = net.forward();
            float[] v = new float[DIMENSION];
            out.reshape(1, 1).get(0, 0, v);
            out.release();
            blob.release();
            return v;
        }
        return ort.run(chw, DIMENSION);
    }

    @Override
    public void close() {
        if (ort != null) {
            ort.close();
        }
    }
}
