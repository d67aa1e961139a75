package org.privface.agent.embed;

import org.opencv.calib3d.Calib3d;
import org.opencv.core.Mat;
import org.opencv.core.MatOfPoint2f;
import org.opencv.core.Point;
import org.opencv.core.Scalar;
import org.opencv.core.Size;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.detect.DetectedFace;

/**
 * The standard ArcFace alignment: the similarity transform (rotation, uniform scale, shift) that
 * best maps the five landmarks onto a fixed 112×112 template, then a warp. The same template and
 * landmark order as OpenCV's {@code FaceRecognizerSF.alignCrop} and insightface.
 */
public final class FaceAlignment {
    public static final int SIDE = 112;
    /** Right eye, left eye, nose tip, right and left mouth corners (image left first), in a 112×112 crop. */
    public static final double[] TEMPLATE = {
            38.2946, 51.6963, 73.5318, 51.5014, 56.0252, 71.7366, 41.5493, 92.3655, 70.7299, 92.2041};

    private FaceAlignment() {
    }

    /** The 2×3 similarity matrix from frame to template coordinates scaled to {@code side}. */
    public static Mat transform(float[] landmarks, int side) {
        return transform(landmarks, template(side));
    }

    /** {@link #TEMPLATE} scaled to a {@code side}×{@code side} crop. */
    public static double[] template(int side) {
        double k = side / (double) SIDE;
        return java.util.Arrays.stream(TEMPLATE).map(v -> v * k).toArray();
    }

    /**
     * An embedding network's input: the face of a BGR, BGRA or grey frame warped onto a template, as
     * 3-channel BGR; a clear error when the detector gave no landmarks (a Haar box).
     */
    public static Mat alignFace(Mat frame, DetectedFace face, double[] template, int side) {
        if (!face.hasLandmarks()) {
            throw new IllegalArgumentException("the embedding aligns faces by their five landmarks; this detector gives none"
                    + " (use agent.detector yunet or ultraface)");
        }
        Mat colour = FaceEmbedder.bgr(frame);
        Mat out = align(colour, face.landmarks(), template, side);
        if (colour != frame) {
            colour.release();
        }
        return out;
    }

    /** The 2×3 similarity matrix that maps the five landmarks onto five template points (x, y pairs, pixels). */
    public static Mat transform(float[] landmarks, double[] template) {
        if (landmarks == null || landmarks.length != DetectedFace.LANDMARK_VALUES) {
            throw new IllegalArgumentException("alignment needs five landmarks: use a detector with landmarks (yunet or ultraface)");
        }
        Point[] from = new Point[5];
        Point[] to = new Point[5];
        for (int i = 0; i < 5; i++) {
            from[i] = new Point(landmarks[2 * i], landmarks[2 * i + 1]);
            to[i] = new Point(template[2 * i], template[2 * i + 1]);
        }
        MatOfPoint2f src = new MatOfPoint2f(from);
        MatOfPoint2f dst = new MatOfPoint2f(to);
        // A RANSAC threshold no landmark error reaches keeps all five points as inliers, and the
        // Levenberg-Marquardt refinement then fits the least-squares similarity over all of them.
        Mat m = Calib3d.estimateAffinePartial2D(src, dst, new Mat(), Calib3d.RANSAC, 1e4, 2000, 0.99, 10);
        src.release();
        dst.release();
        if (m.empty()) {
            throw new IllegalArgumentException("degenerate landmarks: no similarity transform maps them to the template");
        }
        return m;
    }

    /** The face warped to {@code side}×{@code side}, same channels as the frame. */
    public static Mat align(Mat frame, float[] landmarks, int side) {
        return warp(frame, transform(landmarks, side), side);
    }

    /** The face warped onto a template of a {@code side}×{@code side} crop. */
    public static Mat align(Mat frame, float[] landmarks, double[] template, int side) {
        return warp(frame, transform(landmarks, template), side);
    }

    private static Mat warp(Mat frame, Mat m, int side) {
        Mat out = new Mat();
        Imgproc.warpAffine(frame, out, m, new Size(side, side), Imgproc.INTER_LINEAR, org.opencv.core.Core.BORDER_CONSTANT,
                new Scalar(0, 0, 0));
        m.release();
        return out;
    }
}
