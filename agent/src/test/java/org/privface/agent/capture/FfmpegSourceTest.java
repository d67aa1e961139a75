package org.privface.agent.capture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.opencv.core.Core;
import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.opencv.core.Scalar;
import org.privface.agent.image.OpenCv;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FfmpegSourceTest {

    static Path walkby() {
        return Path.of(System.getProperty("privface.root", "..")).resolve("test-data/synthetic/walkby.avi")
                .toAbsolutePath();
    }

    /** Reads the whole source; returns {frames, width, height} of what it delivered. */
    private static int[] drain(FrameSource s) {
        int n = 0;
        int w = -1;
        int h = -1;
        Optional<Frame> f;
        while ((f = s.next()).isPresent()) {
            try (Frame frame = f.get()) {
                assertEquals(3, frame.image().channels(), "BGR");
                w = frame.image().cols();
                h = frame.image().rows();
                n++;
            }
        }
        return new int[] {n, w, h};
    }

    @Test
    void readsTheSyntheticWalkbyAviLikeOpenCvDoes() throws Exception {
        Path avi = walkby();
        assertTrue(Files.isRegularFile(avi), "test-data/synthetic/walkby.avi is part of the repository");
        int[] viaOpenCv;
        try (FrameSource s = new VideoFileSource(avi)) {
            viaOpenCv = drain(s);
        }
        try (FfmpegSource s = new FfmpegSource(avi.toString())) {
            assertEquals(FfmpegSource.Kind.FILE, s.kind());
            assertFalse(s.kind().live());
            int[] viaFfmpeg = drain(s);
            assertTrue(viaFfmpeg[0] > 0);
            assertEquals(viaOpenCv[0], viaFfmpeg[0], "same frame count");
            assertEquals(viaOpenCv[1], viaFfmpeg[1], "same width");
            assertEquals(viaOpenCv[2], viaFfmpeg[2], "same height");
            assertEquals(0, s.skipped());
        }
    }

    @Test
    void capsFrameRateAndScalesOnRequest() throws Exception {
        int all;
        double fps;
        try (FfmpegSource s = new FfmpegSource(walkby().toString())) {
            fps = s.frameRate();
            all = drain(s)[0];
        }
        assertTrue(fps > 2, "the clip states its frame rate");
        FfmpegSource.Options half = FfmpegSource.Options.defaults().withMaxFps(fps / 2).withSize(160, 120);
        try (FfmpegSource s = new FfmpegSource(walkby().toString(), half)) {
            int[] got = drain(s);
            assertEquals(160, got[1]);
            assertEquals(120, got[2]);
            assertTrue(Math.abs(got[0] - all / 2.0) <= 2, got[0] + " frames at half rate out of " + all);
            assertEquals(all - got[0], s.throttled());
        }
    }

    @Test
    void rtspH264FromAPublisherPushingToAListeningSource() throws Exception {
        String url = RtspPublisher.url(RtspPublisher.freePort());
        FfmpegSource.Options listen = FfmpegSource.Options.defaults().withListen(true).withIoTimeout(Duration.ofSeconds(10));
        try (RtspPublisher pub = RtspPublisher.push(url, 3);
             FfmpegSource s = new FfmpegSource(url, listen)) {
            assertEquals(FfmpegSource.Kind.RTSP, s.kind());
            assertEquals(640, s.width());
            assertEquals(480, s.height());
            int n = 0;
            double previousMean = -1;
            boolean changed = false;
            Optional<Frame> f;
            while ((f = s.next()).isPresent()) {
                try (Frame frame = f.get()) {
                    assertEquals(640, frame.image().cols());
                    assertEquals(480, frame.image().rows());
                    assertEquals(3, frame.image().channels());
                    assertTrue(frame.origin().startsWith(url + "#"));
                    double mean = Core.mean(frame.image().submat(new Rect(0, 400, 640, 80))).val[0];
                    changed |= previousMean >= 0 && Math.abs(mean - previousMean) > 0.01;
                    previousMean = mean;
                    n++;
                }
            }
            // 3 s at 25 fps; the listener may join a few frames late.
            assertTrue(n >= 50, n + " frames");
            assertTrue(changed, "testsrc's counter and gradient move between frames");
            assertEquals(0, s.skipped());
            assertTrue(pub.awaitEnd(10_000), "the publisher finished its clip");
        }
    }

    @Test
    void mjpegOverHttpDecodesInBgrOrder() throws Exception {
        try (MjpegServer server = new MjpegServer(50);
             FfmpegSource s = new FfmpegSource(server.url("/live"))) {
            assertEquals(FfmpegSource.Kind.HTTP, s.kind());
            for (int i = 0; i < 20; i++) {
                try (Frame frame = s.next().orElseThrow()) {
                    Mat img = frame.image();
                    assertEquals(MjpegServer.WIDTH, img.cols());
                    assertEquals(MjpegServer.HEIGHT, img.rows());
                    Scalar corner = Core.mean(img.submat(new Rect(0, 0, 40, 40)));
                    assertTrue(corner.val[2] > 170 && corner.val[0] < 40 && corner.val[1] < 40,
                            "red served, red read in BGR: " + corner);
                }
            }
            assertEquals(0, s.skipped());
        }
    }

    @Test
    void corruptJpegPartsAreSkippedAndCounted() throws Exception {
        try (MjpegServer server = new MjpegServer(50);
             FfmpegSource s = new FfmpegSource(server.url("/mixed"))) {
            for (int i = 0; i < 20; i++) {
                try (Frame frame = s.next().orElseThrow()) {
                    assertEquals(MjpegServer.WIDTH, frame.image().cols());
                }
            }
            // Every third part is noise: 20 good frames went past about 9 bad ones, each read counting once.
            assertTrue(s.skipped() >= 5, s.skipped() + " skipped");
            assertTrue(s.lastError().isPresent(), "FFmpeg said what was wrong");
        }
    }

    @Test
    void garbageOverHttpFailsToOpenWithAReason() throws Exception {
        try (MjpegServer server = new MjpegServer(25)) {
            long t0 = System.nanoTime();
            IOException e = assertThrows(IOException.class, () -> new FfmpegSource(server.url("/garbage")));
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10), "fails, does not hang");
            assertTrue(e.getMessage().startsWith("cannot open " + server.url("/garbage")), e.getMessage());
            assertTrue(e.getMessage().contains("(avformat_open_input() error -"), "FFmpeg's error, spelled out: " + e.getMessage());
        }
    }

    @Test
    void refusedRtspFailsFastAndNeverQuotesCredentials() throws Exception {
        int port = RtspPublisher.freePort();
        String url = "rtsp://admin:s3cret@127.0.0.1:" + port + "/stream";
        IOException e = assertThrows(IOException.class,
                () -> new FfmpegSource(url, FfmpegSource.Options.defaults().withIoTimeout(Duration.ofSeconds(2))));
        assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
        assertTrue(e.getMessage().contains("rtsp://***@127.0.0.1:" + port), e.getMessage());
    }

    @Test
    void missingFileIsAnIoException() {
        assertThrows(IOException.class, () -> new FfmpegSource("/nonexistent/clip.mp4"));
    }

    @Test
    void kindsByUri() {
        assertEquals(FfmpegSource.Kind.RTSP, FfmpegSource.kindOf("RTSP://cam/1"));
        assertEquals(FfmpegSource.Kind.HTTP, FfmpegSource.kindOf("https://cam/video.mjpg"));
        assertEquals(FfmpegSource.Kind.V4L2, FfmpegSource.kindOf("/dev/video2"));
        assertEquals(FfmpegSource.Kind.FILE, FfmpegSource.kindOf("clips/a.mp4"));
        assertEquals("mp4", FfmpegSource.extension("http://h/p/a.MP4?x=1"));
        assertEquals("", FfmpegSource.extension("http://h.example/mjpeg"));
    }

    @Test
    void v4l2DeviceWhenThisMachineHasOne() throws Exception {
        Path dev = Path.of("/dev/video0");
        Assumptions.assumeTrue(Files.exists(dev),
                "no /dev/video0 on this machine: V4L2 capture is not exercised here");
        OpenCv.load();
        try (FrameSource s = FrameSource.open(dev.toString())) {
            assertTrue(s instanceof FfmpegSource);
            try (Frame f = s.next().orElseThrow()) {
                assertTrue(f.image().cols() > 0 && f.image().rows() > 0);
                assertEquals(3, f.image().channels());
            }
        }
    }
}
