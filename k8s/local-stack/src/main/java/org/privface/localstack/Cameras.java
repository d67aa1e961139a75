package org.privface.localstack;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** Loopback MJPEG cameras ({@link MjpegFeed}) for code outside this package, such as the load runs. */
public final class Cameras {
    private Cameras() {
    }

    /** A camera looping a folder's images at {@code fps}; each connection streams for at most 120 s, then the reader reconnects. */
    public static Camera mjpeg(Path folder, int fps) throws IOException {
        return new Camera(new MjpegFeed(folder, fps));
    }

    /**
     * A live camera: the frames in order at {@code fps}, looped; a reader that falls behind misses
     * frames, counted in {@link Camera#partsSkipped()}. Each connection streams for at most
     * {@code maxResponse}.
     */
    public static Camera live(List<byte[]> jpegFrames, int fps, Duration maxResponse) throws IOException {
        return new Camera(new MjpegFeed(jpegFrames, fps, true, maxResponse.toMillis()));
    }

    /** An image as the 3-channel JPEG a camera sends. */
    public static byte[] jpeg(BufferedImage image) throws IOException {
        return MjpegFeed.jpeg(image);
    }

    /** One running camera. */
    public static final class Camera implements AutoCloseable {
        private final MjpegFeed feed;

        private Camera(MjpegFeed feed) {
            this.feed = feed;
        }

        public String url() {
            return feed.url();
        }

        public long partsSent() {
            return feed.partsSent.get();
        }

        /** Frames a live camera skipped because its reader had not taken the earlier ones in time. */
        public long partsSkipped() {
            return feed.partsSkipped.get();
        }

        @Override
        public void close() {
            feed.close();
        }
    }
}
