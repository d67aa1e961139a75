package org.privface.localstack;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import javax.imageio.ImageIO;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * An IP camera stand-in on loopback: loops over a folder's images (sorted by path) as JPEG parts of a
 * multipart/x-mixed-replace response at a fixed frame rate, the way most cameras serve MJPEG over
 * HTTP. {@link #close()} ends every stream and refuses new connections: the camera goes away.
 *
 * <p>Faults, for tests: {@link #down()} takes the camera off the network until {@link #up()} (same
 * port); {@link Mode#HANG} keeps connections open and sends nothing (new ones get no answer at all);
 * {@link Mode#GARBAGE} sends random bytes under the multipart header. A connection that saw a fault
 * ends when the mode returns to {@link Mode#LIVE}, as a camera that reboots, so the reader reconnects.
 */
final class MjpegFeed implements AutoCloseable {
    private static final String BOUNDARY = "privfaceframe";
    /** No response outlives this, whatever a test does. */
    private static final long MAX_RESPONSE_MILLIS = 120_000;

    enum Mode { LIVE, HANG, GARBAGE }

    private final ExecutorService pool;
    private final List<byte[]> frames;
    private final int fps;
    /** Sends the frame due now, as a live camera does, skipping those it could not send in time; else every frame, late. */
    private final boolean live;
    private final long maxResponseMillis;
    private final int port;
    private HttpServer server;
    private volatile boolean closed;
    private volatile Mode mode = Mode.LIVE;
    /** Bumped by {@link #down()}: streams of an older generation end. */
    private volatile int generation;
    final AtomicLong partsSent = new AtomicLong();
    /** Frames a live feed skipped because the reader had not taken the earlier ones in time. */
    final AtomicLong partsSkipped = new AtomicLong();

    MjpegFeed(Path folder, int fps) throws IOException {
        this(jpegs(folder), fps, false, MAX_RESPONSE_MILLIS, folder.toString());
    }

    /**
     * A feed of JPEG frames already encoded, in order; {@code live}: each part is the frame due at
     * that moment, so a reader that falls behind misses frames (counted) rather than getting old ones.
     */
    MjpegFeed(List<byte[]> jpegFrames, int fps, boolean live, long maxResponseMillis) throws IOException {
        this(jpegFrames, fps, live, maxResponseMillis, "the frame list");
    }

    private MjpegFeed(List<byte[]> jpegFrames, int fps, boolean live, long maxResponseMillis, String from)
            throws IOException {
        this.frames = jpegFrames;
        if (frames.isEmpty()) {
            throw new IOException("no .png or .jpg images in " + from);
        }
        this.fps = fps;
        this.live = live;
        this.maxResponseMillis = maxResponseMillis;
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "mjpeg-feed");
            t.setDaemon(true);
            return t;
        });
        server = serve(0);
        port = server.getAddress().getPort();
    }

    private HttpServer serve(int onPort) throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", onPort), 0);
        s.setExecutor(pool);
        s.createContext("/live", this::stream);
        s.start();
        return s;
    }

    String url() {
        return "http://127.0.0.1:" + port + "/live";
    }

    void mode(Mode m) {
        mode = m;
    }

    /** The camera drops off the network: its streams end and connections are refused. */
    synchronized void down() {
        generation++;
        server.stop(0);
    }

    /** Back on the network, on the same port. */
    synchronized void up() throws IOException {
        if (!closed) {
            server.stop(0);
            server = serve(port);
        }
    }

    int distinctFrames() {
        return frames.size();
    }

    /** Every image re-encoded once as a 3-channel JPEG, as a camera would send it. */
    private static List<byte[]> jpegs(Path folder) throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.walk(folder)) {
            files = s.filter(p -> p.toString().endsWith(".png") || p.toString().endsWith(".jpg")).sorted().toList();
        }
        List<byte[]> out = new ArrayList<>(files.size());
        for (Path f : files) {
            BufferedImage src = ImageIO.read(f.toFile());
            if (src == null) {
                throw new IOException("cannot decode " + f);
            }
            out.add(jpeg(src));
        }
        return out;
    }

    /** An image as a 3-channel JPEG. */
    static byte[] jpeg(BufferedImage src) throws IOException {
        BufferedImage bgr = new BufferedImage(src.getWidth(), src.getHeight(), BufferedImage.TYPE_3BYTE_BGR);
        bgr.getGraphics().drawImage(src, 0, 0, null);
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        if (!ImageIO.write(bgr, "jpg", b)) {
            throw new IOException("no JPEG writer");
        }
        return b.toByteArray();
    }

    private void stream(HttpExchange ex) throws IOException {
        if (closed) {
            ex.sendResponseHeaders(503, -1);
            ex.close();
            return;
        }
        int gen = generation;
        long start = System.nanoTime();
        long periodNanos = 1_000_000_000L / fps;
        try {
            if (mode == Mode.HANG) {
                // Accepted, never answered, until the camera comes back or the time cap.
                while (mode == Mode.HANG && current(gen, start)) {
                    Thread.sleep(20);
                }
                return;
            }
            ex.getResponseHeaders().set("Content-Type", "multipart/x-mixed-replace;boundary=" + BOUNDARY);
            ex.getResponseHeaders().set("Cache-Control", "no-cache");
            ex.sendResponseHeaders(200, 0);
            // Deterministic junk bytes for the GARBAGE mode: a broken camera, nothing to do with privacy noise.
            java.util.Random junkBytes = new java.util.Random(gen);
            boolean faulted = false;
            try (OutputStream out = ex.getResponseBody()) {
                for (long i = 0; current(gen, start); i++) {
                    Mode m = mode;
                    if (m == Mode.LIVE && faulted) {
                        return; // the camera "reboots": this connection ends, the reader reconnects
                    }
                    if (m == Mode.HANG) {
                        faulted = true;
                    } else if (m == Mode.GARBAGE) {
                        faulted = true;
                        byte[] junk = new byte[4096];
                        junkBytes.nextBytes(junk);
                        out.write(junk);
                        out.flush();
                    } else {
                        byte[] body = frames.get((int) (i % frames.size()));
                        String head = "--" + BOUNDARY + "\r\nContent-Type: image/jpeg\r\nContent-Length: " + body.length
                                + "\r\n\r\n";
                        out.write(head.getBytes(StandardCharsets.US_ASCII));
                        out.write(body);
                        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                        partsSent.incrementAndGet();
                    }
                    // Paced by the clock, not by sleeps alone, so the rate holds on a busy machine.
                    long wait = start + (i + 1) * periodNanos - System.nanoTime();
                    if (live && wait < 0) {
                        // A live camera sends what it sees now: the frames it had no time to send are gone.
                        long due = (System.nanoTime() - start) / periodNanos;
                        partsSkipped.addAndGet(due - i - 1);
                        i = due - 1;
                        wait = start + (i + 1) * periodNanos - System.nanoTime();
                    }
                    if (wait > 0) {
                        Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
                    }
                }
            }
        } catch (IOException clientWentAway) {
            // The reader closed the connection: normal for a stream.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            ex.close();
        }
    }

    /** A stream goes on while the feed is open, not taken down since it began, and under the time cap. */
    private boolean current(int gen, long start) {
        return !closed && gen == generation && System.nanoTime() - start < maxResponseMillis * 1_000_000L;
    }

    @Override
    public synchronized void close() {
        closed = true;
        server.stop(0);
        pool.shutdownNow();
    }
}
