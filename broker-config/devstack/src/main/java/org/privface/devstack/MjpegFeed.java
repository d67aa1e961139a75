package org.privface.devstack;

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
 */
final class MjpegFeed implements AutoCloseable {
    private static final String BOUNDARY = "privfaceframe";
    /** No response outlives this, whatever a test does. */
    private static final long MAX_RESPONSE_MILLIS = 120_000;

    private final HttpServer server;
    private final ExecutorService pool;
    private final List<byte[]> frames;
    private final int fps;
    private volatile boolean closed;
    final AtomicLong partsSent = new AtomicLong();

    MjpegFeed(Path folder, int fps) throws IOException {
        this.frames = jpegs(folder);
        if (frames.isEmpty()) {
            throw new IOException("no .png or .jpg images under " + folder);
        }
        this.fps = fps;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "mjpeg-feed");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(pool);
        server.createContext("/live", this::stream);
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/live";
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
            BufferedImage bgr = new BufferedImage(src.getWidth(), src.getHeight(), BufferedImage.TYPE_3BYTE_BGR);
            bgr.getGraphics().drawImage(src, 0, 0, null);
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            if (!ImageIO.write(bgr, "jpg", b)) {
                throw new IOException("no JPEG writer");
            }
            out.add(b.toByteArray());
        }
        return out;
    }

    private void stream(HttpExchange ex) throws IOException {
        if (closed) {
            ex.sendResponseHeaders(503, -1);
            ex.close();
            return;
        }
        ex.getResponseHeaders().set("Content-Type", "multipart/x-mixed-replace;boundary=" + BOUNDARY);
        ex.getResponseHeaders().set("Cache-Control", "no-cache");
        ex.sendResponseHeaders(200, 0);
        long start = System.nanoTime();
        long periodNanos = 1_000_000_000L / fps;
        try (OutputStream out = ex.getResponseBody()) {
            for (long i = 0; !closed && System.nanoTime() - start < MAX_RESPONSE_MILLIS * 1_000_000L; i++) {
                byte[] body = frames.get((int) (i % frames.size()));
                String head = "--" + BOUNDARY + "\r\nContent-Type: image/jpeg\r\nContent-Length: " + body.length
                        + "\r\n\r\n";
                out.write(head.getBytes(StandardCharsets.US_ASCII));
                out.write(body);
                out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                partsSent.incrementAndGet();
                // Paced by the clock, not by sleeps alone, so the rate holds on a busy machine.
                long wait = start + (i + 1) * periodNanos - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
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

    @Override
    public void close() {
        closed = true;
        server.stop(0);
        pool.shutdownNow();
    }
}
