package org.privface.agent.detect;

import java.util.List;

import org.opencv.core.Rect;

/**
 * Which face of a labelled image its label belongs to. A folder-per-person data set labels whole
 * images, yet a photo often holds someone else in the background (LFW: 247 faces in 218 images of
 * 14 people), so exactly one face per image carries the label: the largest and most central.
 *
 * <p>The rule: among the faces whose box is at least {@link #MIN_AREA_RATIO} of the largest box's
 * area, the one whose box centre is nearest the image centre; equal distances go to the larger box,
 * then to the earlier one. Every other face of the image is someone unlabelled.
 */
public final class LabelledFace {
    /** Faces under half the largest one's area are background, however central. */
    public static final double MIN_AREA_RATIO = 0.5;
    /** The rule in words, for summaries and logs. */
    public static final String RULE = "one face per labelled image: the largest and most central (of the faces at least "
            + "half the largest one's area, the nearest the image centre)";

    private LabelledFace() {
    }

    /** The index of the labelled face among {@code boxes} in a {@code width}×{@code height} image; -1 when there is none. */
    public static int index(List<Rect> boxes, int width, int height) {
        double largest = 0;
        for (Rect r : boxes) {
            largest = Math.max(largest, r.area());
        }
        int best = -1;
        double bestDistance = Double.POSITIVE_INFINITY;
        for (int i = 0; i < boxes.size(); i++) {
            Rect r = boxes.get(i);
            if (r.area() < MIN_AREA_RATIO * largest) {
                continue;
            }
            double dx = r.x + r.width / 2.0 - width / 2.0;
            double dy = r.y + r.height / 2.0 - height / 2.0;
            double d = dx * dx + dy * dy;
            if (d < bestDistance || d == bestDistance && r.area() > boxes.get(best).area()) {
                best = i;
                bestDistance = d;
            }
        }
        return best;
    }
}
