package org.privface.agent.embed;

import org.opencv.core.Mat;
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
}
