package org.privface.agent.synth;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

import org.bytedeco.javacpp.Loader;
import org.opencv.core.Core;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.MatOfInt;
import org.opencv.core.MatOfPoint;
import org.opencv.core.Point;
import org.opencv.core.Rect;
import org.opencv.core.Scalar;
import org.opencv.core.Size;
import org.opencv.imgcodecs.Imgcodecs;
import org.opencv.imgproc.Imgproc;
import org.opencv.objdetect.CascadeClassifier;
import org.opencv.videoio.VideoWriter;
import org.opencv.videoio.Videoio;

/**
 * Generator of synthetic, parametric face images. No real person is depicted: every face is drawn
 * from OpenCV primitives and a seeded parameter vector, so the output can be committed and shared.
 *
 * <p>An {@link Identity} fixes face geometry and appearance; a {@link Variation} fixes everything
 * that changes between two photos of the same person (pose, framing, lighting, expression,
 * clothing, background, sensor noise). Rendering is deterministic for a given pair.
 *
 * <p>Faces are drawn with soft shading (dark eye sockets, bright nose bridge and cheeks, dark mouth)
 * because OpenCV's Haar frontal-face cascade keys on those luminance contrasts, not on outlines.
 */
public final class SyntheticFaces {

    public static final int WIDTH = 320;
    public static final int HEIGHT = 240;
    public static final long DEFAULT_SEED = 0x5EEDFACEL;
    public static final int IDENTITIES = 6;
    public static final int ENROLL_PER_ID = 12;
    public static final int QUERY_PER_ID = 8;
    public static final int VIDEO_FRAMES = 40;
    public static final double VIDEO_FPS = 10.0;
    /** Classpath location inside the JavaCPP OpenCV jar, relative to its platform folder. */
    public static final String CASCADE = "share/opencv4/haarcascades/haarcascade_frontalface_default.xml";

    /** Which image set a variation is drawn for; each set gets its own random stream. */
    public enum ImageSet { ENROLL, QUERY, VIDEO, TEST }

    // Faces are drawn large on a sprite canvas, then blurred and warped down into the frame.
    private static final int CW = 400;
    private static final int CH = 440;
    private static final double CX = 200;
    private static final double CY = 170;
    private static final double B = 84; // half-height of the face oval on the canvas
    private static final int SHIFT = 3; // fixed-point bits for sub-pixel polygon vertices
    private static final double SUB = 1 << SHIFT;

    private static final double[][] SKIN = { // BGR
        {185, 205, 238}, {160, 188, 228}, {135, 168, 210}, {112, 150, 192},
        {90, 126, 172}, {70, 102, 150}, {58, 84, 128}};
    private static final double[][] HAIR = {
        {22, 22, 28}, {30, 45, 72}, {45, 78, 120}, {105, 165, 205}, {150, 150, 155}, {40, 70, 150}};
    private static final String[] HAIR_STYLES = {"short", "long", "buzz", "fringe", "curly", "side", "bald"};

    private static volatile boolean loaded;

    private SyntheticFaces() {
    }

    /**
     * Appearance of one synthetic person. Lengths are fractions of the face half-height {@code b}
     * or half-width {@code a}; colours are BGR. {@code hairStyle} indexes short, long, buzz, fringe,
     * curly, side, bald; {@code beard} is 0 none, 1 stubble, 2 full, 3 moustache, 4 goatee;
     * {@code glasses} is 0 none, 1 round, 2 rectangular.
     */
    public record Identity(
            int index, String name,
            double skinB, double skinG, double skinR,
            double faceWidth, double jaw, double chinPow,
            double eyeY, double eyeSep, double eyeW, double eyeH, double eyeTilt,
            double irisB, double irisG, double irisR,
            double browThick, double browArch, double browTilt, double browGap,
            double noseLen, double noseW,
            double mouthY, double mouthW, double lipThick, double lipRed,
            int hairStyle, double hairB, double hairG, double hairR, double hairline, double hairVolume,
            int beard, int glasses, double earSize) {
    }

    /**
     * Per-image conditions. {@code faceH} is the face-oval height in frame pixels, {@code cx,cy}
     * its centre; {@code yaw} in [-1,1] shifts features sideways as a small head turn would.
     * When a variation serves as the scene of a multi-face frame, only the lighting, scene and
     * noise fields are read.
     */
    public record Variation(
            double rollDeg, double yaw, double faceH, double cx, double cy,
            double lightAngle, double lightStrength, double faceShading, double gain, double gamma,
            double smile, double mouthOpen, double eyeOpen, double browRaise,
            double shirtB, double shirtG, double shirtR,
            long sceneSeed, double noiseSigma, long noiseSeed) {

        /** Same conditions with the face moved; used to animate a walk past the camera. */
        public Variation at(double newCx, double newCy, double newFaceH) {
            return new Variation(rollDeg, yaw, newFaceH, newCx, newCy, lightAngle, lightStrength, faceShading,
                    gain, gamma, smile, mouthOpen, eyeOpen, browRaise, shirtB, shirtG, shirtR,
                    sceneSeed, noiseSigma, noiseSeed);
        }
    }

    /** One face placed in a frame. */
    public record Placement(Identity identity, Variation pose) {
    }

    // ------------------------------------------------------------------ natives and cascade

    /** Loads the OpenCV natives bundled by JavaCPP; safe to call repeatedly. */
    public static void loadNatives() {
        if (!loaded) {
            synchronized (SyntheticFaces.class) {
                if (!loaded) {
                    Loader.load(org.bytedeco.opencv.opencv_java.class);
                    loaded = true;
                }
            }
        }
    }

    /** The stock frontal-face Haar cascade, extracted from the JavaCPP jar into its cache. */
    public static CascadeClassifier frontalFaceCascade() {
        loadNatives();
        try {
            // e.g. /org/bytedeco/opencv/linux-x86_64/share/opencv4/haarcascades/...
            String resource = "/org/bytedeco/opencv/" + Loader.getPlatform() + "/" + CASCADE;
            File file = Loader.cacheResource(resource);
            if (file == null) {
                throw new IllegalStateException("no cascade on the classpath at " + resource);
            }
            String path = file.getAbsolutePath();
            CascadeClassifier c = new CascadeClassifier(path);
            if (c.empty()) {
                throw new IllegalStateException("cascade failed to load: " + path);
            }
            return c;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    // ------------------------------------------------------------------ parameter sampling

    /** Identity {@code index} of the population defined by {@code seed}. */
    public static Identity identity(long seed, int index) {
        SplittableRandom r = new SplittableRandom(mix(seed, 0x1D, index));
        // Categorical traits cycle with the index so that the first few identities all differ.
        long off = mix(seed, 0xCA7, 0);
        int style = Math.floorMod(index + off, HAIR_STYLES.length);
        int skin = Math.floorMod(index * 3L + (off >>> 8), SKIN.length);
        double[] s = SKIN[skin];
        // Only hair clearly darker than the skin is eligible: lighter hair defeats the cascade's
        // forehead features, and hair of skin-like luma vanishes in grey and stops telling people apart.
        List<double[]> eligible = new ArrayList<>();
        for (double[] h : HAIR) {
            if (luma(h) < 0.6 * luma(s)) {
                eligible.add(h);
            }
        }
        double[] h = eligible.get(Math.floorMod(index * 5L + (off >>> 16), eligible.size()));
        double jitter = r.nextDouble(-3, 3);
        String name = "person-" + label(index);
        int beard = r.nextDouble() < 0.45 ? 1 + r.nextInt(4) : 0;
        int glasses = r.nextDouble() < 0.3 ? 1 + r.nextInt(2) : 0;
        double hairline = switch (HAIR_STYLES[style]) {
            case "fringe" -> r.nextDouble(-0.58, -0.50);
            case "buzz", "bald" -> r.nextDouble(-0.80, -0.70);
            default -> r.nextDouble(-0.72, -0.60);
        };
        double faceWidth = r.nextDouble(0.70, 0.81);
        double jaw = r.nextDouble(0.08, 0.30);
        double chinPow = r.nextDouble(1.7, 2.6);
        double eyeY = r.nextDouble(-0.06, 0.05);
        double eyeSep = r.nextDouble(0.45, 0.52);
        double eyeW = r.nextDouble(0.20, 0.25);
        double eyeH = r.nextDouble(0.38, 0.52);
        double eyeTilt = r.nextDouble(-0.12, 0.12);
        double irisB = r.nextDouble(20, 110), irisG = r.nextDouble(30, 100), irisR = r.nextDouble(20, 90);
        double browThick = r.nextDouble(0.045, 0.085);
        double browArch = r.nextDouble(0.0, 0.5);
        double browTilt = r.nextDouble(-0.15, 0.2);
        double browGap = r.nextDouble(0.15, 0.22);
        double noseLen = r.nextDouble(0.32, 0.44);
        double noseW = r.nextDouble(0.17, 0.27);
        double mouthY = r.nextDouble(0.58, 0.68);
        // A nose tip crowding the mouth merges the two dark bands the cascade tells apart.
        noseLen = Math.min(noseLen, mouthY - eyeY - 0.22);
        double mouthW = r.nextDouble(0.30, 0.42);
        double lipThick = r.nextDouble(0.035, 0.065);
        double lipRed = r.nextDouble(0.0, 1.0);
        double hairVolume = r.nextDouble(0, 1);
        double earSize = r.nextDouble(0.8, 1.2);
        return new Identity(index, name, s[0] + jitter, s[1] + jitter, s[2] + jitter,
                faceWidth, jaw, chinPow, eyeY, eyeSep, eyeW, eyeH, eyeTilt, irisB, irisG, irisR,
                browThick, browArch, browTilt, browGap, noseLen, noseW, mouthY, mouthW, lipThick, lipRed,
                style, h[0], h[1], h[2], hairline, hairVolume, beard, glasses, earSize);
    }

    /** Random per-image conditions for image {@code image} of {@code id} in the given set. */
    public static Variation variation(long seed, Identity id, ImageSet set, int image) {
        SplittableRandom r = new SplittableRandom(mix(seed, 0x7A + set.ordinal(), id.index(), image));
        double faceH = r.nextDouble(92, 138);
        double halfW = faceH * 0.5 * id.faceWidth();
        double cx = r.nextDouble(halfW + 16, WIDTH - halfW - 16);
        double cy = r.nextDouble(faceH * 0.5 + 14, HEIGHT - faceH * 0.5 - 8);
        boolean open = r.nextDouble() < 0.35;
        // Lighting stays moderate: on raw pixels a global gain change outweighs most identity cues.
        return new Variation(
                r.nextDouble(-10, 10), r.nextDouble(-1, 1), faceH, cx, cy,
                r.nextDouble(0, 2 * Math.PI), r.nextDouble(0.0, 0.12), r.nextDouble(0.0, 0.12),
                r.nextDouble(0.95, 1.05), r.nextDouble(0.95, 1.06),
                r.nextDouble(-0.4, 1.0), open ? r.nextDouble(0.15, 0.6) : 0.0,
                r.nextDouble(0.65, 1.1), r.nextDouble(-0.5, 1.0),
                r.nextDouble(30, 200), r.nextDouble(30, 200), r.nextDouble(30, 200),
                mix(seed, 0x5CE, r.nextInt(4)), r.nextDouble(0.4, 0.9), r.nextLong());
    }

    /** Centred, frontal, neutral conditions; handy for unit tests. */
    public static Variation neutral(long sceneSeed) {
        return new Variation(0, 0, 116, WIDTH / 2.0, HEIGHT / 2.0, 0, 0, 0, 1, 1, 0.2, 0, 1, 0,
                120, 90, 60, sceneSeed, 0.6, sceneSeed + 1);
    }

    private static double luma(Scalar bgr) {
        return luma(bgr.val);
    }

    private static double luma(double[] bgr) {
        return 0.114 * bgr[0] + 0.587 * bgr[1] + 0.299 * bgr[2];
    }

    private static String label(int index) {
        StringBuilder sb = new StringBuilder();
        int i = index;
        do {
            sb.insert(0, (char) ('a' + i % 26));
            i = i / 26 - 1;
        } while (i >= 0);
        return sb.toString();
    }

    /** SplitMix64-style combination of seed components. */
    static long mix(long... parts) {
        long h = 0x9E3779B97F4A7C15L;
        for (long p : parts) {
            h ^= p + 0x9E3779B97F4A7C15L + (h << 6) + (h >>> 2);
            h = (h ^ (h >>> 30)) * 0xBF58476D1CE4E5B9L;
            h = (h ^ (h >>> 27)) * 0x94D049BB133111EBL;
            h ^= h >>> 31;
        }
        return h;
    }

    // ------------------------------------------------------------------ public rendering API

    /** Renders one face in a camera-like 320x240 BGR frame (CV_8UC3). */
    public static Mat renderFrame(Identity id, Variation v) {
        return renderFrame(v, List.of(new Placement(id, v)));
    }

    /** Renders one face as a 320x240 greyscale frame (CV_8UC1). */
    public static Mat renderGray(Identity id, Variation v) {
        Mat bgr = renderFrame(id, v);
        Mat g = new Mat();
        Imgproc.cvtColor(bgr, g, Imgproc.COLOR_BGR2GRAY);
        bgr.release();
        return g;
    }

    /**
     * Renders any number of faces (possibly none) into one frame. Background, lighting and noise
     * come from {@code scene}; each placement contributes its own pose and expression.
     */
    public static Mat renderFrame(Variation scene, List<Placement> faces) {
        loadNatives();
        Mat frame = background(scene.sceneSeed());
        for (Placement p : faces) {
            compositeFace(frame, p.identity(), p.pose(), scene);
        }
        Mat out = finish(frame, scene);
        frame.release();
        return out;
    }

    /** Axis-aligned bounds of the drawn face oval (forehead to chin, without hair) in the frame. */
    public static Rect faceBox(Identity id, Variation v) {
        double[] t = warpCoeffs(v);
        double a = B * id.faceWidth();
        double minX = Double.MAX_VALUE, minY = Double.MAX_VALUE, maxX = -Double.MAX_VALUE, maxY = -Double.MAX_VALUE;
        for (Point p : facePts(id, a, B)) {
            double x = t[0] * p.x + t[1] * p.y + t[2];
            double y = t[3] * p.x + t[4] * p.y + t[5];
            minX = Math.min(minX, x);
            maxX = Math.max(maxX, x);
            minY = Math.min(minY, y);
            maxY = Math.max(maxY, y);
        }
        return new Rect((int) Math.round(minX), (int) Math.round(minY),
                (int) Math.round(maxX - minX), (int) Math.round(maxY - minY));
    }

    // ------------------------------------------------------------------ scene

    /**
     * Room-like background: a wall with gentle blotches, a floor, a door and a few flat-coloured
     * objects (window, cabinet, poster, sideboard). The objects spread the grey-level histogram as a
     * real room does; on a plain wall, histogram equalisation (which the agent's detector applies)
     * squeezes the face into a few grey levels. Flat areas also keep the PNGs small.
     */
    static Mat background(long sceneSeed) {
        SplittableRandom r = new SplittableRandom(sceneSeed);
        int gh = 3, gw = 4;
        Mat small = new Mat(gh, gw, CvType.CV_32FC3);
        double grey = r.nextDouble(90, 190);
        double baseB = grey + r.nextDouble(-18, 18);
        double baseG = grey + r.nextDouble(-18, 18);
        double baseR = grey + r.nextDouble(-18, 18);
        float[] px = new float[gh * gw * 3];
        for (int i = 0; i < gh * gw; i++) {
            double d = r.nextDouble(-10, 10);
            px[3 * i] = (float) (baseB + d + r.nextDouble(-4, 4));
            px[3 * i + 1] = (float) (baseG + d + r.nextDouble(-4, 4));
            px[3 * i + 2] = (float) (baseR + d + r.nextDouble(-4, 4));
        }
        small.put(0, 0, px);
        Mat bg = new Mat();
        Imgproc.resize(small, bg, new Size(WIDTH, HEIGHT), 0, 0, Imgproc.INTER_CUBIC);
        small.release();
        int floorY = (int) r.nextDouble(HEIGHT * 0.72, HEIGHT * 0.95);
        double f = r.nextDouble(0.55, 0.85);
        Mat floor = bg.submat(floorY, HEIGHT, 0, WIDTH);
        Core.multiply(floor, new Scalar(f, f, f), floor);
        floor.release();
        int doorX = (int) r.nextDouble(0, WIDTH - 60);
        int doorW = (int) r.nextDouble(50, 90);
        int doorTop = (int) r.nextDouble(10, 40);
        double dc = r.nextDouble(-35, 35);
        Imgproc.rectangle(bg, new Point(doorX, doorTop), new Point(doorX + doorW, floorY),
                new Scalar(baseB + dc, baseG + dc * 0.9, baseR + dc * 0.8), -1);
        Imgproc.rectangle(bg, new Point(doorX, doorTop), new Point(doorX + doorW, floorY),
                new Scalar(baseB * 0.6, baseG * 0.6, baseR * 0.6), 3);
        int items = 3 + r.nextInt(3);
        for (int k = 0; k < items; k++) {
            int kind = r.nextInt(4); // no round shapes: a blob on a box reads as a head to the cascade
            if (kind == 0) { // window: bright pane with darker bars
                int w = (int) r.nextDouble(50, 110), h = (int) r.nextDouble(40, 90);
                int x = (int) r.nextDouble(-20, WIDTH - w + 20), y = (int) r.nextDouble(5, 60);
                double v = r.nextDouble(215, 250);
                Imgproc.rectangle(bg, new Point(x, y), new Point(x + w, y + h), new Scalar(v, v, v * 0.97), -1);
                Scalar bar = new Scalar(grey * 0.5, grey * 0.5, grey * 0.5);
                Imgproc.rectangle(bg, new Point(x, y), new Point(x + w, y + h), bar, 4);
                Imgproc.line(bg, new Point(x + w / 2.0, y), new Point(x + w / 2.0, y + h), bar, 3);
            } else if (kind == 1) { // dark cabinet or shelf standing on the floor
                int w = (int) r.nextDouble(60, 140), h = (int) r.nextDouble(50, 130);
                int x = (int) r.nextDouble(-30, WIDTH - w + 30);
                double v = r.nextDouble(25, 75);
                Scalar col = new Scalar(v * r.nextDouble(0.8, 1.1), v, v * r.nextDouble(0.9, 1.3));
                Imgproc.rectangle(bg, new Point(x, floorY - h), new Point(x + w, floorY + 6), col, -1);
                Imgproc.line(bg, new Point(x, floorY - h / 2.0), new Point(x + w, floorY - h / 2.0),
                        scale(col, 1.6), 2);
            } else if (kind == 2) { // poster in a random colour
                int w = (int) r.nextDouble(30, 70), h = (int) r.nextDouble(40, 90);
                int x = (int) r.nextDouble(0, WIDTH - w), y = (int) r.nextDouble(15, 90);
                Imgproc.rectangle(bg, new Point(x, y), new Point(x + w, y + h),
                        new Scalar(r.nextDouble(30, 230), r.nextDouble(30, 230), r.nextDouble(30, 230)), -1);
            } else { // low sideboard along the wall
                int w = (int) r.nextDouble(80, 180), h = (int) r.nextDouble(20, 45);
                int x = (int) r.nextDouble(-40, WIDTH - w + 40);
                double v = r.nextDouble(60, 140);
                Imgproc.rectangle(bg, new Point(x, floorY - h), new Point(x + w, floorY + 4),
                        new Scalar(v * 0.8, v * 0.9, v), -1);
            }
        }
        Imgproc.GaussianBlur(bg, bg, new Size(0, 0), 1.5);
        return bg;
    }

    /** Scene lighting, gain/gamma and sensor noise; converts the float frame to CV_8UC3. */
    private static Mat finish(Mat frame, Variation v) {
        // Directional brightness gradient across the frame.
        Mat ramp = rampMat(WIDTH, HEIGHT, WIDTH / 2.0, HEIGHT / 2.0, WIDTH / 2.0, v.lightAngle(),
                v.lightStrength(), v.gain());
        multiply3(frame, ramp);
        ramp.release();
        Core.multiply(frame, new Scalar(1 / 255.0, 1 / 255.0, 1 / 255.0), frame);
        Core.max(frame, new Scalar(0, 0, 0), frame);
        Core.min(frame, new Scalar(1, 1, 1), frame);
        Core.pow(frame, v.gamma(), frame);
        Core.multiply(frame, new Scalar(255, 255, 255), frame);
        // Luminance noise, generated in Java so it is reproducible from the seed. It is drawn at half
        // resolution (grain about 2 px, like demosaiced sensor noise): full-resolution noise would
        // roughly double the PNG sizes of the committed data set.
        SplittableRandom r = new SplittableRandom(v.noiseSeed());
        int nw = WIDTH / 2, nh = HEIGHT / 2;
        float[] n = new float[nw * nh];
        for (int i = 0; i < n.length; i++) {
            n[i] = (float) (r.nextGaussian() * v.noiseSigma());
        }
        Mat noise = new Mat(nh, nw, CvType.CV_32FC1);
        noise.put(0, 0, n);
        Imgproc.resize(noise, noise, new Size(WIDTH, HEIGHT), 0, 0, Imgproc.INTER_LINEAR);
        Mat noise3 = new Mat();
        Core.merge(List.of(noise, noise, noise), noise3);
        Core.add(frame, noise3, frame);
        noise.release();
        noise3.release();
        Mat out = new Mat();
        frame.convertTo(out, CvType.CV_8UC3);
        return out;
    }

    // ------------------------------------------------------------------ face compositing

    /** Canvas-to-frame affine map, row-major 2x3: q = T + s * R(roll) * diag(sx, 1) * (p - C). */
    private static double[] warpCoeffs(Variation v) {
        double s = v.faceH() / (2 * B);
        double sx = 1 - 0.06 * Math.abs(v.yaw()); // a turned head looks narrower
        double th = Math.toRadians(v.rollDeg());
        double c = Math.cos(th), sn = Math.sin(th);
        double m00 = s * c * sx, m01 = -s * sn, m10 = s * sn * sx, m11 = s * c;
        return new double[] {m00, m01, v.cx() - m00 * CX - m01 * CY, m10, m11, v.cy() - m10 * CX - m11 * CY};
    }

    private static Mat warpMatrix(Variation v) {
        Mat m = new Mat(2, 3, CvType.CV_64FC1);
        m.put(0, 0, warpCoeffs(v));
        return m;
    }

    private static void compositeFace(Mat frame, Identity id, Variation pose, Variation scene) {
        Canvas cv = drawSprite(id, pose, scene);
        double s = pose.faceH() / (2 * B);
        // Anti-alias before shrinking, plus a little optical softness.
        double sigma = 0.75 / s;
        Imgproc.GaussianBlur(cv.img, cv.img, new Size(0, 0), sigma);
        Imgproc.GaussianBlur(cv.alpha, cv.alpha, new Size(0, 0), sigma);
        Mat m = warpMatrix(pose);
        Mat col = new Mat();
        Mat alpha = new Mat();
        Size fs = new Size(WIDTH, HEIGHT);
        Imgproc.warpAffine(cv.img, col, m, fs, Imgproc.INTER_LINEAR, Core.BORDER_CONSTANT, new Scalar(0, 0, 0));
        Imgproc.warpAffine(cv.alpha, alpha, m, fs, Imgproc.INTER_LINEAR, Core.BORDER_CONSTANT, new Scalar(0));
        cv.release();
        m.release();
        // Canvas colours are premultiplied by alpha: frame = frame * (1 - alpha) + col.
        Mat inv = new Mat(alpha.size(), CvType.CV_32FC1, new Scalar(1));
        Core.subtract(inv, alpha, inv);
        multiply3(frame, inv);
        Core.add(frame, col, frame);
        inv.release();
        col.release();
        alpha.release();
    }

    /** Premultiplied colour canvas plus coverage. */
    private static final class Canvas {
        final Mat img = new Mat(CH, CW, CvType.CV_32FC3, new Scalar(0, 0, 0));
        final Mat alpha = new Mat(CH, CW, CvType.CV_32FC1, new Scalar(0));
        Scalar skinTone;

        void release() {
            img.release();
            alpha.release();
        }
    }

    private static Canvas drawSprite(Identity id, Variation v, Variation scene) {
        Canvas c = new Canvas();
        Scalar skin = new Scalar(id.skinB(), id.skinG(), id.skinR());
        c.skinTone = skin;
        double b = B;
        double a = B * id.faceWidth();
        double yaw = v.yaw();
        double dx = yaw * 0.10 * a; // feature shift for a small head turn
        Scalar hair = new Scalar(id.hairB(), id.hairG(), id.hairR());
        String style = HAIR_STYLES[id.hairStyle()];
        List<Point> face = facePts(id, a, b);

        double eyeY = id.eyeY() * b;
        double browY = eyeY - id.browGap() * b - v.browRaise() * 0.04 * b;
        double noseY = eyeY + id.noseLen() * b;
        double mouthY = id.mouthY() * b;

        // 1. hair behind the head
        if (style.equals("long")) {
            List<Point> back = new ArrayList<>();
            back.addAll(arc(0, -0.05 * b, a * 1.14, b * 1.02, 180, 360, 24));
            back.add(pt(a * 1.22, 0.9 * b));
            back.add(pt(a * 1.05, 1.30 * b));
            back.add(pt(-a * 1.05, 1.30 * b));
            back.add(pt(-a * 1.22, 0.9 * b));
            paintPoly(c, back, 2, hair, 1, true);
        }
        // 2. shirt / shoulders
        List<Point> torso = new ArrayList<>();
        torso.add(pt(-0.5 * a, 1.05 * b));
        torso.add(pt(0.5 * a, 1.05 * b));
        torso.addAll(arc(1.3 * a, 1.75 * b, 0.9 * a, 0.55 * b, 270, 360, 10));
        torso.add(pt(2.3 * a, (CH - CY) + 5));
        torso.add(pt(-2.3 * a, (CH - CY) + 5));
        torso.addAll(arc(-1.3 * a, 1.75 * b, 0.9 * a, 0.55 * b, 180, 270, 10));
        paintPoly(c, torso, 2, new Scalar(v.shirtB(), v.shirtG(), v.shirtR()), 1, true);
        // 3. neck, shadowed under the chin
        List<Point> neck = List.of(pt(-0.42 * a, 0.4 * b), pt(0.42 * a, 0.4 * b), pt(0.46 * a, 1.2 * b),
                pt(-0.46 * a, 1.2 * b));
        paintPoly(c, neck, 1.5, scale(skin, 0.88), 1, true);
        shadeEllipse(c, 0, 1.02 * b, 0.6 * a, 0.18 * b, 8, 0.7);
        // 4. ears
        for (int side = -1; side <= 1; side += 2) {
            double ex = side * a * 0.96 - dx * 0.6;
            double sz = id.earSize() * (1 - 0.15 * yaw * side);
            List<Point> ear = ellipsePts(ex, eyeY + 0.16 * b, 0.15 * a * sz, 0.24 * b * sz, 0, 24);
            paintPoly(c, ear, 1.5, scale(skin, 0.93), 1, true);
            shadeEllipse(c, ex, eyeY + 0.16 * b, 0.07 * a * sz, 0.14 * b * sz, 3, 0.8);
        }
        // 5. face oval and broad 3-D shading
        paintPoly(c, face, 1.2, skin, 1, true);
        Mat faceMask = polyMask(face);
        Mat inner = polyMask(scalePts(face, 0.78, 0.82, 0, -0.05 * b));
        Mat rim = new Mat();
        Core.subtract(faceMask, inner, rim);
        shade(c, rim, 12, 0.88);
        rim.release();
        inner.release();
        // Darker skin gets stronger relative shading, so that the absolute contrasts the cascade
        // measures (and which survive histogram equalisation) stay comparable to those of light skin.
        double dark = Math.max(0, Math.min(1, (200 - luma(skin)) / 100));
        // cheeks and forehead catch the light; this bright band under the eyes matters for Haar
        for (int side = -1; side <= 1; side += 2) {
            shadeEllipse(c, side * 0.45 * a + dx, eyeY + 0.18 * b, 0.28 * a, 0.12 * b, 9, 1.12 + 0.12 * dark);
        }
        shadeEllipse(c, dx * 0.5, -0.45 * b, 0.5 * a, 0.2 * b, 12, 1.06);
        // eye sockets: broad soft darkening covering brow to lower lid
        for (int side = -1; side <= 1; side += 2) {
            double ex = side * id.eyeSep() * a + dx;
            double top = browY - 0.02 * b;
            double bot = eyeY + 0.07 * b;
            shadeEllipse(c, ex - side * 0.1 * id.eyeW() * a, (top + bot) / 2,
                    id.eyeW() * a * 1.5, (bot - top) / 2, 5, 0.5 - 0.12 * dark);
        }
        // nose bridge highlight between the sockets, side shadows and tip
        double noseTipX = dx * 1.7;
        List<Point> bridge = List.of(pt(dx - 0.05 * a, browY), pt(dx + 0.05 * a, browY),
                pt(noseTipX + 0.07 * a, noseY - 0.05 * b), pt(noseTipX - 0.07 * a, noseY - 0.05 * b));
        shade(c, polyMask(bridge), 5, 1.16 + 0.14 * dark);
        for (int side = -1; side <= 1; side += 2) {
            double shadowStrength = 0.84 - 0.06 * yaw * side;
            List<Point> ns = List.of(pt(dx + side * 0.09 * a, eyeY + 0.02 * b),
                    pt(dx + side * 0.13 * a, eyeY + 0.02 * b),
                    pt(noseTipX + side * (id.noseW() * a + 0.02 * a), noseY - 0.02 * b),
                    pt(noseTipX + side * (id.noseW() * a - 0.04 * a), noseY - 0.04 * b));
            shade(c, polyMask(ns), 3.5, shadowStrength);
        }
        shadeEllipse(c, noseTipX, noseY + 0.06 * b, id.noseW() * a * 1.1, 0.05 * b, 4, 0.80);
        shadeEllipse(c, noseTipX, noseY - 0.05 * b, id.noseW() * a * 0.55, 0.06 * b, 4, 1.12);
        // light from one side darkens the other half of the face
        Mat side = rampMat(CW, CH, CX, CY, a, scene.lightAngle(), v.faceShading(), 1.0);
        multiply3(c.img, side);
        side.release();

        // 6. beard (before the mouth, which is painted over it)
        if (id.beard() > 0) {
            drawBeard(c, id, faceMask, a, b, noseY, mouthY, dx, hair);
        }
        faceMask.release();

        // 7. nostrils
        for (int sd = -1; sd <= 1; sd += 2) {
            double nx = noseTipX + sd * id.noseW() * a * 0.5;
            shadeEllipse(c, nx, noseY + 0.015 * b, id.noseW() * a * 0.28, 0.028 * b, 1.5, 0.45);
        }

        // 8. eyes
        Scalar iris = new Scalar(id.irisB(), id.irisG(), id.irisR());
        for (int sd = -1; sd <= 1; sd += 2) {
            double ex = sd * id.eyeSep() * a + dx;
            double ew = id.eyeW() * a * (1 + 0.08 * yaw * sd);
            double eh = ew * id.eyeH() * v.eyeOpen();
            double tilt = -sd * id.eyeTilt();
            drawEye(c, ex, eyeY, ew, eh, tilt, iris, yaw, skin);
        }

        // 9. eyebrows
        Scalar brow = blend(hair, scale(skin, 0.35), 0.5); // brows stay darker than skin even for blond hair
        for (int sd = -1; sd <= 1; sd += 2) {
            double ex = sd * id.eyeSep() * a + dx;
            double ew = id.eyeW() * a * 1.25;
            List<Point> top = new ArrayList<>();
            List<Point> bottom = new ArrayList<>();
            int n = 16;
            for (int i = 0; i <= n; i++) {
                double t = -1 + 2.0 * i / n; // -1 inner .. 1 outer
                double x = ex + sd * t * ew;
                double yc = browY - id.browArch() * 0.07 * b * (1 - t * t) - id.browTilt() * 0.05 * b * t
                        - v.browRaise() * 0.015 * b * (1 - t);
                double th = id.browThick() * b * (t < 0 ? 1.0 : 1.0 - 0.6 * t);
                top.add(pt(x, yc - th * 0.5));
                bottom.add(0, pt(x, yc + th * 0.5));
            }
            top.addAll(bottom);
            paintPoly(c, top, 1.8, brow, 0.92, false);
        }

        // 10. mouth
        drawMouth(c, id, v, mouthY, dx * 1.2, a, b, skin);

        // 11. hair in front
        drawHair(c, id, style, a, b, hair);

        // 12. glasses
        if (id.glasses() > 0) {
            drawGlasses(c, id, a, b, eyeY, dx);
        }
        return c;
    }

    private static void drawEye(Canvas c, double ex, double ey, double ew, double eh, double tilt,
            Scalar iris, double yaw, Scalar skin) {
        List<Point> eye = new ArrayList<>();
        int n = 24;
        for (int i = 0; i <= n; i++) { // upper lid
            double t = -1 + 2.0 * i / n;
            eye.add(pt(ex + t * ew, ey - eh * Math.pow(1 - t * t, 0.7)));
        }
        for (int i = n - 1; i > 0; i--) { // lower lid, flatter
            double t = -1 + 2.0 * i / n;
            eye.add(pt(ex + t * ew, ey + eh * 0.65 * Math.pow(1 - t * t, 0.9)));
        }
        eye = rotate(eye, ex, ey, tilt);
        Mat eyeMask = polyMask(eye);
        // sclera is off-white and shaded, never brighter than the skin highlight
        Scalar sclera = blend(new Scalar(205, 210, 215), skin, 0.45);
        paintMask(c, eyeMask, 0.8, sclera, 0.95, false);
        double ir = ew * 0.55;
        double ix = ex + yaw * 0.12 * ew;
        Mat irisMask = Mat.zeros(CH, CW, CvType.CV_8UC1);
        fillPoly(irisMask, ellipsePts(ix, ey, ir, ir, 0, 24));
        Core.bitwise_and(irisMask, eyeMask, irisMask);
        paintMask(c, irisMask, 0.8, iris, 1, false);
        Mat pupil = Mat.zeros(CH, CW, CvType.CV_8UC1);
        fillPoly(pupil, ellipsePts(ix, ey, ir * 0.48, ir * 0.48, 0, 16));
        Core.bitwise_and(pupil, eyeMask, pupil);
        paintMask(c, pupil, 0.8, new Scalar(12, 12, 14), 1, false);
        pupil.release();
        irisMask.release();
        shadeEllipse(c, ex, ey - eh * 0.5, ew, eh * 0.7, 2, 0.7); // lid shadow on the eyeball
        eyeMask.release();
        paintEllipse(c, ix + ir * 0.3, ey - ir * 0.3, ir * 0.16, ir * 0.16, 0.8, new Scalar(245, 245, 245), 0.9);
        // upper lid line with lashes, thicker toward the outer corner
        List<Point> lid = new ArrayList<>();
        for (int i = 0; i <= n; i++) {
            double t = -1 + 2.0 * i / n;
            lid.add(pt(ex + t * ew * 1.05, ey - eh * Math.pow(1 - t * t, 0.7) - 1.5));
        }
        for (int i = n; i >= 0; i--) {
            double t = -1 + 2.0 * i / n;
            lid.add(pt(ex + t * ew * 1.05, ey - eh * Math.pow(1 - t * t, 0.7) - 4.5 - 1.5 * (1 - t * t)));
        }
        paintPoly(c, rotate(lid, ex, ey, tilt), 1.0, new Scalar(25, 25, 35), 0.9, false);
    }

    private static void drawMouth(Canvas c, Identity id, Variation v, double my, double mx, double a, double b,
            Scalar skin) {
        double mw = id.mouthW() * a;
        double lip = id.lipThick() * b;
        double smile = v.smile();
        double open = v.mouthOpen() * 0.14 * b;
        int n = 24;
        List<Point> upperTop = new ArrayList<>();
        List<Point> slitTop = new ArrayList<>();
        List<Point> slitBot = new ArrayList<>();
        List<Point> lowerBot = new ArrayList<>();
        for (int i = 0; i <= n; i++) {
            double t = -1 + 2.0 * i / n;
            double x = mx + t * mw;
            double yc = my - smile * 0.06 * b * t * t + smile * 0.015 * b;
            double bow = 1 - 0.35 * Math.exp(-(t * t) / 0.02); // cupid's bow dip
            upperTop.add(pt(x, yc - lip * Math.sqrt(Math.max(0, 1 - t * t)) * bow - 0.5));
            double o = open * (1 - t * t);
            slitTop.add(pt(x, yc - o * 0.3));
            slitBot.add(pt(x, yc + o * 0.7));
            lowerBot.add(pt(x, yc + o * 0.7 + lip * 1.25 * Math.sqrt(Math.max(0, 1 - t * t)) + 0.5));
        }
        Scalar lipCol = new Scalar(skin.val[0] * 0.72, skin.val[1] * (0.70 - 0.08 * id.lipRed()),
                skin.val[2] * (0.82 + 0.06 * id.lipRed()));
        paintPoly(c, concatRev(upperTop, slitTop), 1.2, scale(lipCol, 0.92), 1, false);
        paintPoly(c, concatRev(slitBot, lowerBot), 1.2, lipCol, 1, false);
        // highlight on the lower lip, shadow below it
        shadeEllipse(c, mx, my + open * 0.7 + lip * 0.5, mw * 0.4, lip * 0.3, 2, 1.08);
        shadeEllipse(c, mx, my + open * 0.7 + lip * 1.8, mw * 0.55, lip * 0.5, 4, 0.85);
        if (open > 0.5) {
            paintPoly(c, concatRev(slitTop, slitBot), 0.8, new Scalar(35, 30, 55), 1, false);
            if (open > 0.05 * b) { // upper teeth
                List<Point> teeth = new ArrayList<>();
                for (int i = 3; i <= n - 3; i++) {
                    teeth.add(slitTop.get(i));
                }
                for (int i = n - 3; i >= 3; i--) {
                    Point p = slitTop.get(i);
                    double t = -1 + 2.0 * i / n;
                    teeth.add(pt2(p.x, p.y + open * 0.35 * (1 - t * t)));
                }
                paintPoly(c, teeth, 0.8, new Scalar(200, 205, 210), 0.9, false);
            }
        }
        // the dark line where the lips meet
        List<Point> line = new ArrayList<>(slitTop);
        for (int i = n; i >= 0; i--) {
            Point p = slitTop.get(i);
            line.add(pt2(p.x, p.y + 2.0 + 1.5 * (1 - Math.abs(-1 + 2.0 * i / n))));
        }
        paintPoly(c, line, 1.0, new Scalar(30, 25, 45), 0.85, false);
    }

    private static void drawHair(Canvas c, Identity id, String style, double a, double b, Scalar hair) {
        if (style.equals("bald")) {
            // horseshoe of short hair around the sides and back only
            for (int sd = -1; sd <= 1; sd += 2) {
                List<Point> p = List.of(pt(sd * a * 1.02, -0.35 * b), pt(sd * a * 0.86, -0.30 * b),
                        pt(sd * a * 0.86, 0.05 * b), pt(sd * a * 1.04, 0.05 * b));
                paintPoly(c, p, 3, hair, 0.8, true);
            }
            shadeEllipse(c, -0.2 * a, -0.75 * b, 0.35 * a, 0.12 * b, 8, 1.12); // scalp shine
            return;
        }
        double vol = id.hairVolume();
        double capA = a * (1.06 + 0.06 * vol);
        double capB = b * (1.04 + 0.06 * vol);
        double capCy = -0.02 * b;
        if (style.equals("curly")) {
            capA = a * (1.18 + 0.1 * vol);
            capB = b * (1.12 + 0.08 * vol);
        }
        if (style.equals("buzz")) {
            capA = a * 1.02;
            capB = b * 1.015;
        }
        Mat cap = Mat.zeros(CH, CW, CvType.CV_8UC1);
        fillPoly(cap, ellipsePts(0, capCy, capA, capB, 0, 64));
        if (style.equals("curly")) {
            for (int i = 0; i < 22; i++) { // curls along the outline
                double t = Math.PI + Math.PI * i / 21.0;
                double r = 0.13 * a;
                fillPoly(cap, ellipsePts(capA * Math.cos(t), capCy + capB * Math.sin(t) + 0.1 * b, r, r, 0, 12));
            }
        }
        // keep only what lies above the hairline
        List<Point> above = new ArrayList<>();
        double hl = id.hairline() * b;
        double part = style.equals("side") ? (id.index() % 2 == 0 ? 1 : -1) : 0;
        int n = 40;
        for (int i = 0; i <= n; i++) {
            double u = -1.3 + 2.6 * i / n;
            double x = u * a;
            double uu = Math.min(Math.abs(u), 1.0);
            double y;
            if (style.equals("fringe")) {
                y = hl + 0.08 * b * uu * uu + 0.02 * b * Math.sin(u * 17); // ragged bangs
            } else {
                y = hl + 0.34 * b * uu * uu + 0.10 * b * part * u;
                if (style.equals("long")) {
                    y -= 0.07 * b * Math.exp(-u * u / 0.01); // centre part
                }
            }
            if (Math.abs(u) > 0.92 && !style.equals("fringe")) {
                y = Math.max(y, 0.02 * b); // sideburns down to ear top
            }
            above.add(pt(x, y));
        }
        above.add(pt(1.6 * a, -1.6 * b));
        above.add(pt(-1.6 * a, -1.6 * b));
        Mat keep = polyMask(above);
        Core.bitwise_and(cap, keep, cap);
        keep.release();
        if (style.equals("long")) {
            for (int sd = -1; sd <= 1; sd += 2) { // strands framing the face
                List<Point> p = List.of(pt(sd * a * 1.16, -0.3 * b), pt(sd * a * 0.86, -0.3 * b),
                        pt(sd * a * 0.90, 0.55 * b), pt(sd * a * 1.2, 0.9 * b));
                fillPoly(cap, p);
            }
        }
        double opacity = style.equals("buzz") ? 0.85 : 1.0;
        paintMask(c, cap, 2.0, hair, opacity, true);
        // volume: darker near the edge of the hair mass, highlight on top
        shadeMaskEdge(c, cap, 0.8);
        shadeEllipse(c, -0.25 * a, -0.85 * b, 0.4 * a, 0.12 * b, 8, 1.25);
        cap.release();
    }

    private static void drawBeard(Canvas c, Identity id, Mat faceMask, double a, double b, double noseY,
            double mouthY, double dx, Scalar hair) {
        Mat m = Mat.zeros(CH, CW, CvType.CV_8UC1);
        switch (id.beard()) {
            case 1, 2 -> { // stubble / full beard: below a line from the mouth corners up to the sideburns
                List<Point> p = new ArrayList<>();
                double mst = mouthY - id.lipThick() * b - 0.06 * b;
                double corner = mouthY - 0.02 * b;
                double side = id.eyeY() * b + 0.32 * b;
                double mu = id.mouthW() + 0.06;
                for (int i = 0; i <= 40; i++) {
                    double u = -1.2 + 2.4 * i / 40;
                    double uu = Math.min(1, Math.abs(u));
                    double y = uu < mu ? mst + (corner - mst) * Math.pow(uu / mu, 4)
                            : corner + (side - corner) * (uu - mu) / (1 - mu);
                    p.add(pt(u * a + dx, y));
                }
                p.add(pt(1.4 * a, 1.5 * b));
                p.add(pt(-1.4 * a, 1.5 * b));
                fillPoly(m, p);
                Core.bitwise_and(m, faceMask, m);
            }
            case 3 -> { // moustache
                fillPoly(m, ellipsePts(dx * 1.2, mouthY - id.lipThick() * b - 0.035 * b, id.mouthW() * a * 1.05,
                        0.035 * b, 0, 24));
            }
            default -> { // goatee
                fillPoly(m, ellipsePts(dx * 1.2, mouthY - id.lipThick() * b - 0.04 * b, id.mouthW() * a * 1.0,
                        0.045 * b, 0, 24));
                fillPoly(m, ellipsePts(dx * 1.2, mouthY + 0.2 * b, id.mouthW() * a * 0.8, 0.22 * b, 0, 24));
                Core.bitwise_and(m, faceMask, m);
            }
        }
        // Kept translucent: dense dark beards hide the mouth and cheek contrasts the cascade needs.
        double opacity = id.beard() == 1 ? 0.3 : 0.5;
        Scalar col = blend(scale(hair, 0.8), scale(c.skinTone, 0.5), 0.3); // darker than scalp hair
        paintMask(c, m, id.beard() == 1 ? 6 : 3, col, opacity, false);
        m.release();
    }

    private static void drawGlasses(Canvas c, Identity id, double a, double b, double eyeY, double dx) {
        double ew = id.eyeW() * a * 1.55;
        double eh = id.eyeW() * a * (id.glasses() == 1 ? 1.2 : 0.9);
        Scalar frame = new Scalar(30, 30, 35);
        Mat m = Mat.zeros(CH, CW, CvType.CV_8UC1);
        int thick = Math.max(2, (int) Math.round(0.03 * a)); // thickness is not fixed-point
        for (int sd = -1; sd <= 1; sd += 2) {
            double ex = sd * id.eyeSep() * a + dx;
            List<Point> rim = id.glasses() == 1 ? ellipsePts(ex, eyeY + 0.02 * b, ew * 0.85, eh * 0.85, 0, 32)
                    : roundedRect(ex, eyeY + 0.02 * b, ew, eh);
            Imgproc.polylines(m, List.of(mop(rim)), true, new Scalar(255), thick, Imgproc.LINE_AA, SHIFT);
            double outer = ex + sd * ew * (id.glasses() == 1 ? 0.85 : 1.0);
            Imgproc.line(m, fp(outer, eyeY), fp(sd * a * 0.98, eyeY - 0.02 * b), new Scalar(255), thick,
                    Imgproc.LINE_AA, SHIFT);
        }
        double in = id.eyeSep() * a - ew * (id.glasses() == 1 ? 0.85 : 1.0);
        Imgproc.line(m, fp(dx - in, eyeY - 0.02 * b), fp(dx + in, eyeY - 0.02 * b), new Scalar(255), thick,
                Imgproc.LINE_AA, SHIFT);
        paintMask(c, m, 0.8, frame, 0.95, false);
        m.release();
    }

    // ------------------------------------------------------------------ geometry helpers

    private static List<Point> facePts(Identity id, double a, double b) {
        List<Point> pts = new ArrayList<>();
        int n = 96;
        for (int k = 0; k < n; k++) {
            double t = 2 * Math.PI * k / n;
            double cs = Math.cos(t), sn = Math.sin(t);
            double e = sn > 0 ? id.chinPow() : 2.2;
            double x = a * Math.signum(cs) * Math.pow(Math.abs(cs), 2 / e);
            double y = b * Math.signum(sn) * Math.pow(Math.abs(sn), 2 / e);
            if (sn > 0) {
                x *= 1 - id.jaw() * sn * sn;
            }
            pts.add(pt(x, y));
        }
        return pts;
    }

    /** Canvas point from face-centred coordinates. */
    private static Point pt(double x, double y) {
        return new Point(CX + x, CY + y);
    }

    /** Canvas point already in canvas coordinates. */
    private static Point pt2(double x, double y) {
        return new Point(x, y);
    }

    private static Point fp(double x, double y) {
        return new Point((CX + x) * SUB, (CY + y) * SUB);
    }

    private static List<Point> ellipsePts(double cx, double cy, double ax, double ay, double angDeg, int n) {
        List<Point> p = new ArrayList<>();
        double th = Math.toRadians(angDeg);
        for (int i = 0; i < n; i++) {
            double t = 2 * Math.PI * i / n;
            double x = ax * Math.cos(t), y = ay * Math.sin(t);
            p.add(pt(cx + x * Math.cos(th) - y * Math.sin(th), cy + x * Math.sin(th) + y * Math.cos(th)));
        }
        return p;
    }

    private static List<Point> arc(double cx, double cy, double ax, double ay, double fromDeg, double toDeg, int n) {
        List<Point> p = new ArrayList<>();
        for (int i = 0; i <= n; i++) {
            double t = Math.toRadians(fromDeg + (toDeg - fromDeg) * i / n);
            p.add(pt(cx + ax * Math.cos(t), cy + ay * Math.sin(t)));
        }
        return p;
    }

    private static List<Point> roundedRect(double cx, double cy, double hw, double hh) {
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

    private static List<Point> rotate(List<Point> pts, double cx, double cy, double ang) {
        double c = Math.cos(ang), s = Math.sin(ang);
        double ox = CX + cx, oy = CY + cy;
        List<Point> out = new ArrayList<>(pts.size());
        for (Point p : pts) {
            double x = p.x - ox, y = p.y - oy;
            out.add(new Point(ox + x * c - y * s, oy + x * s + y * c));
        }
        return out;
    }

    private static List<Point> scalePts(List<Point> pts, double sx, double sy, double ox, double oy) {
        List<Point> out = new ArrayList<>(pts.size());
        for (Point p : pts) {
            out.add(new Point(CX + (p.x - CX) * sx + ox, CY + (p.y - CY) * sy + oy));
        }
        return out;
    }

    private static List<Point> concatRev(List<Point> first, List<Point> second) {
        List<Point> out = new ArrayList<>(first);
        for (int i = second.size() - 1; i >= 0; i--) {
            out.add(second.get(i));
        }
        return out;
    }

    private static MatOfPoint mop(List<Point> pts) {
        Point[] arr = new Point[pts.size()];
        for (int i = 0; i < arr.length; i++) {
            Point p = pts.get(i);
            arr[i] = new Point(Math.round(p.x * SUB), Math.round(p.y * SUB));
        }
        return new MatOfPoint(arr);
    }

    private static void fillPoly(Mat mask, List<Point> pts) {
        MatOfPoint m = mop(pts);
        Imgproc.fillPoly(mask, List.of(m), new Scalar(255), Imgproc.LINE_AA, SHIFT, new Point(0, 0));
        m.release();
    }

    private static Mat polyMask(List<Point> pts) {
        Mat m = Mat.zeros(CH, CW, CvType.CV_8UC1);
        fillPoly(m, pts);
        return m;
    }

    // ------------------------------------------------------------------ painting helpers

    private static Scalar scale(Scalar s, double f) {
        return new Scalar(s.val[0] * f, s.val[1] * f, s.val[2] * f);
    }

    private static Scalar blend(Scalar x, Scalar y, double wy) {
        return new Scalar(x.val[0] * (1 - wy) + y.val[0] * wy, x.val[1] * (1 - wy) + y.val[1] * wy,
                x.val[2] * (1 - wy) + y.val[2] * wy);
    }

    private static Mat weight(Mat mask8, double sigma, double opacity) {
        Mat w = new Mat();
        mask8.convertTo(w, CvType.CV_32F, opacity / 255.0);
        if (sigma > 0) {
            Imgproc.GaussianBlur(w, w, new Size(0, 0), sigma);
        }
        return w;
    }

    private static void multiply3(Mat img, Mat w1) {
        Mat w3 = new Mat();
        Core.merge(List.of(w1, w1, w1), w3);
        Core.multiply(img, w3, img);
        w3.release();
    }

    /** Paints a colour over the canvas through a soft mask; solid layers also add coverage. */
    private static void paintMask(Canvas c, Mat mask8, double sigma, Scalar colour, double opacity, boolean solid) {
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
    private static Rect activeRect(Mat mask8, double sigma) {
        Rect r = Imgproc.boundingRect(mask8);
        if (r.width <= 0 || r.height <= 0) {
            return null;
        }
        int m = (int) Math.ceil(3.5 * sigma) + 2;
        int x0 = Math.max(0, r.x - m), y0 = Math.max(0, r.y - m);
        int x1 = Math.min(mask8.cols(), r.x + r.width + m), y1 = Math.min(mask8.rows(), r.y + r.height + m);
        return new Rect(x0, y0, x1 - x0, y1 - y0);
    }

    private static void paintPoly(Canvas c, List<Point> pts, double sigma, Scalar colour, double opacity,
            boolean solid) {
        Mat m = polyMask(pts);
        paintMask(c, m, sigma, colour, opacity, solid);
        m.release();
    }

    private static void paintEllipse(Canvas c, double cx, double cy, double ax, double ay, double sigma,
            Scalar colour, double opacity) {
        paintPoly(c, ellipsePts(cx, cy, ax, ay, 0, 20), sigma, colour, opacity, false);
    }

    /** Multiplies brightness by {@code factor} inside a soft mask; consumes the mask. */
    private static void shade(Canvas c, Mat mask8, double sigma, double factor) {
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

    private static void shadeEllipse(Canvas c, double cx, double cy, double ax, double ay, double sigma,
            double factor) {
        shade(c, polyMask(ellipsePts(cx, cy, ax, ay, 0, 28)), sigma, factor);
    }

    /** Darkens a shape near its boundary so flat fills read as rounded volumes. */
    private static void shadeMaskEdge(Canvas c, Mat mask8, double factor) {
        Mat eroded = new Mat();
        Imgproc.erode(mask8, eroded, Imgproc.getStructuringElement(Imgproc.MORPH_ELLIPSE, new Size(15, 15)));
        Mat edge = new Mat();
        Core.subtract(mask8, eroded, edge);
        eroded.release();
        shade(c, edge, 5, factor);
    }

    /** 1 + strength * (projection of (x,y) on the light direction) / radius, times gain, clamped. */
    private static Mat rampMat(int w, int h, double cx, double cy, double radius, double angle, double strength,
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

    // ------------------------------------------------------------------ data set generation

    /** Writes enroll/query PNGs, the walk-by AVI and ground-truth CSVs under {@code out}. */
    public static void generate(Path out, long seed) throws IOException {
        loadNatives();
        // OpenCV's default PNG strategy is RLE; FILTERED compresses these smooth, noisy frames better.
        MatOfInt png = new MatOfInt(Imgcodecs.IMWRITE_PNG_COMPRESSION, 9,
                Imgcodecs.IMWRITE_PNG_STRATEGY, Imgcodecs.IMWRITE_PNG_STRATEGY_FILTERED);
        Files.createDirectories(out);
        try (Writer csv = Files.newBufferedWriter(out.resolve("faces.csv"), StandardCharsets.UTF_8)) {
            csv.write("file,identity,set,face_x,face_y,face_w,face_h\n");
            for (int i = 0; i < IDENTITIES; i++) {
                Identity id = identity(seed, i);
                for (ImageSet set : new ImageSet[] {ImageSet.ENROLL, ImageSet.QUERY}) {
                    int count = set == ImageSet.ENROLL ? ENROLL_PER_ID : QUERY_PER_ID;
                    String setName = set.name().toLowerCase(Locale.ROOT);
                    Path dir = out.resolve(setName).resolve(id.name());
                    Files.createDirectories(dir);
                    for (int j = 0; j < count; j++) {
                        Variation v = variation(seed, id, set, j);
                        Mat g = renderGray(id, v);
                        Path file = dir.resolve(String.format(Locale.ROOT, "%03d.png", j));
                        if (!Imgcodecs.imwrite(file.toString(), g, png)) {
                            throw new IOException("imwrite failed: " + file);
                        }
                        g.release();
                        Rect r = faceBox(id, v);
                        csv.write(String.format(Locale.ROOT, "%s,%s,%s,%d,%d,%d,%d%n",
                                out.relativize(file).toString().replace('\\', '/'), id.name(), setName,
                                r.x, r.y, r.width, r.height));
                    }
                }
            }
        }
        writeWalkby(out, seed);
    }

    /**
     * Two enrolled people walk past a fixed camera one after the other; the first and last frames
     * are empty. Ground truth goes to walkby.csv (one row per visible face).
     */
    static void writeWalkby(Path out, long seed) throws IOException {
        Path avi = out.resolve("walkby.avi");
        VideoWriter vw = new VideoWriter(avi.toString(), Videoio.CAP_OPENCV_MJPEG,
                VideoWriter.fourcc('M', 'J', 'P', 'G'), VIDEO_FPS, new Size(WIDTH, HEIGHT), true);
        if (!vw.isOpened()) {
            throw new IOException("cannot open MJPEG writer for " + avi);
        }
        vw.set(Videoio.VIDEOWRITER_PROP_QUALITY, 65); // keeps the clip near 350 KB
        try (Writer csv = Files.newBufferedWriter(out.resolve("walkby.csv"), StandardCharsets.UTF_8)) {
            csv.write("frame,identity,face_x,face_y,face_w,face_h,fully_visible\n");
            for (int f = 0; f < VIDEO_FRAMES; f++) {
                List<Placement> faces = walkbyFaces(seed, f);
                Mat frame = renderFrame(walkbyScene(seed, f), faces);
                vw.write(frame);
                frame.release();
                for (Placement p : faces) {
                    Rect r = faceBox(p.identity(), p.pose());
                    // "fully visible" keeps a 10% margin: the cascade needs some context around the oval
                    int mx = r.width / 10, my = r.height / 10;
                    boolean full = r.x - mx >= 0 && r.y - my >= 0 && r.x + r.width + mx <= WIDTH
                            && r.y + r.height + my <= HEIGHT;
                    csv.write(String.format(Locale.ROOT, "%d,%s,%d,%d,%d,%d,%b%n", f, p.identity().name(),
                            r.x, r.y, r.width, r.height, full));
                }
            }
        } finally {
            vw.release();
        }
    }

    /** Fixed camera: lighting and background stay constant across the clip; only noise changes. */
    public static Variation walkbyScene(long seed, int frame) {
        Variation base = variation(seed, identity(seed, 0), ImageSet.VIDEO, 0);
        return new Variation(0, 0, 0, 0, 0, base.lightAngle(), base.lightStrength() * 0.6, base.faceShading(),
                Math.max(0.95, base.gain()), 1.0, 0, 0, 1, 0, 0, 0, 0, mix(seed, 0x5CE, 1), 0.8,
                mix(seed, 0xF4A, frame));
    }

    /** Faces present in walk-by frame {@code f}: person a walks right, then person b walks left. */
    public static List<Placement> walkbyFaces(long seed, int f) {
        List<Placement> out = new ArrayList<>();
        if (f >= 2 && f < 20) {
            Identity id = identity(seed, 0);
            double t = (f - 2) / 17.0;
            Variation base = variation(seed, id, ImageSet.VIDEO, 1);
            out.add(new Placement(id, base.at(-30 + t * 380, 118 + 4 * Math.sin(f * 1.3), 104 + 10 * t)));
        } else if (f >= 21 && f < 38) {
            Identity id = identity(seed, 1);
            double t = (f - 21) / 16.0;
            Variation base = variation(seed, id, ImageSet.VIDEO, 2);
            out.add(new Placement(id, base.at(350 - t * 380, 112 + 4 * Math.sin(f * 1.3), 120 - 8 * t)));
        }
        return out;
    }

    public static void main(String[] args) throws IOException {
        Path out = Path.of(args.length > 0 ? args[0] : "test-data/synthetic");
        long seed = args.length > 1 ? Long.decode(args[1]) : DEFAULT_SEED;
        generate(out, seed);
        System.out.println("synthetic faces written to " + out.toAbsolutePath() + " (seed " + seed + ")");
    }
}
