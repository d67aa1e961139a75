package org.privface.agent.detect;

import java.util.List;

import org.opencv.core.Mat;
import org.opencv.core.Rect;

/**
 * The agent's detector seam. Every implementation applies {@link NonMaxSuppression} to its
 * output, so one face is one box (and so one track), and returns the faces largest first.
 * Not thread-safe: one per camera thread.
 */
public interface FaceFinder extends AutoCloseable {
    /** Faces in a BGR or grey frame, in the frame's coordinates, largest first. */
    List<DetectedFace> detect(Mat bgrOrGreyFrame);

    /** What runs, for logs and summaries: the detector and where its model came from. */
    String describe();

    /** Whether its faces carry the five landmarks that alignment needs. */
    default boolean landmarks() {
        return false;
    }

    /** Whether it reads colour: a caller with a grey copy at hand passes that to detectors that do not. */
    default boolean readsColour() {
        return false;
    }

    /** The boxes alone, for callers that only crop pixels. */
    default List<Rect> boxes(Mat bgrOrGreyFrame) {
        return detect(bgrOrGreyFrame).stream().map(DetectedFace::box).toList();
    }

    @Override
    default void close() {
    }
}
