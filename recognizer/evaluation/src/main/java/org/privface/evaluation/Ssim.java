package org.privface.evaluation;

import org.opencv.core.Core;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.Scalar;
import org.opencv.core.Size;
import org.opencv.imgproc.Imgproc;

/**
 * Mean SSIM (Wang et al. 2004, Gaussian window 11, σ 1.5, K1 0.01, K2 0.03) of two grey images in
 * [0,1]. Written out because the OpenCV builds here lack the contrib "quality" module; it follows
 * OpenCV's own SSIM tutorial step by step.
 */
public final class Ssim {
    private static final double C1 = 0.01 * 0.01;
    private static final double C2 = 0.03 * 0.03;

    private Ssim() {
    }

    public static double of(double[] a, double[] b, int width, int height) {
        Mat x = toMat(a, width, height);
        Mat y = toMat(b, width, height);
        Mat mx = blur(x);
        Mat my = blur(y);
        Mat mx2 = mx.mul(mx);
        Mat my2 = my.mul(my);
        Mat mxy = mx.mul(my);
        Mat sx2 = new Mat();
        Core.subtract(blur(x.mul(x)), mx2, sx2);
        Mat sy2 = new Mat();
        Core.subtract(blur(y.mul(y)), my2, sy2);
        Mat sxy = new Mat();
        Core.subtract(blur(x.mul(y)), mxy, sxy);
        Mat num1 = new Mat();
        Core.multiply(mxy, new Scalar(2), num1);
        Core.add(num1, new Scalar(C1), num1);
        Mat num2 = new Mat();
        Core.multiply(sxy, new Scalar(2), num2);
        Core.add(num2, new Scalar(C2), num2);
        Mat den1 = new Mat();
        Core.add(mx2, my2, den1);
        Core.add(den1, new Scalar(C1), den1);
        Mat den2 = new Mat();
        Core.add(sx2, sy2, den2);
        Core.add(den2, new Scalar(C2), den2);
        Mat map = new Mat();
        Core.divide(num1.mul(num2), den1.mul(den2), map);
        return Core.mean(map).val[0];
    }

    private static Mat blur(Mat m) {
        Mat out = new Mat();
        Imgproc.GaussianBlur(m, out, new Size(11, 11), 1.5);
        return out;
    }

    private static Mat toMat(double[] px, int width, int height) {
        Mat m = new Mat(height, width, CvType.CV_64FC1);
        m.put(0, 0, px);
        return m;
    }
}
