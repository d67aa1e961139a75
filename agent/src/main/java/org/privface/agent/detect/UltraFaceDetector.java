package org.privface.agent.detect;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.opencv.core.Scalar;
import org.opencv.core.Size;
import org.opencv.dnn.Dnn;
import org.opencv.dnn.Net;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.image.OpenCv;

/**
 * The detector a package registry ships: UltraFace RFB-320 ({@code fr_detect.onnx}) for boxes,
 * then a 68-point landmark network ({@code fr_landmark.onnx}) on each box, reduced to YuNet's
 * five points. Both come from the npm package {@value FaceModels#FACEPLUGIN_PACKAGE}; the pre- and
 * post-processing follow that package's own JavaScript ({@code lib/fr_detect.js},
 * {@code lib/fr_landmark.js}). Not thread-safe: one per camera thread.
 */
public final class UltraFaceDetector implements FaceFinder {
    public static final float DEFAULT_SCORE = 0.7f;
    private static final int WIDTH = 320;
    private static final int HEIGHT = 240;
    private static final int LANDMARK_SIDE = 64;
    private static final List<String> OUTPUTS = List.of("boxes", "scores");

    private final Net detect;
    private final Net landmark;
    private final float scoreThreshold;

    public UltraFaceDetector(Path detectModel, Path landmarkModel, float scoreThreshold) {
        if (!(scoreThreshold > 0 && scoreThreshold < 1)) {
            throw new IllegalArgumentException("score threshold must be in (0, 1), was " + scoreThreshold);
        }
        OpenCv.load();
        this.detect = Dnn.readNet(detectModel.toString());
        this.landmark = Dnn.readNet(landmarkModel.toString());
        this.scoreThreshold = scoreThreshold;
    }

    /** The build-fetched models, each checked against its pinned SHA-256. */
    public static UltraFaceDetector fromPackage() {
        return fromPackage(DEFAULT_SCORE);
    }

    public static UltraFaceDetector fromPackage(float scoreThreshold) {
        return new UltraFaceDetector(FaceModels.faceplugin(FaceModels.DETECT), FaceModels.faceplugin(FaceModels.LANDMARK),
                scoreThreshold);
    }

    @Override
    public List<DetectedFace> detect(Mat frame) {
        Mat bgr = YuNetDetector.bgr(frame);
        int cols = bgr.cols();
        int rows = bgr.rows();
        // RGB, (x − 127)/128, stretched to 320×240 as the package does.
        Mat blob = Dnn.blobFromImage(bgr, 1 / 128.0, new Size(WIDTH, HEIGHT), new Scalar(127, 127, 127), true, false);
        detect.setInput(blob, "input");
        List<Mat> out = new ArrayList<>(2);
        detect.forward(out, OUTPUTS);
        blob.release();
        int n = (int) (out.get(1).total() / 2);
        float[] boxes = new float[n * 4];
        float[] scores = new float[n * 2];
        out.get(0).reshape(1, n).get(0, 0, boxes);
        out.get(1).reshape(1, n).get(0, 0, scores);
        out.forEach(Mat::release);

        List<DetectedFace> found = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            float s = scores[2 * i + 1];
            if (s < scoreThreshold) {
                continue;
            }
            // Corners relative to the frame; the package squares each box on its height about its centre.
            double x1 = boxes[4 * i] * cols;
            double y1 = boxes[4 * i + 1] * rows;
            double x2 = boxes[4 * i + 2] * cols;
            double y2 = boxes[4 * i + 3] * rows;
            double side = y2 - y1;
            double cx = (x1 + x2) / 2;
            double cy = (y1 + y2) / 2;
            int x = (int) Math.round(cx - side / 2);
            int y = (int) Math.round(cy - side / 2);
            int sideInt = (int) Math.round(side);
            Rect box = YuNetDetector.clip(x, y, sideInt, sideInt, cols, rows);
            if (box.width > 1 && box.height > 1) {
                found.add(new DetectedFace(box, null, s));
            }
        }
        List<DetectedFace> kept = NonMaxSuppression.apply(found, NonMaxSuppression.DEFAULT_IOU);
        List<DetectedFace> faces = new ArrayList<>(kept.size());
        Mat grey = FaceCrops.grey(bgr);
        for (DetectedFace f : kept) {
            faces.add(new DetectedFace(f.box(), fivePoints(landmarks68(grey, f.box())), f.score()));
        }
        if (grey != bgr) {
            grey.release();
        }
        if (bgr != frame) {
            bgr.release();
        }
        return faces;
    }

    /** 68 points (x,y pairs) in frame pixels, from the box's 64×64 grey crop scaled 1/256, as the package does. */
    float[] landmarks68(Mat grey, Rect box) {
        Mat roi = grey.submat(box);
        Mat small = new Mat();
        Imgproc.resize(roi, small, new Size(LANDMARK_SIDE, LANDMARK_SIDE), 0, 0, Imgproc.INTER_LINEAR);
        Mat blob = Dnn.blobFromImage(small, 1 / 256.0);
        landmark.setInput(blob, "input");
        Mat out = landmark.forward();
        float[] rel = new float[(int) out.total()];
        out.reshape(1, 1).get(0, 0, rel);
        for (int i = 0; i < rel.length; i += 2) {
            rel[i] = box.x + rel[i] * box.width;
            rel[i + 1] = box.y + rel[i + 1] * box.height;
        }
        out.release();
        blob.release();
        small.release();
        roi.release();
        return rel;
    }

    /**
     * The 68-point (iBUG) layout to YuNet's five: eye centres are the means of the eye contours
     * 36–41 (image left, the person's right) and 42–47, the nose tip is 30, the mouth corners 48
     * (image left) and 54.
     */
    public static float[] fivePoints(float[] p68) {
        if (p68.length != 136) {
            throw new IllegalArgumentException("expected 68 points (136 numbers), got " + p68.length);
        }
        float[] five = new float[DetectedFace.LANDMARK_VALUES];
        mean(p68, 36, 41, five, 0);
        mean(p68, 42, 47, five, 1);
        mean(p68, 30, 30, five, 2);
        mean(p68, 48, 48, five, 3);
        mean(p68, 54, 54, five, 4);
        return five;
    }

    private static void mean(float[] p68, int from, int to, float[] five, int point) {
        double x = 0;
        double y = 0;
        for (int i = from; i <= to; i++) {
            x += p68[2 * i];
            y += p68[2 * i + 1];
        }
        five[2 * point] = (float) (x / (to - from + 1));
        five[2 * point + 1] = (float) (y / (to - from + 1));
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
        return "ultraface (" + FaceModels.DETECT + " + " + FaceModels.LANDMARK + " from npm " + FaceModels.FACEPLUGIN_PACKAGE
                + ", MIT package, weights' origin undocumented; score >= " + scoreThreshold + ")";
    }
}
