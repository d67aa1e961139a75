package org.privface.agent.capture;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** A camera, a video file or an image folder, read frame by frame. */
public interface FrameSource extends AutoCloseable {
    /** The next frame, or empty when the source is exhausted (for a live source: the stream ended or broke). */
    Optional<Frame> next();

    /** Frames that could not be decoded and were skipped. */
    long skipped();

    /** Why the source last failed or ended, if it knows; text only, never frame content. */
    default Optional<String> lastError() {
        return Optional.empty();
    }

    @Override
    void close();

    /** Opens a folder of images, or a video file by extension. */
    static FrameSource open(Path path) throws IOException {
        if (Files.isDirectory(path)) {
            return new ImageFolderSource(path);
        }
        if (Files.isRegularFile(path)) {
            String ext = FfmpegSource.extension(path.getFileName().toString());
            if (FfmpegSource.VIDEO_EXTENSIONS.contains(ext)) {
                return new FfmpegSource(path.toString());
            }
            try {
                return new VideoFileSource(path);
            } catch (IOException openCvCannot) {
                // OpenCV here decodes MJPEG AVI only; an AVI with another codec is FFmpeg's.
                try {
                    return new FfmpegSource(path.toString());
                } catch (IOException ffmpegCannot) {
                    ffmpegCannot.addSuppressed(openCvCannot);
                    throw ffmpegCannot;
                }
            }
        }
        throw new IOException("no such image folder or video file: " + path);
    }

    /**
     * Opens what a setting names: an RTSP or HTTP(S) URL or a V4L2 device ({@code /dev/videoN}) through
     * FFmpeg, otherwise a path as {@link #open(Path)} does.
     */
    static FrameSource open(String uri) throws IOException {
        if (FfmpegSource.kindOf(uri).live()) {
            return new FfmpegSource(uri);
        }
        return open(Path.of(uri));
    }
}
