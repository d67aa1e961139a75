package org.privface.agent.embed;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

import org.opencv.core.Mat;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.image.OpenCv;

/**
 * dlib's 128-d face descriptor ({@link DlibResNet}) behind the agent's embedding seam. The face is
 * aligned as dlib's {@code get_face_chip_details(shape, 150, 0.25)} aligns it: a least-squares
 * similarity onto dlib's mean face shape, with a padding of 0.25 of the face's size on every side,
 * into a 150×150 chip. dlib fits its 5-point model's eye corners and nose base; the detectors here
 * give eye centres, nose tip and mouth corners instead, so those five points are placed where the
 * same mean shape has them: each eye centre at the mean of its two corners (points 36/39 and
 * 42/45 of the 68-point layout), the nose tip at point 30, the mouth corners at 48 and 54.
 * Not thread-safe: one per camera thread.
 */
public final class DlibEmbedder implements FaceEmbedder {
    /** The basis and cache name ({@code embedding/dlib-lfwpublic.bin}) and {@code agent.embedder.network}. */
    public static final String MODEL = "dlib";
    public static final double PADDING = 0.25;
    /**
     * dlib's mean face shape (its {@code mean_face_shape_x/y}, unit square) at the five points above,
     * in the detectors' order: image-left eye, image-right eye, nose tip, image-left and image-right
     * mouth corner.
     */
    static final double[] MEAN_SHAPE = {
            (0.121737 + 0.334606) / 2, (0.216423 + 0.231733) / 2,
            (0.645647 + 0.858516) / 2, (0.231733 + 0.216423) / 2,
            0.490127, 0.515625,
            0.254149, 0.780233,
            0.726104, 0.780233};
    /** {@link #MEAN_SHAPE} in the padded 150×150 chip. */
    public static final double[] TEMPLATE = template(PADDING, DlibResNet.SIDE);

    /** What runs the network: {@link DlibResNet}, or DJL's reference in the tests and the edge benchmark. */
    public interface Network extends AutoCloseable {
        /** The 128-d descriptor (not normalised) of a 150×150 RGB face, HWC bytes. */
        float[] forward(byte[] rgb150);

        @Override
        void close();
    }

    private final Network net;

    public DlibEmbedder(Path manifest) {
        this(new DlibResNet(weights(manifest)));
    }

    public DlibEmbedder(Network net) {
        OpenCv.load();
        this.net = net;
    }

    /** dlib's weights from a TF.js manifest; a clear error naming it when unreadable. */
    public static TfjsWeights weights(Path manifest) {
        try {
            return TfjsWeights.read(manifest);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read dlib's weights from " + manifest, e);
        }
    }

    /** The build-fetched weights of {@value FaceModels#FACEAPI_PACKAGE}, checked against their pinned SHA-256. */
    public static DlibEmbedder fromPackage() {
        return fromPackage(DlibResNet.Runtime.DEFAULT);
    }

    /** As {@link #fromPackage()}, run by {@code runtime}. */
    public static DlibEmbedder fromPackage(DlibResNet.Runtime runtime) {
        FaceModels.faceapi(FaceModels.DLIB_WEIGHTS);
        Path manifest = FaceModels.faceapi(FaceModels.DLIB_MANIFEST);
        return new DlibEmbedder(DlibResNet.graphFile(FaceModels.modelCache(), FaceModels.DLIB_WEIGHTS_SHA256,
                        () -> weights(manifest))
                .map(file -> new DlibResNet(file, runtime))
                .orElseGet(() -> new DlibResNet(weights(manifest), runtime)));
    }

    static double[] template(double padding, int side) {
        double[] t = new double[MEAN_SHAPE.length];
        for (int i = 0; i < t.length; i++) {
            t[i] = (padding + MEAN_SHAPE[i]) / (1 + 2 * padding) * side;
        }
        return t;
    }

    @Override
    public int dimension() {
        return DlibResNet.DIMENSION;
    }

    @Override
    public double[] embed(Mat frame, DetectedFace face) {
        Mat aligned = FaceAlignment.alignFace(frame, face, TEMPLATE, DlibResNet.SIDE);
        double[] v = forward(aligned);
        aligned.release();
        return v;
    }

    /** The unit-length descriptor of an aligned 150×150 BGR chip. */
    double[] forward(Mat chipBgr) {
        Mat rgb = new Mat();
        Imgproc.cvtColor(chipBgr, rgb, Imgproc.COLOR_BGR2RGB);
        byte[] px = new byte[DlibResNet.SIDE * DlibResNet.SIDE * 3];
        rgb.get(0, 0, px);
        rgb.release();
        return FaceEmbedder.unit(net.forward(px));
    }

    @Override
    public String modelId() {
        return "dlib_resnet_v1@150/face-api";
    }

    @Override
    public void close() {
        net.close();
    }
}
