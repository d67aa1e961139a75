package org.privface.agent.capture;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

import org.opencv.core.Mat;
import org.opencv.videoio.VideoCapture;
import org.opencv.videoio.Videoio;
import org.privface.agent.image.OpenCv;

/**
 * Frames of a video file through OpenCV's VideoCapture. The OpenCV builds available here have no
 * FFmpeg, so this reads what OpenCV decodes itself (MJPEG AVI); H.264 and RTSP need FFmpeg.
 */
public final class VideoFileSource implements FrameSource {
    private final VideoCapture capture;
    private final String name;
    private long sequence;

    public VideoFileSource(Path file) throws IOException {
        OpenCv.load();
        this.name = file.getFileName().toString();
        this.capture = new VideoCapture(file.toString(), Videoio.CAP_ANY);
        if (!capture.isOpened()) {
            capture.release();
            throw new IOException("cannot open video " + file + " (this build decodes MJPEG AVI only)");
        }
    }

    @Override
    public Optional<Frame> next() {
        Mat m = new Mat();
        if (!capture.read(m) || m.empty()) {
            m.release();
            return Optional.empty();
        }
        long seq = sequence++;
        return Optional.of(new Frame(m, seq, SteadyClock.system().instant(), name + "#" + seq));
    }

    @Override
    public long skipped() {
        return 0;
    }

    @Override
    public void close() {
        capture.release();
    }
}
