package org.privface.agent.detect;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.opencv.core.Mat;
import org.opencv.core.MatOfRect;
import org.opencv.core.Rect;
import org.opencv.core.Size;
import org.opencv.imgproc.Imgproc;
import org.opencv.objdetect.CascadeClassifier;

/**
 * Finds faces with an OpenCV cascade. Not thread-safe (CascadeClassifier is not): one per camera
 * thread.
 */
public final class FaceDetector {
    public static final String DEFAULT_CASCADE = "haarcascades/haarcascade_frontalface_default.xml";

    private final CascadeClassifier classifier;
    private final double scaleFactor;
    private final int minNeighbors;
    private final int minFaceSize;

    public FaceDetector(String cascade, double scaleFactor, int minNeighbors, int minFaceSize) {
        if (!(scaleFactor > 1.0)) {
            throw new IllegalArgumentException("scaleFactor must be > 1, was " + scaleFactor);
        }
        if (minNeighbors < 0 || minFaceSize < 8) {
            throw new IllegalArgumentException("minNeighbors must be >= 0 and minFaceSize >= 8");
        }
        this.classifier = new CascadeClassifier(OpenCv.cascade(cascade).getAbsolutePath());
        if (classifier.empty()) {
            throw new IllegalStateException("cascade " + cascade + " failed to load");
        }
        this.scaleFactor = scaleFactor;
        this.minNeighbors = minNeighbors;
        this.minFaceSize = minFaceSize;
    }

    public static FaceDetector defaults() {
        return new FaceDetector(DEFAULT_CASCADE, 1.1, 4, 40);
    }

    /** Faces in a frame (BGR or grey), largest first. */
    public List<Rect> detect(Mat frame) {
        Mat grey = FaceCrops.grey(frame);
        Mat eq = new Mat();
        Imgproc.equalizeHist(grey, eq);
        MatOfRect found = new MatOfRect();
        classifier.detectMultiScale(eq, found, scaleFactor, minNeighbors, 0, new Size(minFaceSize, minFaceSize), new Size());
        List<Rect> faces = new ArrayList<>(found.toList());
        faces.sort(Comparator.comparingInt((Rect r) -> r.width * r.height).reversed());
        found.release();
        eq.release();
        if (grey != frame) {
            grey.release();
        }
        return faces;
    }
}
