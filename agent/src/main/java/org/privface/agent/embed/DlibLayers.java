package org.privface.agent.embed;

import java.util.ArrayList;
import java.util.List;

/**
 * dlib's face descriptor network ({@code dlib_face_recognition_resnet_model_v1}, Davis King) as
 * layers with their weights, read from face-api.js's TensorFlow.js conversion ({@code faceRecognitionNet}):
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
 *   <li>every conv has a bias and an affine "scale" layer (dlib's batch-norm at inference), folded
 *       here into the conv: w' = w·s per output channel, b' = b·s + t;</li>
 *   <li>the mean over the last 2×2 positions, then a 256×128 fully connected layer without bias.</li>
 * </ul>
 * The runtime that executes them is {@link DlibResNet}.
 */
record DlibLayers(Conv stem, List<Block> blocks, float[] fc) {
    static final int SIDE = 150;
    static final int DIMENSION = 128;
    /** dlib's input normalisation, RGB. */
    static final float[] MEAN_RGB = {122.782f, 117.001f, 104.298f};
    static final float INPUT_DIVISOR = 256f;

    /** One conv with its scale layer folded in; weight in [out, in, k, k] order. */
    record Conv(String name, float[] weight, float[] bias, int in, int out, int k, int stride, int pad) {
        /** Output side for an input side. */
        int side(int input) {
            return (input + 2 * pad - k) / stride + 1;
        }
    }

    record Block(String name, Conv first, Conv second, boolean down) {
    }

    static DlibLayers of(TfjsWeights w) {
        Conv stem = conv(w, "conv32_down", 7, 3, 32, 2, 0);
        List<Block> blocks = new ArrayList<>();
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
        return new DlibLayers(stem, List.copyOf(blocks), w.get("fc", 256, DIMENSION).values());
    }

    private static Conv conv(TfjsWeights w, String prefix, int k, int in, int out, int stride, int pad) {
        // TF.js filters are [h, w, in, out]; ONNX and PyTorch want [out, in, h, w].
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
        return new Conv(prefix, weight, bias, in, out, k, stride, pad);
    }

    /** A 150×150 RGB face (HWC bytes) as the network's normalised CHW input. */
    static float[] input(byte[] rgb150) {
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
        return chw;
    }
}
