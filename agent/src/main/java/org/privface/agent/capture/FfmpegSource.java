package org.privface.agent.capture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import org.bytedeco.javacv.FFmpegFrameGrabber;
import org.bytedeco.javacv.FrameGrabber;
import org.bytedeco.javacv.OpenCVFrameConverter;
import org.opencv.core.Mat;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.image.ImageDecoder;

/**
 * Frames from an RTSP camera, an HTTP MJPEG stream, a V4L2 device or any video file FFmpeg reads, as BGR
 * {@link Mat}s. One thread at a time: {@link #next()} and {@link #close()} belong to the reading thread,
 * because JavaCV's grabber holds its lock for the whole of a blocking read.
 */
public final class FfmpegSource implements FrameSource {
    /** Containers sent to FFmpeg by extension; anything else is tried with OpenCV first. */
    static final Set<String> VIDEO_EXTENSIONS = Set.of("mp4", "m4v", "mov", "mkv", "webm", "ts", "mts", "m2ts",
            "mpg", "mpeg", "flv", "wmv", "3gp", "h264", "264", "h265", "hevc", "mjpeg", "mjpg", "ogv", "y4m");

    public enum Kind {
        RTSP, HTTP, V4L2, FILE;

        /** A live source has no natural end: when it ends, something went wrong and it is worth reopening. */
        public boolean live() {
            return this != FILE;
        }
    }

    /**
     * How to open a source.
     *
     * @param ioTimeout network sources give up a connect or a read after this long without data, so a dead
     *                  peer ends the stream instead of hanging the reader; also bounds an RTSP listen
     * @param listen    RTSP only: wait for a camera to push to this URL instead of pulling from it; FFmpeg bounds
     *                  the wait by ioTimeout but applies no read timeout to a pushed stream, so a pusher that
     *                  stays connected and silent holds the read until its connection closes
     * @param format    FFmpeg input format; null picks one by kind ({@code mpjpeg} for HTTP unless the path
     *                  names a container, {@code video4linux2} for devices) and lets FFmpeg probe otherwise
     * @param width     scale frames to this size (with height); 0 keeps the source's size
     * @param height    see width
     * @param maxFps    deliver at most this many frames per second of stream time; 0 delivers all
     * @param extra     further FFmpeg options, applied last (e.g. {@code input_format=mjpeg} for a V4L2 camera)
     */
    public record Options(Duration ioTimeout, boolean listen, String format, int width, int height, double maxFps,
                          Map<String, String> extra) {
        public Options {
            Objects.requireNonNull(ioTimeout, "ioTimeout");
            if (ioTimeout.isNegative() || ioTimeout.isZero()) {
                throw new IllegalArgumentException("ioTimeout must be positive");
            }
            if (width < 0 || height < 0 || (width == 0) != (height == 0)) {
                throw new IllegalArgumentException("width and height must both be 0 or both positive");
            }
            if (!(maxFps >= 0)) {
                throw new IllegalArgumentException("maxFps must be >= 0");
            }
            extra = Map.copyOf(extra);
        }

        public static Options defaults() {
            return new Options(Duration.ofSeconds(5), false, null, 0, 0, 0, Map.of());
        }

        public Options withIoTimeout(Duration t) {
            return new Options(t, listen, format, width, height, maxFps, extra);
        }

        public Options withListen(boolean l) {
            return new Options(ioTimeout, l, format, width, height, maxFps, extra);
        }

        public Options withFormat(String f) {
            return new Options(ioTimeout, listen, f, width, height, maxFps, extra);
        }

        public Options withSize(int w, int h) {
            return new Options(ioTimeout, listen, format, w, h, maxFps, extra);
        }

        public Options withMaxFps(double fps) {
            return new Options(ioTimeout, listen, format, width, height, fps, extra);
        }

        public Options withOption(String key, String value) {
            Map<String, String> m = new HashMap<>(extra);
            m.put(key, value);
            return new Options(ioTimeout, listen, format, width, height, maxFps, m);
        }
    }

    private final Kind kind;
    private final String name;
    private final FFmpegFrameGrabber grabber;
    private final OpenCVFrameConverter.ToOrgOpenCvCoreMat converter = new OpenCVFrameConverter.ToOrgOpenCvCoreMat();
    private final long minGapMicros;
    private long lastDeliveredMicros = Long.MIN_VALUE;
    private long sequence;
    private volatile long skipped;
    private volatile long throttled;
    private volatile String lastError;
    private boolean closed;

    public FfmpegSource(String uri) throws IOException {
        this(uri, Options.defaults());
    }

    /** Opens the source; blocks until the stream's first frames are probed, at most about ioTimeout for a network source. */
    public FfmpegSource(String uri, Options options) throws IOException {
        Objects.requireNonNull(uri, "uri");
        Ffmpeg.load();
        this.kind = kindOf(uri);
        this.name = Ffmpeg.redact(uri);
        // Less 1 ms: timestamps are rounded, and a cap of exactly half the rate must keep every other frame.
        this.minGapMicros = options.maxFps() > 0 ? Math.max(1, Math.round(1e6 / options.maxFps()) - 1000) : 0;
        String target = uri;
        if (kind == Kind.FILE) {
            Path p = Path.of(uri);
            if (!Files.isRegularFile(p)) {
                throw new IOException("no such video file: " + uri);
            }
            // The file: protocol keeps a colon in a file name from being read as a protocol.
            target = "file:" + p.toAbsolutePath();
        }
        FFmpegFrameGrabber g = new FFmpegFrameGrabber(target);
        configure(g, uri, options);
        Ffmpeg.Errors errors = Ffmpeg.track();
        String why = null;
        try {
            g.start();
            long pixels = sourcePixels(g);
            if (!g.hasVideo() || g.getImageWidth() <= 0) {
                why = "no video stream in " + name;
            } else if (pixels > ImageDecoder.MAX_PIXELS) {
                // FFmpeg itself allows frames up to about 2^28 pixels: a gigabyte per BGR frame.
                why = "video frames of " + pixels + " pixels in " + name + " exceed " + ImageDecoder.MAX_PIXELS;
            }
        } catch (IOException | RuntimeException e) {
            // JavaCV's message repeats the URL as given, credentials included.
            why = "cannot open " + name + ": " + Ffmpeg.describe(e.getMessage());
        }
        if (why != null) {
            release(g);
            throw new IOException(errors.last() == null ? why : why + " (ffmpeg: " + errors.last() + ")");
        }
        this.grabber = g;
    }

    /** The largest frame any video stream declares, before scaling (the decoder allocates at this size). */
    private static long sourcePixels(FFmpegFrameGrabber g) {
        org.bytedeco.ffmpeg.avformat.AVFormatContext fc = g.getFormatContext();
        long most = 0;
        if (fc == null) {
            return 0;
        }
        for (int i = 0; i < fc.nb_streams(); i++) {
            var par = fc.streams(i).codecpar();
            if (par != null && par.codec_type() == org.bytedeco.ffmpeg.global.avutil.AVMEDIA_TYPE_VIDEO) {
                most = Math.max(most, (long) Math.max(0, par.width()) * Math.max(0, par.height()));
            }
        }
        return most;
    }

    /** Which kind of source a URI names: a URL scheme, a V4L2 device path, or else a file path. */
    public static Kind kindOf(String uri) {
        String u = uri.toLowerCase(Locale.ROOT);
        if (u.startsWith("rtsp://") || u.startsWith("rtsps://")) {
            return Kind.RTSP;
        }
        if (u.startsWith("http://") || u.startsWith("https://")) {
            return Kind.HTTP;
        }
        if (u.startsWith("/dev/video")) {
            return Kind.V4L2;
        }
        return Kind.FILE;
    }

    static String extension(String pathOrUrl) {
        String s = pathOrUrl;
        int q = s.indexOf('?');
        if (q >= 0) {
            s = s.substring(0, q);
        }
        int slash = s.lastIndexOf('/');
        int dot = s.lastIndexOf('.');
        return dot > slash + 1 ? s.substring(dot + 1).toLowerCase(Locale.ROOT) : "";
    }

    private void configure(FFmpegFrameGrabber g, String uri, Options o) {
        long timeoutMicros = o.ioTimeout().toNanos() / 1000;
        String format = o.format();
        switch (kind) {
            case RTSP -> {
                // TCP: interleaved RTP survives NAT and loses no packets; UDP drops frames under load.
                g.setOption("rtsp_transport", "tcp");
                g.setOption("timeout", Long.toString(timeoutMicros));
                if (o.listen()) {
                    g.setOption("rtsp_flags", "listen");
                    g.setOption("listen_timeout", Long.toString(Math.max(1, o.ioTimeout().toSeconds())));
                }
            }
            case HTTP -> {
                g.setOption("timeout", Long.toString(timeoutMicros));
                g.setOption("rw_timeout", Long.toString(timeoutMicros));
                String ext = extension(uri);
                if (format == null && !VIDEO_EXTENSIONS.contains(ext) && !ext.equals("m3u8")) {
                    format = "mpjpeg";
                }
            }
            case V4L2 -> {
                if (format == null) {
                    format = "video4linux2";
                }
            }
            case FILE -> {
            }
        }
        if (format != null && !format.isEmpty()) {
            g.setFormat(format);
        }
        if (o.width() > 0) {
            g.setImageWidth(o.width());
            g.setImageHeight(o.height());
        }
        g.setImageMode(FrameGrabber.ImageMode.COLOR);
        o.extra().forEach(g::setOption);
    }

    public Kind kind() {
        return kind;
    }

    /** The URI with any credentials hidden: safe for logs, origins and status. */
    public String name() {
        return name;
    }

    public int width() {
        return grabber.getImageWidth();
    }

    public int height() {
        return grabber.getImageHeight();
    }

    /** The stream's nominal frame rate, 0 when it does not say. */
    public double frameRate() {
        return grabber.getVideoFrameRate();
    }

    @Override
    public Optional<Frame> next() {
        if (closed) {
            return Optional.empty();
        }
        while (true) {
            Ffmpeg.Errors errors = Ffmpeg.track();
            org.bytedeco.javacv.Frame f;
            try {
                f = grabber.grabImage();
            } catch (FrameGrabber.Exception e) {
                lastError = "read failed: " + Ffmpeg.describe(e.getMessage());
                throw new UncheckedIOException(new IOException(lastError + " (" + name + ")"));
            }
            if (f == null) {
                // JavaCV reports an end of stream, a read timeout and a broken connection alike.
                if (errors.last() != null) {
                    lastError = errors.last();
                }
                return Optional.empty();
            }
            if (errors.count() > 0) {
                // JavaCV skips packets its decoder rejects; the log says this read went past at least one.
                skipped++;
                lastError = errors.last();
            }
            if (f.image == null || f.imageWidth <= 0 || f.imageHeight <= 0) {
                skipped++;
                continue;
            }
            if (minGapMicros > 0) {
                long ts = grabber.getTimestamp();
                if (lastDeliveredMicros != Long.MIN_VALUE && ts >= lastDeliveredMicros
                        && ts - lastDeliveredMicros < minGapMicros) {
                    throttled++;
                    continue;
                }
                lastDeliveredMicros = ts;
            }
            Mat bgr;
            try {
                bgr = toBgr(converter.convert(f));
            } catch (RuntimeException e) {
                bgr = null;
            }
            if (bgr == null) {
                skipped++;
                continue;
            }
            long seq = sequence++;
            return Optional.of(new Frame(bgr, seq, SteadyClock.system().instant(), name + "#" + seq));
        }
    }

    /** A BGR copy: the converter's Mat is a view of the grabber's buffer, which the next read overwrites. */
    private static Mat toBgr(Mat view) {
        if (view == null || view.empty()) {
            return null;
        }
        Mat out = new Mat();
        switch (view.channels()) {
            case 3 -> view.copyTo(out);
            case 1 -> Imgproc.cvtColor(view, out, Imgproc.COLOR_GRAY2BGR);
            case 4 -> Imgproc.cvtColor(view, out, Imgproc.COLOR_BGRA2BGR);
            default -> {
                out.release();
                return null;
            }
        }
        return out;
    }

    /** Frames skipped: undecodable packets FFmpeg reported (counted once per read) and frames with no usable image. */
    @Override
    public long skipped() {
        return skipped;
    }

    /** Frames dropped by the frame-rate cap. */
    public long throttled() {
        return throttled;
    }

    /** FFmpeg's last error on this source, e.g. why the stream ended; never frame content. */
    @Override
    public Optional<String> lastError() {
        return Optional.ofNullable(lastError);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        release(grabber);
        converter.close();
    }

    private static void release(FFmpegFrameGrabber g) {
        try {
            g.close();
        } catch (FrameGrabber.Exception | RuntimeException e) {
            // Closing is best effort: the native context is freed either way.
        }
    }
}
