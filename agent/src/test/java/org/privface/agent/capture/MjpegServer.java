package org.privface.agent.capture;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.MatOfByte;
import org.opencv.core.MatOfInt;
import org.opencv.core.Point;
import org.opencv.core.Scalar;
import org.opencv.imgcodecs.Imgcodecs;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.image.OpenCv;

/**
 * An IP camera stand-in on loopback: JPEG frames as multipart/x-mixed-replace, the way most cameras serve
 * MJPEG over HTTP. Paths: /live (clean frames), /mixed (every third part random bytes), /garbage (random
 * bytes under a multipart content type). Every response is bounded in time; {@link #pause} makes /live
 * hold its connections open without sending, like a camera that hangs.
 */
final class MjpegServer implements AutoCloseable {
    static final int WIDTH = 320;
    static final int HEIGHT = 240;
    private static final String BOUNDARY = "privfaceframe";
    /** No response outlives this, whatever a test does. */
    private static final long MAX_RESPONSE_MILLIS = 30_000;

    private final HttpServer server;
    private final ExecutorService pool;
    private final int fps;
    private volatile boolean paused;
    private volatile boolean closed;
    final AtomicInteger partsSent = new AtomicInteger();

    MjpegServer(int fps) throws IOException {
        OpenCv.load();
        this.fps = fps;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "mjpeg-server");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(pool);
        server.createContext("/live", ex -> stream(ex, 0));
        server.createContext("/mixed", ex -> stream(ex, 3));
        server.createContext("/garbage", this::garbage);
        server.start();
    }

    String url(String path) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + path;
    }

    void pause(boolean p) {
        paused = p;
    }

    /** A red frame with a moving white disc: red proves BGR order survives, the disc that frames differ. */
    static byte[] jpeg(int i) {
        Mat m = new Mat(HEIGHT, WIDTH, CvType.CV_8UC3, new Scalar(0, 0, 200));
        Imgproc.circle(m, new Point(20 + (i * 7) % (WIDTH - 40), HEIGHT / 2.0), 15, new Scalar(255, 255, 255), -1);
        MatOfByte buf = new MatOfByte();
        Imgcodecs.imencode(".jpg", m, buf, new MatOfInt(Imgcodecs.IMWRITE_JPEG_QUALITY, 90));
        byte[] bytes = buf.toArray();
        buf.release();
        m.release();
        return bytes;
    }

    private void stream(HttpExchange ex, int corruptEvery) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "multipart/x-mixed-replace;boundary=" + BOUNDARY);
        ex.getResponseHeaders().set("Cache-Control", "no-cache");
        ex.sendResponseHeaders(200, 0);
        Random random = new Random(42);
        long end = System.currentTimeMillis() + MAX_RESPONSE_MILLIS;
        try (OutputStream out = ex.getResponseBody()) {
            for (int i = 0; !closed && System.currentTimeMillis() < end; i++) {
                if (paused) {
                    Thread.sleep(20);
                    i--;
                    continue;
                }
                byte[] body = jpeg(i);
                if (corruptEvery > 0 && i % corruptEvery == corruptEvery - 1) {
                    random.nextBytes(body);
                }
                String head = "--" + BOUNDARY + "\r\nContent-Type: image/jpeg\r\nContent-Length: " + body.length + "\r\n\r\n";
                out.write(head.getBytes(StandardCharsets.US_ASCII));
                out.write(body);
                out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                partsSent.incrementAndGet();
                Thread.sleep(1000 / fps);
            }
        } catch (IOException clientWentAway) {
            // The reader closed the connection: normal for a stream.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            ex.close();
        }
    }

    private void garbage(HttpExchange ex) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "multipart/x-mixed-replace;boundary=" + BOUNDARY);
        ex.sendResponseHeaders(200, 0);
        Random random = new Random(7);
        byte[] chunk = new byte[16 * 1024];
        long end = System.currentTimeMillis() + 5_000;
        try (OutputStream out = ex.getResponseBody()) {
            while (!closed && System.currentTimeMillis() < end) {
                random.nextBytes(chunk);
                out.write(chunk);
                out.flush();
                Thread.sleep(5);
            }
        } catch (IOException clientWentAway) {
            // Expected: the reader gives up on the garbage.
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
