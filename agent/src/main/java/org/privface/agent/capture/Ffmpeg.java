package org.privface.agent.capture;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.bytedeco.ffmpeg.avutil.LogCallback;
import org.bytedeco.ffmpeg.global.avutil;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacv.FFmpegFrameGrabber;
import org.privface.agent.image.OpenCv;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads FFmpeg once and routes its log to SLF4J. JavaCV ignores decoder errors, so the log is also how
 * a source learns that a read went past packets FFmpeg could not decode: errors are tallied per thread,
 * and each source reads on one thread.
 */
final class Ffmpeg {
    private static final Logger LOG = LoggerFactory.getLogger("org.privface.agent.capture.ffmpeg");
    private static final Pattern CREDENTIALS = Pattern.compile("(?i)([a-z][a-z0-9+.-]*://)[^/@\\s]+@");
    private static final Pattern ERROR_CODE = Pattern.compile("^(\\w+)\\(\\) error (-?\\d+)");
    private static final Pattern CONTEXT = Pattern.compile("\\[([^\\]@]+?) @ 0x[0-9a-fA-F]+\\] ");
    private static final ThreadLocal<Errors> ERRORS = ThreadLocal.withInitial(Errors::new);
    /** Kept reachable: FFmpeg holds only a native pointer to it. */
    private static LogCallback callback;
    private static volatile boolean loaded;

    private Ffmpeg() {
    }

    static void load() throws IOException {
        if (loaded) {
            return;
        }
        synchronized (Ffmpeg.class) {
            if (loaded) {
                return;
            }
            OpenCv.load();
            try {
                FFmpegFrameGrabber.tryLoad();
            } catch (Exception | LinkageError e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                throw new IOException("FFmpeg natives did not load (its libavdevice needs the system's libpulse.so.0,"
                        + " Debian package libpulse0): " + cause, e);
            }
            callback = new LogCallback() {
                @Override
                public void call(int level, BytePointer msg) {
                    if (level > avutil.AV_LOG_WARNING) {
                        return;
                    }
                    // "[tcp @ 0x55d0c0] failed" reads as "tcp: failed"; addresses mean nothing outside the process.
                    String text = CONTEXT.matcher(redact(msg.getString().strip())).replaceAll("$1: ");
                    if (level <= avutil.AV_LOG_ERROR) {
                        ERRORS.get().add(text);
                    }
                    // Debug: a broken camera can raise one per frame; the counts reach the status instead.
                    LOG.debug("{}", text);
                }
            };
            avutil.av_log_set_level(avutil.AV_LOG_WARNING);
            avutil.setLogCallback(callback);
            loaded = true;
        }
    }

    /** Starts tallying FFmpeg errors raised on this thread; returns the tally. */
    static Errors track() {
        Errors e = ERRORS.get();
        e.count = 0;
        e.last = null;
        return e;
    }

    /**
     * A JavaCV error message made readable: "avformat_open_input() error -111: Could not open input ..." becomes
     * "Connection refused (avformat_open_input() error -111)"; anything else is only redacted.
     */
    static String describe(String javacvMessage) {
        String m = redact(javacvMessage);
        if (m == null) {
            return "unknown error";
        }
        Matcher code = ERROR_CODE.matcher(m);
        if (!code.find()) {
            return m;
        }
        byte[] buf = new byte[256];
        if (avutil.av_strerror(Integer.parseInt(code.group(2)), buf, buf.length) != 0) {
            return m;
        }
        int len = 0;
        while (len < buf.length && buf[len] != 0) {
            len++;
        }
        return new String(buf, 0, len, StandardCharsets.UTF_8) + " (" + code.group(1) + "() error " + code.group(2) + ")";
    }

    /** Hides user:password in URLs, which cameras often carry, before a URL reaches a log or a message. */
    static String redact(String s) {
        return s == null ? null : CREDENTIALS.matcher(s).replaceAll("$1***@");
    }

    /** FFmpeg errors on one thread since {@link #track()}. */
    static final class Errors {
        private int count;
        private String last;

        void add(String message) {
            count++;
            last = message;
        }

        int count() {
            return count;
        }

        /** The last error FFmpeg reported, for a message that says why an open or a read failed. */
        String last() {
            return last;
        }
    }
}
