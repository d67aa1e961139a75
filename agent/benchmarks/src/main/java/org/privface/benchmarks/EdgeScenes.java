package org.privface.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.opencv.core.Core;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.Point;
import org.opencv.core.Rect;
import org.opencv.core.Scalar;
import org.opencv.core.Size;
import org.opencv.imgcodecs.Imgcodecs;
import org.opencv.imgproc.Imgproc;

/**
 * {@link EdgeBenchmark}'s frames: 640×480 BGR, built in memory from a seed, each with 1 to 3 of the
 * synthetic enrollment faces blended onto a generated background, with the faces' boxes known.
 */
final class EdgeScenes {
    static final int WIDTH = 640;
    static final int HEIGHT = 480;

    private EdgeScenes() {
    }

    /** A composited frame and the boxes of the faces put into it (the face oval, as in faces.csv). */
    record Scene(Mat bgr, List<Rect> faces) {
    }

    private record Source(Mat grey, Rect face) {
    }

    static List<Scene> scenes(Path synthetic, int n, long seed) throws IOException {
        return scenes(synthetic, n, seed, 1, 3);
    }

    /** As {@link #scenes(Path, int, long)}, frame i asking for {@code min + i % (max - min + 1)} faces (crowds: 10–20). */
    static List<Scene> scenes(Path synthetic, int n, long seed, int min, int max) throws IOException {
        List<Source> sources = new ArrayList<>();
        List<String> csv = Files.readAllLines(synthetic.resolve("faces.csv"));
        for (String line : csv.subList(1, csv.size())) {
            String[] f = line.split(",");
            if (!f[2].equals("enroll")) {
                continue;
            }
            Mat img = Imgcodecs.imread(synthetic.resolve(f[0]).toString(), Imgcodecs.IMREAD_GRAYSCALE);
            if (img.empty()) {
                throw new IOException("cannot read " + f[0]);
            }
            sources.add(new Source(img, new Rect(Integer.parseInt(f[3]), Integer.parseInt(f[4]), Integer.parseInt(f[5]),
                    Integer.parseInt(f[6]))));
        }
        if (sources.isEmpty()) {
            throw new IOException("no enrollment faces listed in " + synthetic.resolve("faces.csv"));
        }
        SplittableRandom r = new SplittableRandom(seed);
        Core.setRNGSeed((int) seed);
        List<Scene> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(composeWith(r, min + i % (max - min + 1), (px, patches) -> place(sources, r, px, patches)));
        }
        sources.forEach(s -> s.grey().release());
        return out;
    }

    /** Where one face went: the patch blended into the frame and the face's box inside it. */
    record Placed(Rect patch, Rect face) {
    }

    /** Blends one face into a frame's BGR pixels clear of the patches already there, or gives null to try again. */
    interface Placer {
        Placed place(byte[] px, List<Rect> patches);
    }

    /**
     * Frame i: a background, then up to 1 + i % 3 faces in at most 500 tries, then sensor noise,
     * all drawn from {@code r} in that order (so a seed gives the same frames).
     */
    static Scene compose(SplittableRandom r, int i, Placer placer) {
        return composeWith(r, 1 + i % 3, placer);
    }

    /** A frame with up to {@code want} faces, drawn as {@link #compose} draws them. */
    static Scene composeWith(SplittableRandom r, int want, Placer placer) {
        Mat frame = background(r);
        byte[] px = new byte[WIDTH * HEIGHT * 3];
        frame.get(0, 0, px);
        List<Rect> patches = new ArrayList<>();
        List<Rect> faces = new ArrayList<>();
        for (int attempt = 0; faces.size() < want && attempt < 500; attempt++) {
            Placed p = placer.place(px, patches);
            if (p != null) {
                patches.add(p.patch());
                faces.add(p.face());
            }
        }
        frame.put(0, 0, px);
        sensorNoise(frame, r);
        return new Scene(frame, List.copyOf(faces));
    }

    /** A synthetic face with its surroundings, 36–96 px wide, tinted per channel. */
    private static Placed place(List<Source> sources, SplittableRandom r, byte[] px, List<Rect> patches) {
        Source s = sources.get(r.nextInt(sources.size()));
        int fw = 36 + r.nextInt(61);
        double sc = fw / (double) s.face().width;
        Rect f = s.face();
        int x0 = Math.max(0, f.x - (int) (0.35 * f.width));
        int y0 = Math.max(0, f.y - (int) (0.3 * f.height));
        int x1 = Math.min(s.grey().cols(), f.x + f.width + (int) (0.35 * f.width));
        int y1 = Math.min(s.grey().rows(), f.y + f.height + (int) (0.3 * f.height));
        int pw = (int) Math.round((x1 - x0) * sc);
        int ph = (int) Math.round((y1 - y0) * sc);
        if (pw >= WIDTH || ph >= HEIGHT) {
            return null;
        }
        Rect dest = new Rect(r.nextInt(WIDTH - pw + 1), r.nextInt(HEIGHT - ph + 1), pw, ph);
        if (patches.stream().anyMatch(q -> overlaps(q, dest, 6))) {
            return null;
        }
        Mat patch = new Mat();
        Imgproc.resize(s.grey().submat(new Rect(x0, y0, x1 - x0, y1 - y0)), patch, new Size(pw, ph), 0, 0,
                sc < 1 ? Imgproc.INTER_AREA : Imgproc.INTER_LINEAR);
        blend(px, patch, dest, new double[] {0.85 + 0.3 * r.nextDouble(), 0.85 + 0.3 * r.nextDouble(),
                0.85 + 0.3 * r.nextDouble()});
        patch.release();
        return new Placed(dest, new Rect(dest.x + (int) Math.round((f.x - x0) * sc),
                dest.y + (int) Math.round((f.y - y0) * sc), (int) Math.round(f.width * sc), (int) Math.round(f.height * sc)));
    }

    /** Sensor noise over the whole frame, faces included. */
    static void sensorNoise(Mat frame, SplittableRandom r) {
        Mat noise = new Mat(HEIGHT, WIDTH, CvType.CV_16SC3);
        Core.randn(noise, 0, 3 + r.nextInt(4));
        Mat wide = new Mat();
        frame.convertTo(wide, CvType.CV_16SC3);
        Core.add(wide, noise, wide);
        wide.convertTo(frame, CvType.CV_8UC3);
        noise.release();
        wide.release();
    }

    static boolean overlaps(Rect a, Rect b, int gap) {
        return a.x < b.x + b.width + gap && b.x < a.x + a.width + gap && a.y < b.y + b.height + gap
                && b.y < a.y + a.height + gap;
    }

    /** A room-like background: a gradient, rectangles and discs in random colours, slightly blurred. */
    static Mat background(SplittableRandom r) {
        Mat m = new Mat(HEIGHT, WIDTH, CvType.CV_8UC3);
        double[] top = colour(r);
        double[] bottom = colour(r);
        byte[] px = new byte[WIDTH * HEIGHT * 3];
        for (int y = 0; y < HEIGHT; y++) {
            double t = y / (double) (HEIGHT - 1);
            for (int c = 0; c < 3; c++) {
                byte v = (byte) Math.round(top[c] * (1 - t) + bottom[c] * t);
                for (int x = 0; x < WIDTH; x++) {
                    px[(y * WIDTH + x) * 3 + c] = v;
                }
            }
        }
        m.put(0, 0, px);
        int rects = 4 + r.nextInt(10);
        for (int k = 0; k < rects; k++) {
            int x = r.nextInt(WIDTH);
            int y = r.nextInt(HEIGHT);
            double[] c = colour(r);
            Imgproc.rectangle(m, new Point(x, y), new Point(x + 20 + r.nextInt(280), y + 20 + r.nextInt(220)),
                    new Scalar(c), r.nextInt(4) == 0 ? 2 + r.nextInt(6) : -1);
        }
        int discs = r.nextInt(4);
        for (int k = 0; k < discs; k++) {
            Imgproc.circle(m, new Point(r.nextInt(WIDTH), r.nextInt(HEIGHT)), 8 + r.nextInt(60), new Scalar(colour(r)), -1);
        }
        Imgproc.GaussianBlur(m, m, new Size(5, 5), 0);
        return m;
    }

    private static double[] colour(SplittableRandom r) {
        return new double[] {30 + r.nextInt(200), 30 + r.nextInt(200), 30 + r.nextInt(200)};
    }

    /** Blends a grey or BGR patch, tinted per channel, into BGR pixels, with edges feathered over a tenth of its size. */
    static void blend(byte[] px, Mat patch, Rect dest, double[] tint) {
        int ch = patch.channels();
        byte[] p = new byte[dest.width * dest.height * ch];
        patch.get(0, 0, p);
        double feather = Math.max(3, Math.min(dest.width, dest.height) / 10.0);
        for (int y = 0; y < dest.height; y++) {
            for (int x = 0; x < dest.width; x++) {
                int edge = Math.min(Math.min(x, dest.width - 1 - x), Math.min(y, dest.height - 1 - y));
                double a = Math.min(1.0, (edge + 0.5) / feather);
                int o = ((dest.y + y) * WIDTH + dest.x + x) * 3;
                for (int c = 0; c < 3; c++) {
                    int v = p[(y * dest.width + x) * ch + (ch == 3 ? c : 0)] & 0xff;
                    double under = px[o + c] & 0xff;
                    px[o + c] = (byte) Math.max(0, Math.min(255, Math.round(a * v * tint[c] + (1 - a) * under)));
                }
            }
        }
    }
}
