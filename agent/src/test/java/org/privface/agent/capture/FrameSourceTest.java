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
import org.privface.agent.detect.OpenCv;

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
