package org.privface.agent.capture;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.bytedeco.javacpp.Loader;

/**
 * A real RTSP camera stand-in: the ffmpeg program shipped in the bytedeco FFmpeg jar, pushing a lavfi test
 * pattern as H.264 to a grabber that listens on loopback. It retries while the listener is not up yet.
 */
final class RtspPublisher implements AutoCloseable {
    private static String ffmpeg;
    private static String encoder;

    private final Thread launcher;
    private volatile Process process;
    private volatile boolean closed;

    private RtspPublisher(String url, int seconds, long retryForMillis) {
        launcher = new Thread(() -> launch(url, seconds, retryForMillis), "rtsp-publisher");
        launcher.setDaemon(true);
        launcher.start();
    }

    /** Starts pushing 640x480 at 25 fps for the given seconds, retrying for a while if nothing listens yet. */
    static RtspPublisher push(String url, int seconds) {
        return new RtspPublisher(url, seconds, 15_000);
    }

    static String url(int port) {
        return "rtsp://127.0.0.1:" + port + "/cam";
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The H.264 encoder this ffmpeg build has: libx264 where present, else OpenH264, else MPEG-4 part 2. */
    static synchronized String encoder() {
        if (encoder == null) {
            String list = run(List.of(ffmpeg(), "-hide_banner", "-encoders"));
            encoder = list.contains(" libx264 ") ? "libx264" : list.contains(" libopenh264 ") ? "libopenh264" : "mpeg4";
        }
        return encoder;
    }

    static synchronized String ffmpeg() {
        if (ffmpeg == null) {
            ffmpeg = Loader.load(org.bytedeco.ffmpeg.ffmpeg.class);
        }
        return ffmpeg;
    }

    /** A command of the bundled ffmpeg, with its libraries found. */
    static ProcessBuilder builder(List<String> cmd) {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        // The program's RUNPATH finds FFmpeg's own libraries but not what those link (libva) beside them.
        pb.environment().put("LD_LIBRARY_PATH", new File(ffmpeg()).getParent());
        return pb;
    }

    private static String run(List<String> cmd) {
        try {
            Process p = builder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(20, TimeUnit.SECONDS);
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void launch(String url, int seconds, long retryForMillis) {
        List<String> cmd = new ArrayList<>(List.of(ffmpeg(), "-hide_banner", "-loglevel", "error", "-nostdin",
                "-re", "-f", "lavfi", "-i", "testsrc=size=640x480:rate=25", "-t", Integer.toString(seconds),
                "-c:v", encoder(), "-g", "25", "-pix_fmt", "yuv420p"));
        if (encoder().equals("libx264")) {
            cmd.addAll(List.of("-preset", "ultrafast", "-tune", "zerolatency"));
        }
        cmd.addAll(List.of("-f", "rtsp", "-rtsp_transport", "tcp", url));
        long deadline = System.currentTimeMillis() + retryForMillis;
        try {
            while (!closed) {
                Process p = builder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                process = p;
                // A refused connection ends the program at once; one that connected runs for the clip's length.
                if (!p.waitFor(1500, TimeUnit.MILLISECONDS) && !closed) {
                    p.waitFor(seconds + 20L, TimeUnit.SECONDS);
                    return;
                }
                if (p.exitValue() == 0 || System.currentTimeMillis() > deadline) {
                    return;
                }
                Thread.sleep(100);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits for the clip to be sent; true if the publisher ended within the timeout. */
    boolean awaitEnd(long millis) throws InterruptedException {
        launcher.join(millis);
        return !launcher.isAlive();
    }

    /** Kills the program, as a camera losing power would end its stream. */
    @Override
    public void close() throws InterruptedException {
        closed = true;
        Process p = process;
        if (p != null) {
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
        }
        launcher.join(5000);
    }
}
