package org.privface.agent.embed;

import java.util.ArrayList;
import java.util.List;

import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.convolutional.Conv2d;
import ai.djl.nn.pooling.Pool;

/**
 * dlib's face descriptor network ({@code dlib_face_recognition_resnet_model_v1}, Davis King): a
 * ResNet with 29 convolutions that maps a 150×150 aligned RGB face to 128 numbers, run on DJL's
 * NDArray operations (PyTorch engine, NCHW). The architecture and weight names are those of
 * face-api.js's {@code faceRecognitionNet}, which converted dlib's weights to TensorFlow.js:
 * <ul>
 *   <li>input: per-channel mean (122.782, 117.001, 104.298) subtracted, divided by 256 (dlib's
 *       {@code input_rgb_image_sized<150>});</li>
 *   <li>a 7×7 stride-2 convolution without padding, 32 filters, then 3×3 stride-2 max pooling;</li>
 *   <li>residual blocks (3×3 conv, ReLU, 3×3 conv, plus the input, ReLU): three at 32 channels,
 *       four at 64, three at 128, three at 256 and a last down-sampling one; the first block of each
 *       width down-samples: its first conv has stride 2 and no padding, and its shortcut is 2×2 average
 *       pooling with the new channels zero. Where the conv path comes out one row or column smaller
 *       than the pooled shortcut, it is zero-padded at the end (dlib's add_prev adds over the
 *       overlap);</li>
 *   <li>every conv has a bias and an affine "scale" layer (dlib's batch-norm at inference);</li>
 *   <li>the mean over the last 2×2 positions, then a 256×128 fully connected layer without bias.</li>
 * </ul>
 * Not thread-safe: one per camera thread.
 */
public final class DlibResNet implements AutoCloseable {
    public static final int SIDE = 150;
    public static final int DIMENSION = 128;
    /** dlib's input normalisation, RGB. */
    static final float[] MEAN_RGB = {122.782f, 117.001f, 104.298f};
    static final float INPUT_DIVISOR = 256f;

    static {
        // As the recognizer does: the natives come from the pytorch-native-cpu jar on the classpath and
        // nothing may be downloaded. An explicit -Dai.djl.offline wins.
        if (System.getProperty("ai.djl.offline") == null) {
            System.setProperty("ai.djl.offline", "true");
        }
    }

    /** One conv with its scale layer folded in: w' = w·s per output channel, b' = b·s + t. */
    private record Conv(NDArray weight, NDArray bias, int stride, int pad) {
        NDArray apply(NDArray x, boolean relu) {
            NDArray y = Conv2d.conv2d(x, weight, bias, new Shape(stride, stride), new Shape(pad, pad),
                    new Shape(1, 1), 1).singletonOrThrow();
            return relu ? Activation.relu(y) : y;
        }
    }

    private record Block(String name, Conv first, Conv second, boolean down) {
    }

    private final NDManager manager;
    private final Conv stem;
    private final List<Block> blocks = new ArrayList<>();
    private final NDArray fc;

    public DlibResNet(TfjsWeights w) {
        manager = Engine.getEngine("PyTorch").newBaseManager();
        try {
            stem = conv(w, "conv32_down", 7, 3, 32, 2, 0);
            int in = 32;
            String[][] stages = {
                    {"conv32_1", "conv32_2", "conv32_3"},
                    {"conv64_down", "conv64_1", "conv64_2", "conv64_3"},
                    {"conv128_down", "conv128_1", "conv128_2"},
                    {"conv256_down", "conv256_1", "conv256_2", "conv256_down_out"}};
            for (String[] stage : stages) {
                for (String name : stage) {
                    boolean down = name.contains("_down");
                    int out = Integer.parseInt(name.substring(4, name.indexOf('_')));
                    blocks.add(new Block(name, conv(w, name + "/conv1", 3, in, out, down ? 2 : 1, down ? 0 : 1),
                            conv(w, name + "/conv2", 3, out, out, 1, 1), down));
                    in = out;
                }
            }
            fc = manager.create(w.get("fc", 256, DIMENSION).values(), new Shape(256, DIMENSION));
        } catch (RuntimeException e) {
            manager.close();
            throw e;
        }
    }

    private Conv conv(TfjsWeights w, String prefix, int k, int in, int out, int stride, int pad) {
        // TF.js filters are [h, w, in, out]; PyTorch wants [out, in, h, w].
        float[] f = w.get(prefix + "/conv/filters", k, k, in, out).values();
        float[] b = w.get(prefix + "/conv/bias", out).values();
        float[] s = w.get(prefix + "/scale/weights", out).values();
        float[] t = w.get(prefix + "/scale/biases", out).values();
        float[] weight = new float[f.length];
        for (int y = 0; y < k; y++) {
            for (int x = 0; x < k; x++) {
                for (int c = 0; c < in; c++) {
                    for (int o = 0; o < out; o++) {
                        weight[((o * in + c) * k + y) * k + x] = f[((y * k + x) * in + c) * out + o] * s[o];
                    }
                }
            }
        }
        float[] bias = new float[out];
        for (int o = 0; o < out; o++) {
            bias[o] = b[o] * s[o] + t[o];
        }
        return new Conv(manager.create(weight, new Shape(out, in, k, k)), manager.create(bias), stride, pad);
    }

    /**
     * The 128-d descriptor (not normalised) of one face.
     *
     * @param rgb150 150×150×3 pixels 0–255, RGB, row-major interleaved (HWC)
     */
    public float[] forward(byte[] rgb150) {
        if (rgb150.length != SIDE * SIDE * 3) {
            throw new IllegalArgumentException("dlib's network takes a 150×150 RGB face, got " + rgb150.length + " bytes");
        }
        float[] chw = new float[rgb150.length];
        int plane = SIDE * SIDE;
        for (int i = 0; i < plane; i++) {
            for (int c = 0; c < 3; c++) {
                chw[c * plane + i] = (Byte.toUnsignedInt(rgb150[3 * i + c]) - MEAN_RGB[c]) / INPUT_DIVISOR;
            }
        }
        try (NDManager m = manager.newSubManager()) {
            NDArray x = m.create(chw, new Shape(1, 3, SIDE, SIDE));
            x = stem.apply(x, true);
            x = Pool.maxPool2d(x, new Shape(3, 3), new Shape(2, 2), new Shape(0, 0), false);
            for (Block b : blocks) {
                x = residual(x, b);
            }
            NDArray pooled = x.mean(new int[] {3}).mean(new int[] {2});
            return pooled.matMul(fc).toFloatArray();
        }
    }

    private static NDArray residual(NDArray x, Block b) {
        NDArray y = b.second().apply(b.first().apply(x, true), false);
        NDArray shortcut = x;
        if (b.down()) {
            shortcut = Pool.avgPool2d(x, new Shape(2, 2), new Shape(2, 2), new Shape(0, 0), false, true);
            long dh = shortcut.getShape().get(2) - y.getShape().get(2);
            long dw = shortcut.getShape().get(3) - y.getShape().get(3);
            if (dh > 0 || dw > 0) {
                y = y.pad(new Shape(0, dw, 0, dh), 0);
            }
            long dc = y.getShape().get(1) - shortcut.getShape().get(1);
            if (dc > 0) {
                shortcut = shortcut.pad(new Shape(0, 0, 0, 0, 0, dc), 0);
            }
        }
        return Activation.relu(y.add(shortcut));
    }

    @Override
    public void close() {
        manager.close();
    }
}
