package org.privface.agent.capture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.Scalar;
import org.opencv.core.Size;
import org.opencv.imgcodecs.Imgcodecs;
import org.opencv.videoio.VideoWriter;
import org.privface.agent.image.OpenCv;
import org.privface.agent.image.ImageDecoder;

class FrameSourceTest {

    private static Mat frame(int shade) {
        return new Mat(120, 160, CvType.CV_8UC3, new Scalar(shade, shade, shade));
    }

    @Test
    void imageFolderSkipsCorruptFilesAndKeepsOrder(@TempDir Path dir) throws Exception {
        OpenCv.load();
        Imgcodecs.imwrite(dir.resolve("a.png").toString(), frame(10));
        Files.write(dir.resolve("b.png"), new byte[] {1, 2, 3});     // corrupt
        Files.write(dir.resolve("c.jpg"), new byte[0]);               // empty
        Files.writeString(dir.resolve("notes.txt"), "ignored");
        Files.createDirectories(dir.resolve("sub"));
        Imgcodecs.imwrite(dir.resolve("sub/d.png").toString(), frame(200));
        List<String> origins = new ArrayList<>();
        try (FrameSource s = FrameSource.open(dir)) {
            s.next().ifPresent(f -> {
                origins.add(f.origin());
                f.close();
            });
            s.next().ifPresent(f -> {
                origins.add(f.origin());
                f.close();
            });
            assertTrue(s.next().isEmpty());
            assertEquals(2, s.skipped());
        }
        assertEquals(List.of("a.png", "sub/d.png"), origins);
    }

    private static byte[] encoded(String ext, Mat m) {
        org.opencv.core.MatOfByte out = new org.opencv.core.MatOfByte();
        assertTrue(Imgcodecs.imencode(ext, m, out));
        byte[] b = out.toArray();
        out.release();
        return b;
    }

    @Test
    void imageFolderRefusesTruncatedHugeAndForeignImagesAndGoesOn(@TempDir Path dir) throws Exception {
        OpenCv.load();
        byte[] png = encoded(".png", frame(90));
        byte[] jpg = encoded(".jpg", frame(150));
        Files.write(dir.resolve("a.png"), png);
        Files.write(dir.resolve("b-truncated.png"), java.util.Arrays.copyOf(png, png.length / 2));
        Files.write(dir.resolve("c-header-only.jpg"), java.util.Arrays.copyOf(jpg, 20));
        byte[] huge = java.util.Arrays.copyOf(png, 33); // IHDR says 100000 x 100000, then nothing
        for (int i : new int[] {16, 20}) {
            huge[i] = 0;
            huge[i + 1] = 0x01;
            huge[i + 2] = (byte) 0x86;
            huge[i + 3] = (byte) 0xA0;
        }
        Files.write(dir.resolve("d-huge-dimensions.png"), huge);
        try (var f = new java.io.RandomAccessFile(dir.resolve("e-huge-file.jpg").toFile(), "rw")) {
            f.setLength(ImageDecoder.MAX_FILE_BYTES + 1); // sparse: costs no disk
        }
        Files.write(dir.resolve("f.png"), "GIF89a\u0001\u0000\u0001\u0000".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        Files.write(dir.resolve("g-empty.bmp"), new byte[0]);
        Files.write(dir.resolve("z.jpg"), jpg);

        java.util.Map<String, String> why = new java.util.LinkedHashMap<>();
        for (String bad : List.of("b-truncated.png", "c-header-only.jpg", "d-huge-dimensions.png", "e-huge-file.jpg", "f.png",
                "g-empty.bmp")) {
            why.put(bad, assertThrows(java.io.IOException.class, () -> ImageDecoder.read(dir.resolve(bad))).getMessage());
        }
        assertTrue(why.get("d-huge-dimensions.png").contains("100000x100000"), why.toString());
        assertTrue(why.get("e-huge-file.jpg").contains("file size"), why.toString());
        assertTrue(why.get("f.png").contains("unsupported image format"), why.toString());
        assertTrue(why.get("g-empty.bmp").contains("file size 0"), why.toString());

        List<String> origins = new ArrayList<>();
        try (FrameSource s = FrameSource.open(dir)) {
            for (int i = 0; i < 10; i++) {
                var f = s.next();
                if (f.isEmpty()) {
                    break;
                }
                origins.add(f.get().origin());
                assertEquals(120, f.get().image().rows());
                f.get().close();
            }
            assertEquals(6, s.skipped(), "every bad file skipped and counted");
        }
        assertEquals(List.of("a.png", "z.jpg"), origins, "the good images on either side still arrive");
    }

    @Test
    void truncatedEmptyAndHugeVideosAreRefusedOrEndCleanly(@TempDir Path dir) throws Exception {
        OpenCv.load();
        Path mp4 = encode(dir.resolve("clip.mp4"), RtspPublisher.encoder());
        byte[] b = Files.readAllBytes(mp4);
        for (int cut : new int[] {0, 64, b.length / 2, b.length - 1}) {
            Path p = dir.resolve("cut-" + cut + ".mp4");
            Files.write(p, java.util.Arrays.copyOf(b, cut));
            try (FrameSource s = FrameSource.open(p)) {
                assertTrue(count(s) <= 10, "a truncated clip yields at most what the whole one has");
            } catch (java.io.IOException refused) {
                assertTrue(refused.getMessage().contains(p.getFileName().toString()), refused.getMessage());
            }
        }
        assertThrows(java.io.IOException.class, () -> FrameSource.open(dir.resolve("cut-0.mp4")), "an empty file");
        assertThrows(java.io.IOException.class, () -> FrameSource.open(dir.resolve("cut-64.mp4")), "a header alone");

        // OpenCV's own MJPEG AVI reader, cut mid-file: fewer frames, then a clean end.
        byte[] avi = Files.readAllBytes(FfmpegSourceTest.walkby());
        Path half = dir.resolve("walkby-half.avi");
        Files.write(half, java.util.Arrays.copyOf(avi, avi.length / 2));
        int whole;
        try (FrameSource s = FrameSource.open(FfmpegSourceTest.walkby())) {
            whole = count(s);
        }
        try (FrameSource s = FrameSource.open(half)) {
            int n = count(s);
            assertTrue(n < whole, n + " of " + whole + " frames from half the file");
        } catch (java.io.IOException refused) {
            assertTrue(refused.getMessage().contains("walkby-half.avi"), refused.getMessage());
        }

        // A raw-video header declaring huge frames: refused before a frame is decoded.
        for (String size : List.of("W9000 H9000", "W100000 H100000")) {
            Path y4m = dir.resolve(size.replace(' ', '-') + ".y4m");
            Files.write(y4m, ("YUV4MPEG2 " + size + " F10:1 Ip A1:1 C420jpeg\nFRAME\n" + "x".repeat(4096))
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            java.io.IOException e = assertThrows(java.io.IOException.class, () -> FrameSource.open(y4m), size);
            assertTrue(e.getMessage().contains(y4m.getFileName().toString()), e.getMessage());
            if (size.startsWith("W9000")) {
                // FFmpeg would decode 81 Mpx frames; the source's own limit refuses them.
                assertTrue(e.getMessage().contains("81000000 pixels") && e.getMessage().contains("exceed"), e.getMessage());
            }
        }
        // The process is none the worse: the whole clip still reads.
        try (FrameSource s = FrameSource.open(mp4)) {
            assertEquals(10, count(s));
        }
    }

    @Test
    void readsAnMjpegAviWrittenByOpenCv(@TempDir Path dir) throws Exception {
        OpenCv.load();
        Path avi = dir.resolve("clip.avi");
        VideoWriter w = new VideoWriter(avi.toString(), VideoWriter.fourcc('M', 'J', 'P', 'G'), 10, new Size(160, 120));
        assertTrue(w.isOpened(), "OpenCV's built-in MJPEG writer");
        for (int i = 0; i < 7; i++) {
            w.write(frame(30 * i));
        }
        w.release();
        int n = 0;
        try (FrameSource s = FrameSource.open(avi)) {
            while (s.next().map(f -> {
                f.close();
                return true;
            }).orElse(false)) {
                n++;
            }
        }
        assertEquals(7, n);
    }

    @Test
    void refusesMissingAndUndecodableVideo(@TempDir Path dir) throws Exception {
        assertThrows(java.io.IOException.class, () -> FrameSource.open(dir.resolve("missing.avi")));
        Path junk = dir.resolve("junk.avi");
        Files.write(junk, new byte[] {0, 1, 2, 3, 4, 5});
        assertThrows(java.io.IOException.class, () -> FrameSource.open(junk));
    }

    /** Encodes a short test pattern with the ffmpeg program from the FFmpeg jar. */
    private static Path encode(Path out, String codec) throws Exception {
        Process p = RtspPublisher.builder(java.util.List.of(RtspPublisher.ffmpeg(), "-hide_banner", "-loglevel", "error",
                        "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10", "-t", "1", "-c:v", codec,
                        "-pix_fmt", "yuv420p", out.toString()))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        assertTrue(p.waitFor(20, java.util.concurrent.TimeUnit.SECONDS) && p.exitValue() == 0, "ffmpeg encoded " + out);
        return out;
    }

    private static int count(FrameSource s) {
        int n = 0;
        java.util.Optional<Frame> f;
        while ((f = s.next()).isPresent()) {
            f.get().close();
            n++;
        }
        return n;
    }

    @Test
    void opensMjpegAviWithOpenCvAndOtherVideoWithFfmpeg(@TempDir Path dir) throws Exception {
        OpenCv.load();
        try (FrameSource s = FrameSource.open(FfmpegSourceTest.walkby().toString())) {
            assertInstanceOf(VideoFileSource.class, s, "MJPEG AVI keeps OpenCV's reader");
        }
        Path mp4 = encode(dir.resolve("clip.mp4"), RtspPublisher.encoder());
        try (FrameSource s = FrameSource.open(mp4.toString())) {
            assertInstanceOf(FfmpegSource.class, s);
            assertEquals(10, count(s), "1 s of H.264 at 10 fps");
        }
        // An AVI OpenCV cannot decode falls through to FFmpeg.
        Path avi = encode(dir.resolve("mpeg4.avi"), "mpeg4");
        try (FrameSource s = FrameSource.open(avi)) {
            assertInstanceOf(FfmpegSource.class, s);
            assertEquals(10, count(s));
        }
    }

    @Test
    void opensUrlsThroughFfmpeg() throws Exception {
        try (MjpegServer server = new MjpegServer(25);
             FrameSource s = FrameSource.open(server.url("/live"))) {
            assertInstanceOf(FfmpegSource.class, s);
            try (Frame f = s.next().orElseThrow()) {
                assertEquals(MjpegServer.WIDTH, f.image().cols());
            }
        }
        // Nothing listens on this port: FFmpeg is asked, and says so.
        String rtsp = "rtsp://127.0.0.1:" + RtspPublisher.freePort() + "/x";
        java.io.IOException e = assertThrows(java.io.IOException.class, () -> FrameSource.open(rtsp));
        assertTrue(e.getMessage().startsWith("cannot open " + rtsp), e.getMessage());
    }
}
