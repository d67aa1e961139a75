package org.privface.agent.embed;

import org.opencv.core.Mat;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.detect.DetectedFace;

/**
 * A deep face embedding: aligns the face itself from its five landmarks and returns an
 * L2-normalised vector. Not thread-safe: one per camera thread.
 */
public interface FaceEmbedder extends AutoCloseable {
    int dimension();

    /**
     * The unit-length embedding of one face of a BGR (or grey) frame.
     *
     * @throws IllegalArgumentException when the face has no landmarks (a Haar box): alignment needs them
     */
    double[] embed(Mat bgrFrame, DetectedFace face);

    /** Which network, for records, logs and summaries. */
    String modelId();

    @Override
    default void close() {
    }

    /** A network's raw output divided by its L2 norm; a clear error for a zero or non-finite output. */
    static double[] unit(float[] raw) {
        double[] v = new double[raw.length];
        for (int i = 0; i < raw.length; i++) {
            v[i] = raw[i];
        }
        try {
            return org.privface.privacy.aggregate.Sphere.normalize(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("the embedding network returned a zero or non-finite vector", e);
        }
    }

    /** The frame as 3-channel BGR (the frame itself when it already is; else a copy the caller releases). */
    static Mat bgr(Mat frame) {
        if (frame.channels() == 3) {
            return frame;
        }
        Mat colour = new Mat();
        Imgproc.cvtColor(frame, colour, frame.channels() == 4
                ? Imgproc.COLOR_BGRA2BGR : Imgproc.COLOR_GRAY2BGR);
        return colour;
    }
}
