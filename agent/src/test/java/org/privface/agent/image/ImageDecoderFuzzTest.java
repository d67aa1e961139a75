package org.privface.agent.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.MatOfByte;
import org.opencv.core.MatOfInt;
import org.opencv.core.Rect;
import org.opencv.core.Size;
import org.opencv.imgcodecs.Imgcodecs;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.dataset.Pgm;

/**
 * Fuzzes what turns image-file bytes into a frame: {@link ImageDecoder} (image folders, through
 * OpenCV's native PNG, JPEG, BMP, PNM and TIFF decoders) and {@link Pgm} (the ORL dataset reader).
 * Property: a valid Mat within the size limit, or an IOException with a reason; no other
 * exception, and no native crash (which would take the test JVM down).
 *
 * <p>In a normal build Jazzer replays the corpus in test-data/fuzz/image (regression mode);
 * {@code JAZZER_FUZZ=1} runs a campaign (docs/reliability.md, Fuzzing).
 */
class ImageDecoderFuzzTest {
    static final Path ROOT = Path.of(System.getProperty("privface.root", ".."));
    static final Path CORPUS = ROOT.resolve("test-data/fuzz/image");

    @FuzzTest(maxDuration = "2m")
    void decodeImage(byte[] bytes) {
        try {
            Mat m = ImageDecoder.decode(bytes);
            try {
                assertFalse(m.empty());
                assertEquals(CvType.CV_8UC3, m.type(), "BGR, 8 bits a channel");
                assertTrue((long) m.rows() * m.cols() <= ImageDecoder.MAX_PIXELS);
            } finally {
                m.release();
            }
        } catch (IOException refused) {
            assertNotNull(refused.getMessage(), "a refusal says why");
        }
        try {
            Mat g = Pgm.decode(bytes, "fuzz");
            try {
                assertEquals(CvType.CV_8UC1, g.type());
                assertTrue(g.rows() >= 1 && g.cols() >= 1 && (long) g.rows() * g.cols() <= 1 << 26);
            } finally {
                g.release();
            }
        } catch (IOException refused) {
            assertNotNull(refused.getMessage());
        }
    }

    /**
     * The corpus must keep images this build decodes, or regression mode would only replay
     * refusals. {@code -Dprivface.fuzz.write-seeds=true} rewrites it from {@link #seeds()}.
     */
    @Test
    void corpusHoldsImagesOfEveryFormat() throws Exception {
        if (Boolean.getBoolean("privface.fuzz.write-seeds")) {
            Files.createDirectories(CORPUS);
            for (var e : seeds().entrySet()) {
                Files.write(CORPUS.resolve(e.getKey()), e.getValue());
            }
        }
        List<Path> files;
        try (Stream<Path> s = Files.list(CORPUS)) {
            files = s.filter(Files::isRegularFile).sorted().toList();
        }
        int decoded = 0;
        long bytes = 0;
        for (Path p : files) {
            byte[] b = Files.readAllBytes(p);
            bytes += b.length;
            decodeImage(b);
            try {
                ImageDecoder.decode(b).release();
                decoded++;
            } catch (IOException refused) {
                // Refusals are seeds too: they start the fuzzer next to each check.
            }
        }
        assertTrue(decoded >= 5, decoded + " of " + files.size() + " corpus files decode; regenerate the seeds");
        assertTrue(files.size() > decoded, "the corpus also holds inputs that must be refused");
        assertTrue(bytes < 100_000, "the corpus stays small: " + bytes + " bytes");
    }

    /**
     * Jazzer sees coverage of Java code only, so it cannot steer into OpenCV's native decoders. This
     * bounded, seeded sweep complements it there: mutations of every decodable seed that keep its
     * header (so they pass the size checks and reach libpng, libjpeg, libtiff, ...) must also decode
     * or be refused; a native crash would end the test JVM.
     */
    @Test
    @Tag("jazzer") // runs beside the fuzz test, where OpenCV's log of each refused mutant is silenced
    void seededMutationsReachTheNativeDecodersWithoutHarm() throws Exception {
        List<Path> files;
        try (Stream<Path> s = Files.list(CORPUS)) {
            files = s.filter(Files::isRegularFile).sorted().toList();
        }
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(20261122);
        int decoded = 0;
        int refused = 0;
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
        for (Path p : files) {
            byte[] seed = Files.readAllBytes(p);
            try {
                ImageDecoder.decode(seed).release();
            } catch (IOException notDecodable) {
                continue; // only valid images make mutants that get past the header checks
            }
            for (int i = 0; i < 400 && System.nanoTime() < deadline; i++) {
                byte[] m = mutate(seed, rnd);
                decodeImage(m);
                try {
                    ImageDecoder.decode(m).release();
                    decoded++;
                } catch (IOException e) {
                    refused++;
                }
            }
        }
        System.out.printf("native decoder sweep: %d mutants decoded, %d refused%n", decoded, refused);
        assertTrue(decoded + refused >= 1000, "the sweep ran: " + (decoded + refused));
        assertTrue(decoded > 0 && refused > 0, "mutants both decode and get refused");
    }

    /** Flips, overwrites, cuts or repeats bytes after the first 32, where the image data is. */
    private static byte[] mutate(byte[] seed, java.util.SplittableRandom rnd) {
        byte[] b = seed.clone();
        int from = Math.min(32, b.length - 1);
        switch (rnd.nextInt(4)) {
            case 0 -> {
                for (int k = 1 + rnd.nextInt(8); k > 0; k--) {
                    int i = from + rnd.nextInt(b.length - from);
                    b[i] ^= (byte) (1 << rnd.nextInt(8));
                }
            }
            case 1 -> {
                int i = from + rnd.nextInt(b.length - from);
                int n = Math.min(b.length - i, 1 + rnd.nextInt(16));
                for (int k = 0; k < n; k++) {
                    b[i + k] = (byte) (rnd.nextBoolean() ? 0xFF : rnd.nextInt(256));
                }
            }
            case 2 -> b = Arrays.copyOf(b, from + rnd.nextInt(b.length - from));
            default -> {
                int i = from + rnd.nextInt(b.length - from);
                int n = Math.min(b.length - i, 1 + rnd.nextInt(64));
                byte[] longer = new byte[b.length + n];
                System.arraycopy(b, 0, longer, 0, i + n);
                System.arraycopy(b, i, longer, i + n, b.length - i);
                b = longer;
            }
        }
        return b;
    }

    /** A synthetic face from test-data, shrunk, in each format; then broken variants. */
    static Map<String, byte[]> seeds() throws IOException {
        OpenCv.load();
        Path synthetic = ROOT.resolve("test-data/synthetic");
        // faces.csv: file,identity,set,face_x,face_y,face_w,face_h
        String[] row = Files.readAllLines(synthetic.resolve("faces.csv")).get(1).split(",");
        Mat frame = ImageDecoder.read(synthetic.resolve(row[0]));
        Mat face = new Mat(frame, new Rect(Integer.parseInt(row[3]), Integer.parseInt(row[4]),
                Integer.parseInt(row[5]), Integer.parseInt(row[6])));
        Mat small = new Mat();
        Imgproc.resize(face, small, new Size(24, 32));
        Mat grey = new Mat();
        Imgproc.cvtColor(small, grey, Imgproc.COLOR_BGR2GRAY);

        Map<String, byte[]> s = new LinkedHashMap<>();
        s.put("face.png", encode(".png", small));
        s.put("face.jpg", encode(".jpg", small, Imgcodecs.IMWRITE_JPEG_QUALITY, 70));
        s.put("face-progressive.jpg", encode(".jpg", small, Imgcodecs.IMWRITE_JPEG_PROGRESSIVE, 1));
        s.put("face.bmp", encode(".bmp", grey));
        s.put("face.pgm", encode(".pgm", grey));
        s.put("face.ppm", encode(".ppm", small));
        s.put("face.tif", encode(".tif", grey));
        for (String f : List.of("face.png", "face.jpg", "face.tif")) {
            byte[] b = s.get(f);
            s.put("truncated-" + f, Arrays.copyOf(b, b.length / 2));
        }
        // A PNG header declaring 100000 x 100000 pixels, with nothing behind it.
        byte[] huge = Arrays.copyOf(s.get("face.png"), 33);
        for (int i : new int[] {16, 20}) {
            huge[i] = 0;
            huge[i + 1] = 0x01;
            huge[i + 2] = (byte) 0x86;
            huge[i + 3] = (byte) 0xA0;
        }
        s.put("huge-dimensions.png", huge);
        s.put("pgm-pixel-above-maxval.pgm", "P5 2 1 100\n\u00c8\u0001".getBytes(StandardCharsets.ISO_8859_1));
        s.put("text.png", "not an image at all".getBytes(StandardCharsets.US_ASCII));
        for (Mat m : new Mat[] {frame, face, small, grey}) {
            m.release();
        }
        return s;
    }

    private static byte[] encode(String ext, Mat m, int... params) {
        MatOfByte out = new MatOfByte();
        try {
            assertTrue(Imgcodecs.imencode(ext, m, out, new MatOfInt(params)), "OpenCV encodes " + ext);
            return out.toArray();
        } finally {
            out.release();
        }
    }
}
