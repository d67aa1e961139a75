package org.privface.agent.embed;

import java.util.List;

import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.MatOfByte;
import org.opencv.dnn.Dnn;
import org.opencv.dnn.Net;
import org.privface.agent.image.OpenCv;

/**
 * dlib's face descriptor network ({@link DlibLayers}) as an ONNX graph written at start-up from the
 * hash-pinned TensorFlow.js weights, run on the calling thread (a camera thread is one core) by
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
        byte[] model = onnx(DlibLayers.of(w));
        if (runtime == Runtime.OPENCV) {
            OpenCv.load();
            ort = null;
            net = Dnn.readNetFromONNX(new MatOfByte(model));
            if (net.empty()) {
                throw new IllegalStateException("OpenCV could not read dlib's network");
            }
            return;
        }
        net = null;
        try {
            ort = new OrtGraph(model, INPUT, 1, 3, SIDE, SIDE);
        } catch (NoClassDefFoundError e) {
            throw new IllegalStateException("agent.embedder.runtime is onnxruntime, but ONNX Runtime is not on the classpath"
                    + " (add com.microsoft.onnxruntime:onnxruntime, or use runtime opencv)", e);
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
