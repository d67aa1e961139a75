package org.privface.localstack;

import java.io.IOException;
import java.nio.file.Path;

/** Loopback MJPEG cameras ({@link MjpegFeed}) for code outside this package, such as the load runs. */
public final class Cameras {
    private Cameras() {
    }

    /** A camera looping a folder's images at {@code fps}; each connection streams for at most 120 s, then the reader reconnects. */
    public static Camera mjpeg(Path folder, int fps) throws IOException {
        return new Camera(new MjpegFeed(folder, fps));
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

        @Override
        public void close() {
            feed.close();
        }
    }
}
