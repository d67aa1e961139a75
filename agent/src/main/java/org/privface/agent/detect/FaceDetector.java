package org.privface.agent.detect;

import java.util.ArrayList;
import java.util.List;

import org.opencv.core.Mat;
import org.opencv.core.MatOfRect;
import org.opencv.core.Rect;
import org.opencv.core.Size;
import org.opencv.imgproc.Imgproc;
import org.opencv.objdetect.CascadeClassifier;
import org.privface.agent.image.OpenCv;

/**
 * Finds faces with an OpenCV cascade. Not thread-safe (CascadeClassifier is not): one per camera
 * thread.
 *
 * <p>The cascade's cost grows with the pixels it scans. With {@code maxDetectWidth} set, a wider
 * frame is scanned on a copy shrunk to that width and the boxes are scaled back to the frame, so
 * the caller always gets frame coordinates. At 640×480 a width of 320 scans a quarter of the pixels
 * and detects 2.6× faster on one core (docs/performance.md), but a face is then only found when its
 * shrunk box still spans the cascade's window (24 px for the default Haar cascade): about 48 px in
 * the frame rather than {@code minFaceSize}.
 */
public final class FaceDetector implements FaceFinder {
    public static final String DEFAULT_CASCADE = "haarcascades/haarcascade_frontalface_default.xml";
    /** Smallest useful {@code maxDetectWidth}: a few cascade windows across. */
    public static final int MIN_DETECT_WIDTH = 64;

    private final CascadeClassifier classifier;
    private final String cascade;
    private final double scaleFactor;
    private final int minNeighbors;
    private final int minFaceSize;
    private final int maxDetectWidth;

    /** Scans every frame at full resolution. */
    public FaceDetector(String cascade, double scaleFactor, int minNeighbors, int minFaceSize) {
        this(cascade, scaleFactor, minNeighbors, minFaceSize, 0);
    }

    /**
     * @param minFaceSize    smallest face side in frame pixels
     * @param maxDetectWidth scan frames wider than this on a copy shrunk to this width; 0 scans at full resolution
     */
    public FaceDetector(String cascade, double scaleFactor, int minNeighbors, int minFaceSize, int maxDetectWidth) {
        if (!(scaleFactor > 1.0)) {
            throw new IllegalArgumentException("scaleFactor must be > 1, was " + scaleFactor);
        }
        if (minNeighbors < 0 || minFaceSize < 8) {
            throw new IllegalArgumentException("minNeighbors must be >= 0 and minFaceSize >= 8");
        }
        if (maxDetectWidth != 0 && maxDetectWidth < MIN_DETECT_WIDTH) {
            throw new IllegalArgumentException("maxDetectWidth must be 0 (off) or >= " + MIN_DETECT_WIDTH + ", was "
                    + maxDetectWidth);
        }
        this.classifier = new CascadeClassifier(OpenCv.cascade(cascade).getAbsolutePath());
        if (classifier.empty()) {
            throw new IllegalStateException("cascade " + cascade + " failed to load");
        }
        this.cascade = cascade;
        this.scaleFactor = scaleFactor;
        this.minNeighbors = minNeighbors;
        this.minFaceSize = minFaceSize;
        this.maxDetectWidth = maxDetectWidth;
    }

    public static FaceDetector defaults() {
        return new FaceDetector(DEFAULT_CASCADE, 1.1, 4, 40);
    }

    /** Scan width limit in pixels; 0 when frames are scanned at full resolution. */
    public int maxDetectWidth() {
        return maxDetectWidth;
    }

    /** Faces in a frame (BGR or grey), largest first, in the frame's coordinates; no landmarks, score 1. */
    @Override
    public List<DetectedFace> detect(Mat frame) {
        Mat grey = FaceCrops.grey(frame);
        double scale = scale(grey.cols(), maxDetectWidth);
        Mat scanned = shrink(grey, scale);
        Mat eq = new Mat();
        Imgproc.equalizeHist(scanned, eq);
        MatOfRect found = new MatOfRect();
        int min = Math.max(1, (int) Math.round(minFaceSize * scale));
        classifier.detectMultiScale(eq, found, scaleFactor, minNeighbors, 0, new Size(min, min), new Size());
        List<DetectedFace> faces = new ArrayList<>();
        for (Rect r : found.toList()) {
            faces.add(new DetectedFace(scale < 1.0 ? toFrame(r, scale, frame.cols(), frame.rows()) : r, null, 1f));
        }
        found.release();
        eq.release();
        if (scanned != grey) {
            scanned.release();
        }
        if (grey != frame) {
            grey.release();
        }
        return NonMaxSuppression.apply(faces, NonMaxSuppression.DEFAULT_IOU);
    }

    @Override
    public String describe() {
        return "haar (OpenCV cascade " + cascade + ", scaleFactor " + scaleFactor + ", minNeighbors " + minNeighbors + ", minFaceSize "
                + minFaceSize + (maxDetectWidth > 0 ? ", scanned at width " + maxDetectWidth : "") + ")";
    }

    /** The factor that shrinks a frame {@code cols} wide to {@code maxWidth}; 1 when it is not wider or the limit is 0. */
    static double scale(int cols, int maxWidth) {
        return maxWidth > 0 && cols > maxWidth ? (double) maxWidth / cols : 1.0;
    }

    /** The frame itself at scale 1, else a shrunk copy the caller releases. */
    static Mat shrink(Mat frame, double scale) {
        if (scale >= 1.0) {
            return frame;
        }
        Mat small = new Mat();
        Imgproc.resize(frame, small, new Size(Math.max(1, Math.round(frame.cols() * scale)),
                Math.max(1, Math.round(frame.rows() * scale))), 0, 0, Imgproc.INTER_AREA);
        return small;
    }

    /** A box found on the shrunk copy, in frame pixels, kept inside the frame. */
    static Rect toFrame(Rect r, double scale, int cols, int rows) {
        int x = (int) Math.round(r.x / scale);
        int y = (int) Math.round(r.y / scale);
        int x2 = Math.min(cols, (int) Math.round((r.x + r.width) / scale));
        int y2 = Math.min(rows, (int) Math.round((r.y + r.height) / scale));
        return new Rect(x, y, x2 - x, y2 - y);
    }
}
