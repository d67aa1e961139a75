package org.privface.agent.detect;

import java.util.Optional;

import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.opencv.core.Size;
import org.opencv.imgproc.Imgproc;

/**
 * Turns a detection into a fixed-size grey face vector: 47 wide by 62 high for PEEP (the
 * resolution its paper uses on LFW), 64×64 for RDP (a power of two, so every Haar level
 * divides it). Pixels stay in memory only.
 */
public final class FaceCrops {
    public static final int WIDTH = 47;
    public static final int HEIGHT = 62;

    /** A crop size in pixels. */
    public record Shape(int width, int height) {
        public static final Shape PEEP = new Shape(WIDTH, HEIGHT);
        public static final Shape RDP = new Shape(64, 64);

        public int pixels() {
            return width * height;
        }
    }

    private FaceCrops() {
    }

    public static Optional<double[]> crop(Mat frame, Rect face) {
        return crop(frame, face, Shape.PEEP);
    }

    /**
     * Crops a face box, stretched vertically to the shape's aspect ratio, then grey, resizes and
     * equalizes it. Empty when the box does not fit inside the frame, or is empty: a clipped face
     * would be a different face to the basis, so it is dropped rather than published as garbage.
     */
    public static Optional<double[]> crop(Mat frame, Rect face, Shape shape) {
        // In long arithmetic: a box near Integer.MAX_VALUE must not wrap round to look inside.
        long h = Math.round(face.width * (double) shape.height() / shape.width());
        long y = (long) face.y + face.height / 2 - h / 2;
        if (face.width < 1 || h < 1 || face.x < 0 || y < 0 || (long) face.x + face.width > frame.cols()
                || y + h > frame.rows()) {
            return Optional.empty();
        }
        Rect box = new Rect(face.x, (int) y, face.width, (int) h);
        Mat grey = grey(frame);
        Mat roi = grey.submat(box);
        Mat small = new Mat();
        Imgproc.resize(roi, small, new Size(shape.width(), shape.height()), 0, 0, Imgproc.INTER_AREA);
        double[] v = toUnitPixels(small, shape);
        small.release();
        roi.release();
        if (grey != frame) {
            grey.release();
        }
        return Optional.of(v);
    }

    public static double[] toUnitPixels(Mat grey8) {
        return toUnitPixels(grey8, Shape.PEEP);
    }

    /** An 8-bit grey image of exactly the shape's size, equalized, as row-major pixels in [0,1]. */
    public static double[] toUnitPixels(Mat grey8, Shape shape) {
        if (grey8.cols() != shape.width() || grey8.rows() != shape.height() || grey8.type() != CvType.CV_8UC1) {
            throw new IllegalArgumentException("expected an 8-bit grey " + shape.width() + "x" + shape.height() + " image");
        }
        Mat eq = new Mat();
        Imgproc.equalizeHist(grey8, eq);
        byte[] raw = new byte[shape.pixels()];
        eq.get(0, 0, raw);
        eq.release();
        double[] v = new double[raw.length];
        for (int i = 0; i < raw.length; i++) {
            v[i] = (raw[i] & 0xff) / 255.0;
        }
        return v;
    }

    /** Grey version of a frame; returns the frame itself when it is already grey. */
    public static Mat grey(Mat frame) {
        if (frame.channels() == 1) {
            return frame;
        }
        Mat grey = new Mat();
        Imgproc.cvtColor(frame, grey, frame.channels() == 4 ? Imgproc.COLOR_BGRA2GRAY : Imgproc.COLOR_BGR2GRAY);
        return grey;
    }

    /** Resizes an arbitrary grey crop to the shape, pixels in [0,1]; used by dataset loaders. */
    public static double[] resizeToUnitPixels(Mat grey8, Shape shape) {
        Mat small = new Mat();
        Imgproc.resize(grey8, small, new Size(shape.width(), shape.height()), 0, 0, Imgproc.INTER_AREA);
        double[] v = toUnitPixels(small, shape);
        small.release();
        return v;
    }
}
