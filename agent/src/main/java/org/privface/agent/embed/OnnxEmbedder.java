package org.privface.agent.embed;

import java.nio.file.Path;
import java.util.Locale;

import org.opencv.core.Mat;
import org.opencv.core.Scalar;
import org.opencv.core.Size;
import org.opencv.dnn.Dnn;
import org.opencv.dnn.Net;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.image.OpenCv;

/**
 * Any ONNX face-embedding network read with OpenCV's {@code Dnn.readNet}: the face is aligned to
 * the ArcFace template at the network's input size, turned into a blob with the configured scale,
 * mean and channel order, and the output is L2-normalised. Not thread-safe: one per camera thread.
 *
 * <p>{@code FaceRecognizerSF.feature} is not used: it feeds raw 0–255 pixels, which suits SFace but
 * not {@code fr_feature.onnx}, whose input is (x − 127)/128.
 */
public final class OnnxEmbedder implements FaceEmbedder {
    /**
     * How a network wants its input.
     *
     * @param model     the .onnx file
     * @param inputSize square input side, 112 for ArcFace-style networks
     * @param scale     multiplies each pixel after the mean is subtracted
     * @param mean      subtracted from each channel (0–255 scale)
     * @param swapRB    feed RGB (true) rather than OpenCV's BGR
     */
    public record Spec(Path model, int inputSize, double scale, double mean, boolean swapRB) {
        public Spec {
            if (model == null) {
                throw new IllegalArgumentException("embedding model path missing");
            }
            if (inputSize < 16 || !(scale > 0) || !Double.isFinite(mean)) {
                throw new IllegalArgumentException("bad embedding input: size " + inputSize + ", scale " + scale + ", mean " + mean);
            }
        }

        /** {@code fr_feature.onnx}: 112×112 RGB, (x − 127)/128 (the package's lib/fr_feature.js). */
        public static Spec faceplugin(Path model) {
            return new Spec(model, FaceAlignment.SIDE, 1 / 128.0, 127, true);
        }
    }

    private final Spec spec;
    private final Net net;
    private final int dimension;
    private final String modelId;

    public OnnxEmbedder(Spec spec) {
        OpenCv.load();
        this.spec = spec;
        this.net = Dnn.readNet(spec.model().toString());
        if (net.empty()) {
            throw new IllegalStateException("OpenCV could not read the embedding network " + spec.model());
        }
        Mat probe = new Mat(spec.inputSize(), spec.inputSize(), org.opencv.core.CvType.CV_8UC3, new Scalar(127, 127, 127));
        this.dimension = forward(probe).length;
        probe.release();
        String name = spec.model().getFileName().toString();
        this.modelId = String.format(Locale.ROOT, "%s@%d/%s", name.replaceFirst("\\.onnx$", ""), spec.inputSize(),
                FaceModels.FEATURE.equals(name) ? "faceplugin" : "custom");
    }

    /** The build-fetched {@code fr_feature.onnx}, checked against its pinned SHA-256. */
    public static OnnxEmbedder fromPackage() {
        return new OnnxEmbedder(Spec.faceplugin(FaceModels.faceplugin(FaceModels.FEATURE)));
    }

    @Override
    public int dimension() {
        return dimension;
    }

    @Override
    public double[] embed(Mat frame, DetectedFace face) {
        Mat aligned = FaceAlignment.alignFace(frame, face, FaceAlignment.template(spec.inputSize()), spec.inputSize());
        double[] v = forward(aligned);
        aligned.release();
        return v;
    }

    /** Runs an aligned input-size crop through the network; the unit-length output. */
    double[] forward(Mat aligned) {
        double m = spec.mean();
        Mat blob = Dnn.blobFromImage(aligned, spec.scale(), new Size(spec.inputSize(), spec.inputSize()),
                new Scalar(m, m, m), spec.swapRB(), false);
        net.setInput(blob);
        Mat out = net.forward();
        float[] raw = new float[(int) out.total()];
        out.reshape(1, 1).get(0, 0, raw);
        out.release();
        blob.release();
        return FaceEmbedder.unit(raw);
    }

    @Override
    public String modelId() {
        return modelId;
    }
}
