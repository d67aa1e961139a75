package org.privface.agent.synth;

import static org.privface.agent.synth.FaceSprite.drawSprite;
import static org.privface.agent.synth.FaceSprite.facePts;
import static org.privface.agent.synth.SpriteCanvas.multiply3;
import static org.privface.agent.synth.SpriteCanvas.rampMat;
import static org.privface.agent.synth.SpriteCanvas.scale;

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
import org.opencv.core.Point;
import org.opencv.core.Rect;
import org.opencv.core.Scalar;
import org.opencv.core.Size;
import org.opencv.imgcodecs.Imgcodecs;
import org.opencv.imgproc.Imgproc;
import org.opencv.objdetect.CascadeClassifier;
import org.opencv.videoio.VideoWriter;
import org.opencv.videoio.Videoio;
import org.privface.agent.synth.SpriteCanvas.Canvas;

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
    static final int CW = 400;
    static final int CH = 440;
    static final double CX = 200;
    static final double CY = 170;
    static final double B = 84; // half-height of the face oval on the canvas
    static final int SHIFT = 3; // fixed-point bits for sub-pixel polygon vertices
    static final double SUB = 1 << SHIFT;

    static final double[][] SKIN = { // BGR
        {185, 205, 238}, {160, 188, 228}, {135, 168, 210}, {112, 150, 192},
        {90, 126, 172}, {70, 102, 150}, {58, 84, 128}};
    static final double[][] HAIR = {
        {22, 22, 28}, {30, 45, 72}, {45, 78, 120}, {105, 165, 205}, {150, 150, 155}, {40, 70, 150}};
    static final String[] HAIR_STYLES = {"short", "long", "buzz", "fringe", "curly", "side", "bald"};

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

    static double luma(Scalar bgr) {
        return luma(bgr.val);
    }

    static double luma(double[] bgr) {
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
