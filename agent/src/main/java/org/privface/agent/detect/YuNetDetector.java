package org.privface.agent.detect;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.opencv.core.Size;
import org.opencv.imgproc.Imgproc;
import org.opencv.objdetect.FaceDetectorYN;
import org.privface.agent.image.OpenCv;

/**
 * YuNet (Wu, Peng, Yu 2023) through OpenCV's {@code FaceDetectorYN}: boxes, five landmarks and a
 * score per face. Not thread-safe: one per camera thread.
 *
 * <p>With {@code maxDetectWidth} set, wider frames are scanned on a shrunk copy (YuNet's cost is
 * about linear in pixels: 23 ms at 640×480, 7 ms at 320×240 on one core) and boxes and landmarks
 * are scaled back to the frame.
 */
public final class YuNetDetector implements FaceFinder {
    public static final float DEFAULT_SCORE = 0.8f;

    private final FaceDetectorYN net;
    private final Path model;
    private final float scoreThreshold;
    private final int maxDetectWidth;
    private Size inputSize = new Size(0, 0);

    public YuNetDetector(Path model, float scoreThreshold, int maxDetectWidth) {
        if (!(scoreThreshold > 0 && scoreThreshold < 1)) {
            throw new IllegalArgumentException("score threshold must be in (0, 1), was " + scoreThreshold);
        }
        if (maxDetectWidth != 0 && maxDetectWidth < FaceDetector.MIN_DETECT_WIDTH) {
            throw new IllegalArgumentException("maxDetectWidth must be 0 (off) or >= " + FaceDetector.MIN_DETECT_WIDTH);
        }
        OpenCv.load();
        FaceModels.verify(model, FaceModels.YUNET_SHA256);
        this.model = model;
        this.scoreThreshold = scoreThreshold;
        this.maxDetectWidth = maxDetectWidth;
        // Its own NMS at 0.3 IoU; ours runs again after it so every detector's output obeys one rule.
        this.net = FaceDetectorYN.create(model.toString(), "", new Size(320, 320), scoreThreshold, 0.3f, 5000);
    }

    @Override
    public List<DetectedFace> detect(Mat frame) {
        Mat bgr = bgr(frame);
        double scale = FaceDetector.scale(bgr.cols(), maxDetectWidth);
        Mat scanned = FaceDetector.shrink(bgr, scale);
        Size size = scanned.size();
        if (!size.equals(inputSize)) {
            net.setInputSize(size);
            inputSize = size;
        }
        Mat rows = new Mat();
        net.detect(scanned, rows);
        List<DetectedFace> faces = new ArrayList<>(rows.rows());
        float[] row = new float[15];
        for (int i = 0; i < rows.rows(); i++) {
            rows.get(i, 0, row);
            int x = (int) Math.round(row[0] / scale);
            int y = (int) Math.round(row[1] / scale);
            Rect box = clip(x, y, (int) Math.round((row[0] + row[2]) / scale) - x,
                    (int) Math.round((row[1] + row[3]) / scale) - y, frame.cols(), frame.rows());
            if (box.width <= 0 || box.height <= 0) {
                continue;
            }
            float[] lm = new float[DetectedFace.LANDMARK_VALUES];
            for (int k = 0; k < lm.length; k++) {
                lm[k] = (float) (row[4 + k] / scale);
            }
            faces.add(new DetectedFace(box, lm, row[14]));
        }
        rows.release();
        if (scanned != bgr) {
            scanned.release();
        }
        if (bgr != frame) {
            bgr.release();
        }
        return NonMaxSuppression.apply(faces, NonMaxSuppression.DEFAULT_IOU);
    }

    @Override
    public boolean landmarks() {
        return true;
    }

    @Override
    public boolean readsColour() {
        return true;
    }

    @Override
    public String describe() {
        return "yunet (" + model.getFileName() + ", MIT, Shiqi Yu; score >= " + scoreThreshold
                + (maxDetectWidth > 0 ? ", scanned at width " + maxDetectWidth : "") + ")";
    }

    /** A 3-channel BGR view of a frame: YuNet takes colour only. */
    static Mat bgr(Mat frame) {
        if (frame.channels() == 3) {
            return frame;
        }
        Mat out = new Mat();
        Imgproc.cvtColor(frame, out, frame.channels() == 4 ? Imgproc.COLOR_BGRA2BGR : Imgproc.COLOR_GRAY2BGR);
        return out;
    }

    /** A box kept inside the frame: YuNet's boxes may start at negative coordinates near an edge. */
    static Rect clip(int x, int y, int w, int h, int cols, int rows) {
        int x0 = Math.max(0, x);
        int y0 = Math.max(0, y);
        int x1 = Math.min(cols, x + w);
        int y1 = Math.min(rows, y + h);
        return new Rect(x0, y0, x1 - x0, y1 - y0);
    }
}
