package org.privface.agent.detect;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.opencv.core.Rect;

/**
 * Greedy non-maximum suppression: the best face wins and every box that overlaps it by more than
 * the IoU threshold, or lies mostly inside it, is dropped. Hand-written rather than
 * {@code Dnn.NMSBoxes} because that tests IoU only, and a cascade's small box nested inside a
 * large one (IoU often under 0.3) is the duplicate that most often splits one face into two tracks.
 */
public final class NonMaxSuppression {
    /** IoU above which two boxes are one face. */
    public static final double DEFAULT_IOU = 0.3;
    /** Share of the smaller box inside the larger above which the smaller is a duplicate. */
    public static final double CONTAINED = 0.8;

    private NonMaxSuppression() {
    }

    /** The surviving faces, largest box first. Ties in score go to the larger box. */
    public static List<DetectedFace> apply(List<DetectedFace> faces, double iouThreshold) {
        if (!(iouThreshold > 0 && iouThreshold <= 1)) {
            throw new IllegalArgumentException("IoU threshold must be in (0, 1], was " + iouThreshold);
        }
        List<DetectedFace> order = new ArrayList<>(faces);
        order.sort(Comparator.comparingDouble((DetectedFace f) -> f.score()).reversed()
                .thenComparing(Comparator.comparingLong((DetectedFace f) -> area(f.box())).reversed()));
        List<DetectedFace> kept = new ArrayList<>();
        for (DetectedFace f : order) {
            if (area(f.box()) <= 0) {
                continue;
            }
            boolean duplicate = false;
            for (DetectedFace k : kept) {
                long inter = intersection(f.box(), k.box());
                long union = area(f.box()) + area(k.box()) - inter;
                long smaller = Math.min(area(f.box()), area(k.box()));
                if (inter > iouThreshold * union || inter > CONTAINED * smaller) {
                    duplicate = true;
                    break;
                }
            }
            if (!duplicate) {
                kept.add(f);
            }
        }
        kept.sort(Comparator.comparingLong((DetectedFace f) -> area(f.box())).reversed());
        return kept;
    }

    /** Intersection over union of two boxes, in [0, 1]. */
    public static double iou(Rect a, Rect b) {
        long inter = intersection(a, b);
        long union = area(a) + area(b) - inter;
        return union <= 0 ? 0 : (double) inter / union;
    }

    private static long area(Rect r) {
        return Math.max(0L, r.width) * Math.max(0L, r.height);
    }

    private static long intersection(Rect a, Rect b) {
        long w = Math.min((long) a.x + a.width, (long) b.x + b.width) - Math.max(a.x, b.x);
        long h = Math.min((long) a.y + a.height, (long) b.y + b.height) - Math.max(a.y, b.y);
        return w > 0 && h > 0 ? w * h : 0;
    }
}
