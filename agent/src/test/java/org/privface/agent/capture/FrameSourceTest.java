package org.privface.agent.capture;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
}
