package org.privface.agent.synth;

import static org.privface.agent.synth.SyntheticFaces.CH;
import static org.privface.agent.synth.SyntheticFaces.CW;
import static org.privface.agent.synth.SyntheticFaces.CX;
import static org.privface.agent.synth.SyntheticFaces.CY;
import static org.privface.agent.synth.SyntheticFaces.SHIFT;
import static org.privface.agent.synth.SyntheticFaces.SUB;

import java.util.ArrayList;
import java.util.List;

import org.opencv.core.Core;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.MatOfPoint;
import org.opencv.core.Point;
import org.opencv.core.Rect;
import org.opencv.core.Scalar;
import org.opencv.core.Size;
import org.opencv.imgproc.Imgproc;

/**
 * The sprite canvas {@link SyntheticFaces} draws a face on, and the geometry (sub-pixel polygon
 * points on the canvas) and soft painting and shading helpers the face drawing uses.
 */
final class SpriteCanvas {
    private SpriteCanvas() {
    }

    /** Premultiplied colour canvas plus coverage. */
    static final class Canvas {
        final Mat img = new Mat(CH, CW, CvType.CV_32FC3, new Scalar(0, 0, 0));
        final Mat alpha = new Mat(CH, CW, CvType.CV_32FC1, new Scalar(0));
        Scalar skinTone;

        void release() {
            img.release();
            alpha.release();
        }
    }

    // ------------------------------------------------------------------ geometry

    /** Canvas point from face-centred coordinates. */
    static Point pt(double x, double y) {
        return new Point(CX + x, CY + y);
    }

    /** Canvas point already in canvas coordinates. */
    static Point pt2(double x, double y) {
        return new Point(x, y);
    }

    static Point fp(double x, double y) {
        return new Point((CX + x) * SUB, (CY + y) * SUB);
    }

    static List<Point> ellipsePts(double cx, double cy, double ax, double ay, double angDeg, int n) {
        List<Point> p = new ArrayList<>();
        double th = Math.toRadians(angDeg);
        for (int i = 0; i < n; i++) {
            double t = 2 * Math.PI * i / n;
            double x = ax * Math.cos(t), y = ay * Math.sin(t);
            p.add(pt(cx + x * Math.cos(th) - y * Math.sin(th), cy + x * Math.sin(th) + y * Math.cos(th)));
        }
        return p;
    }

    static List<Point> arc(double cx, double cy, double ax, double ay, double fromDeg, double toDeg, int n) {
        List<Point> p = new ArrayList<>();
        for (int i = 0; i <= n; i++) {
            double t = Math.toRadians(fromDeg + (toDeg - fromDeg) * i / n);
            p.add(pt(cx + ax * Math.cos(t), cy + ay * Math.sin(t)));
        }
        return p;
    }

    static List<Point> roundedRect(double cx, double cy, double hw, double hh) {
        List<Point> p = new ArrayList<>();
        double r = Math.min(hw, hh) * 0.45;
        double[][] corners = {
            {hw - r, hh - r, 0}, {-hw + r, hh - r, 90}, {-hw + r, -hh + r, 180}, {hw - r, -hh + r, 270}};
        for (double[] k : corners) {
            for (int i = 0; i <= 6; i++) {
                double t = Math.toRadians(k[2] + 90.0 * i / 6);
                p.add(pt(cx + k[0] + r * Math.cos(t), cy + k[1] + r * Math.sin(t)));
            }
        }
        return p;
    }

    static List<Point> rotate(List<Point> pts, double cx, double cy, double ang) {
        double c = Math.cos(ang), s = Math.sin(ang);
        double ox = CX + cx, oy = CY + cy;
        List<Point> out = new ArrayList<>(pts.size());
        for (Point p : pts) {
            double x = p.x - ox, y = p.y - oy;
            out.add(new Point(ox + x * c - y * s, oy + x * s + y * c));
        }
        return out;
    }

    static List<Point> scalePts(List<Point> pts, double sx, double sy, double ox, double oy) {
        List<Point> out = new ArrayList<>(pts.size());
        for (Point p : pts) {
            out.add(new Point(CX + (p.x - CX) * sx + ox, CY + (p.y - CY) * sy + oy));
        }
        return out;
    }

    static List<Point> concatRev(List<Point> first, List<Point> second) {
        List<Point> out = new ArrayList<>(first);
        for (int i = second.size() - 1; i >= 0; i--) {
            out.add(second.get(i));
        }
        return out;
    }

    static MatOfPoint mop(List<Point> pts) {
        Point[] arr = new Point[pts.size()];
        for (int i = 0; i < arr.length; i++) {
            Point p = pts.get(i);
            arr[i] = new Point(Math.round(p.x * SUB), Math.round(p.y * SUB));
        }
        return new MatOfPoint(arr);
    }

    static void fillPoly(Mat mask, List<Point> pts) {
        MatOfPoint m = mop(pts);
        Imgproc.fillPoly(mask, List.of(m), new Scalar(255), Imgproc.LINE_AA, SHIFT, new Point(0, 0));
        m.release();
    }

    static Mat polyMask(List<Point> pts) {
        Mat m = Mat.zeros(CH, CW, CvType.CV_8UC1);
        fillPoly(m, pts);
        return m;
    }

    // ------------------------------------------------------------------ painting

    static Scalar scale(Scalar s, double f) {
        return new Scalar(s.val[0] * f, s.val[1] * f, s.val[2] * f);
    }

    static Scalar blend(Scalar x, Scalar y, double wy) {
        return new Scalar(x.val[0] * (1 - wy) + y.val[0] * wy, x.val[1] * (1 - wy) + y.val[1] * wy,
                x.val[2] * (1 - wy) + y.val[2] * wy);
    }

    static Mat weight(Mat mask8, double sigma, double opacity) {
        Mat w = new Mat();
        mask8.convertTo(w, CvType.CV_32F, opacity / 255.0);
        if (sigma > 0) {
            Imgproc.GaussianBlur(w, w, new Size(0, 0), sigma);
        }
        return w;
    }

    static void multiply3(Mat img, Mat w1) {
        Mat w3 = new Mat();
        Core.merge(List.of(w1, w1, w1), w3);
        Core.multiply(img, w3, img);
        w3.release();
    }

    /** Paints a colour over the canvas through a soft mask; solid layers also add coverage. */
    static void paintMask(Canvas c, Mat mask8, double sigma, Scalar colour, double opacity, boolean solid) {
        Rect r = activeRect(mask8, sigma);
        if (r == null) {
            return;
        }
        // Work only on the shape's neighbourhood: a full-canvas pass per layer would dominate run time.
        Mat img = c.img.submat(r);
        Mat alpha = c.alpha.submat(r);
        Mat w = weight(mask8.submat(r), sigma, opacity);
        Mat diff = new Mat(r.size(), CvType.CV_32FC3, colour);
        if (solid) {
            // premultiplied "over": img = img*(1-w) + colour*w, alpha = alpha + (1-alpha)*w
            Core.subtract(diff, img, diff);
            multiply3(diff, w);
            Core.add(img, diff, img);
            Mat t = new Mat(w.size(), CvType.CV_32FC1, new Scalar(1));
            Core.subtract(t, alpha, t);
            Core.multiply(t, w, t);
            Core.add(alpha, t, alpha);
            t.release();
        } else {
            // detail layer inside covered areas: blend towards colour*alpha to stay premultiplied
            Mat a3 = new Mat();
            Core.merge(List.of(alpha, alpha, alpha), a3);
            Core.multiply(diff, a3, diff);
            a3.release();
            Core.subtract(diff, img, diff);
            multiply3(diff, w);
            Core.add(img, diff, img);
        }
        diff.release();
        w.release();
        img.release();
        alpha.release();
    }

    /** Bounding box of the mask's non-zero pixels, grown by the blur reach; null when empty. */
    static Rect activeRect(Mat mask8, double sigma) {
        Rect r = Imgproc.boundingRect(mask8);
        if (r.width <= 0 || r.height <= 0) {
            return null;
        }
        int m = (int) Math.ceil(3.5 * sigma) + 2;
        int x0 = Math.max(0, r.x - m), y0 = Math.max(0, r.y - m);
        int x1 = Math.min(mask8.cols(), r.x + r.width + m), y1 = Math.min(mask8.rows(), r.y + r.height + m);
        return new Rect(x0, y0, x1 - x0, y1 - y0);
    }

    static void paintPoly(Canvas c, List<Point> pts, double sigma, Scalar colour, double opacity,
            boolean solid) {
        Mat m = polyMask(pts);
        paintMask(c, m, sigma, colour, opacity, solid);
        m.release();
    }

    static void paintEllipse(Canvas c, double cx, double cy, double ax, double ay, double sigma,
            Scalar colour, double opacity) {
        paintPoly(c, ellipsePts(cx, cy, ax, ay, 0, 20), sigma, colour, opacity, false);
    }

    /** Multiplies brightness by {@code factor} inside a soft mask; consumes the mask. */
    static void shade(Canvas c, Mat mask8, double sigma, double factor) {
        Rect r = activeRect(mask8, sigma);
        if (r != null) {
            Mat img = c.img.submat(r);
            Mat g = weight(mask8.submat(r), sigma, 1.0);
            Core.multiply(g, new Scalar(factor - 1), g);
            Core.add(g, new Scalar(1), g);
            multiply3(img, g);
            g.release();
            img.release();
        }
        mask8.release();
    }

    static void shadeEllipse(Canvas c, double cx, double cy, double ax, double ay, double sigma,
            double factor) {
        shade(c, polyMask(ellipsePts(cx, cy, ax, ay, 0, 28)), sigma, factor);
    }

    /** Darkens a shape near its boundary so flat fills read as rounded volumes. */
    static void shadeMaskEdge(Canvas c, Mat mask8, double factor) {
        Mat eroded = new Mat();
        Imgproc.erode(mask8, eroded, Imgproc.getStructuringElement(Imgproc.MORPH_ELLIPSE, new Size(15, 15)));
        Mat edge = new Mat();
        Core.subtract(mask8, eroded, edge);
        eroded.release();
        shade(c, edge, 5, factor);
    }

    /** 1 + strength * (projection of (x,y) on the light direction) / radius, times gain, clamped. */
    static Mat rampMat(int w, int h, double cx, double cy, double radius, double angle, double strength,
            double gain) {
        float[] d = new float[w * h];
        double ca = Math.cos(angle), sa = Math.sin(angle);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                double p = ((x - cx) * ca + (y - cy) * sa) / radius;
                p = Math.max(-1.3, Math.min(1.3, p));
                d[y * w + x] = (float) (gain * (1 + strength * p));
            }
        }
        Mat m = new Mat(h, w, CvType.CV_32FC1);
        m.put(0, 0, d);
        return m;
    }
}
