package org.privface.agent.capture;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** A camera, a video file or an image folder, read frame by frame. */
public interface FrameSource extends AutoCloseable {
    /** The next frame, or empty when the source is exhausted. */
    Optional<Frame> next();

    /** Frames that could not be decoded and were skipped. */
    long skipped();

    @Override
    void close();

    /** Opens a folder of images, or a video file by extension. */
    static FrameSource open(Path path) throws IOException {
        if (Files.isDirectory(path)) {
            return new ImageFolderSource(path);
        }
        if (Files.isRegularFile(path)) {
            return new VideoFileSource(path);
        }
        throw new IOException("no such image folder or video file: " + path);
    }
}
