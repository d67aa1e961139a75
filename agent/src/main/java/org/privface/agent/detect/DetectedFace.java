package org.privface.agent.detect;

import org.opencv.core.Rect;

/**
 * One face in frame coordinates.
 *
 * @param box       the face box, in frame pixels
 * @param landmarks 10 numbers, five points x,y in YuNet's order: right eye, left eye, nose tip,
 *                  right and left mouth corners (the person's right, so the image's left first);
 *                  null for detectors without landmarks (Haar)
 * @param score     the detector's confidence; 1 for detectors without one (Haar)
 */
public record DetectedFace(Rect box, float[] landmarks, float score) {
    public static final int LANDMARK_VALUES = 10;

    public DetectedFace {
        if (box == null) {
            throw new IllegalArgumentException("a detected face needs a box");
        }
        if (landmarks != null && landmarks.length != LANDMARK_VALUES) {
            throw new IllegalArgumentException("landmarks must be 5 points (10 numbers), got " + landmarks.length);
        }
    }

    public boolean hasLandmarks() {
        return landmarks != null;
    }
}
