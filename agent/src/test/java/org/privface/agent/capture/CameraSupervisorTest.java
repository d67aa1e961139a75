package org.privface.agent.capture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.privface.agent.capture.CameraSupervisor.Settings;
import org.privface.agent.capture.CameraSupervisor.State;
import org.privface.agent.capture.CameraSupervisor.Status;

@Timeout(value = 40, unit = TimeUnit.SECONDS)
class CameraSupervisorTest {

    private static final Settings FAST = new Settings(Duration.ofMillis(100), Duration.ofMillis(800), 0.2,
            Duration.ofSeconds(1), Duration.ofMillis(500));

    private static void await(String what, long millis, BooleanSupplier condition, CameraSupervisor cam)
            throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for " + what + "; status " + cam.status());
            }
            Thread.sleep(20);
        }
    }

    @Test
    void rtspCameraReconnectsAfterThePublisherGoesAway() throws Exception {
        String url = RtspPublisher.url(RtspPublisher.freePort());
        FfmpegSource.Options listen = FfmpegSource.Options.defaults().withListen(true).withIoTimeout(Duration.ofSeconds(3));
        AtomicInteger sizeErrors = new AtomicInteger();
        try (CameraSupervisor cam = CameraSupervisor.ffmpeg("rtsp-cam", url, listen, FAST, f -> {
            if (f.image().cols() != 640 || f.image().rows() != 480) {
                sizeErrors.incrementAndGet();
            }
        })) {
            cam.start();
            long firstRun;
            try (RtspPublisher pub = RtspPublisher.push(url, 30)) {
                await("first frames", 15_000, () -> cam.status().frames() >= 10, cam);
                assertEquals(State.LIVE, cam.state());
            } // killed mid-clip, as a camera that crashes
            // The publisher is gone: the stream ends and the camera waits to reopen.
            await("the camera to notice", 5_000,
                    () -> Set.of(State.BACKOFF, State.STALLED, State.CONNECTING).contains(cam.state())
                            && cam.status().reconnects() >= 1, cam);
            firstRun = cam.status().frames();
            assertNotNull(cam.status().lastError(), "the end of the stream is reported");
            try (RtspPublisher pub = RtspPublisher.push(url, 2)) {
                await("frames after reconnecting", 15_000, () -> cam.status().frames() >= firstRun + 10, cam);
                Status s = cam.status();
                assertEquals(State.LIVE, s.state());
                assertTrue(s.reconnects() >= 1);
                assertNull(s.lastError(), "a live camera has no current error");
                pub.awaitEnd(15_000);
            }
            assertEquals(0, sizeErrors.get(), "every frame 640x480");
            long t0 = System.nanoTime();
            cam.stop();
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(2), "stop returns promptly");
            assertEquals(State.STOPPED, cam.state());
            assertTrue(cam.awaitTermination(Duration.ofSeconds(6)), "the camera's thread ends");
        }
    }

    @Test
    void silentMjpegCameraIsReportedStalledAndStopDoesNotWaitForIt() throws Exception {
        Duration ioTimeout = Duration.ofSeconds(4);
        try (MjpegServer server = new MjpegServer(25);
             CameraSupervisor cam = CameraSupervisor.ffmpeg("http-cam", server.url("/live"),
                     FfmpegSource.Options.defaults().withIoTimeout(ioTimeout), FAST, f -> { })) {
            cam.start();
            await("live frames", 10_000, () -> cam.status().frames() >= 10, cam);
            assertEquals(State.LIVE, cam.state());

            server.pause(true);
            long paused = System.nanoTime();
            await("STALLED", 3_000, () -> cam.state() == State.STALLED, cam);
            long stalledAfter = System.nanoTime() - paused;
            // Stall time 1 s, checked every 200 ms; the last frame may have been in flight at the pause.
            assertTrue(stalledAfter < TimeUnit.MILLISECONDS.toNanos(1600), "stalled after " + stalledAfter / 1e6 + " ms");
            assertTrue(cam.status().lastError().startsWith("no frame for"), cam.status().lastError());

            // The read is still blocked in FFmpeg (its I/O timeout is 4 s): stop must not wait for it.
            long t0 = System.nanoTime();
            cam.stop();
            long stopMillis = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(stopMillis < 1000, "stop took " + stopMillis + " ms");
            assertEquals(State.STOPPED, cam.state());
            assertTrue(cam.awaitTermination(ioTimeout.plusSeconds(3)), "FFmpeg's timeout frees the thread");
        }
    }

    /**
     * A pipeline slower than the camera (200 ms a frame against 25 frames/s) gets the newest frame each
     * time, and every frame read is either processed or counted as dropped: none queues, none vanishes.
     */
    @Test
    void slowPipelineOnALiveCameraDropsFramesAndCountsThem() throws Exception {
        List<Long> handed = Collections.synchronizedList(new ArrayList<>());
        try (MjpegServer server = new MjpegServer(25);
             CameraSupervisor cam = CameraSupervisor.ffmpeg("http-cam", server.url("/live"),
                     FfmpegSource.Options.defaults().withIoTimeout(Duration.ofSeconds(5)), FAST, f -> {
                         handed.add(f.sequence());
                         try {
                             Thread.sleep(200);
                         } catch (InterruptedException e) {
                             Thread.currentThread().interrupt();
                         }
                     })) {
            cam.start();
            await("live frames", 10_000, () -> cam.status().frames() >= 10, cam);
            server.pause(true);
            // The last frame read is processed too: then the counts stop moving.
            await("the pipeline to finish the newest frame", 5_000, () -> {
                Status s = cam.status();
                return !handed.isEmpty() && s.frames() == handed.size() && s.frames() + s.dropped() == handed.get(handed.size() - 1) + 1;
            }, cam);
            Status s = cam.status();
            assertEquals(0, s.reconnects());
            assertTrue(s.dropped() >= s.frames(), "at 25 frames/s a 200 ms pipeline drops most frames: " + s);
            for (int i = 1; i < handed.size(); i++) {
                assertTrue(handed.get(i) > handed.get(i - 1), "frames in order, none twice: " + handed);
            }
        }
    }

    /**
     * stop() returns within its grace while a frame is still in the pipeline (here 1.5 s, past the 0.5 s
     * grace); awaitFrameInProgress then waits for that frame, as the agent does before closing its spool.
     */
    @Test
    void stopReturnsWithinItsGraceAndTheFrameInProgressCanBeAwaited() throws Exception {
        java.util.concurrent.CountDownLatch inFrame = new java.util.concurrent.CountDownLatch(1);
        AtomicInteger finished = new AtomicInteger();
        try (MjpegServer server = new MjpegServer(25);
             CameraSupervisor cam = CameraSupervisor.ffmpeg("slow-cam", server.url("/live"),
                     FfmpegSource.Options.defaults().withIoTimeout(Duration.ofSeconds(5)), FAST, f -> {
                         inFrame.countDown();
                         long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
                         while (System.nanoTime() < end) { // a frame that does not heed interrupts, like native code
                             try {
                                 Thread.sleep(Math.max(1, (end - System.nanoTime()) / 1_000_000));
                             } catch (InterruptedException ignored) {
                                 // keep going: the frame finishes what it started
                             }
                         }
                         finished.incrementAndGet();
                     })) {
            cam.start();
            assertTrue(inFrame.await(10, TimeUnit.SECONDS), "a frame reached the pipeline");
            int before = finished.get();
            cam.stop();
            assertEquals(before, finished.get(), "stop returned within its grace, the frame still running");
            assertTrue(cam.awaitFrameInProgress(Duration.ofSeconds(10)), "the frame in progress ends");
            assertEquals(before + 1, finished.get(), "and it was finished, not abandoned");
        }
    }

    @Test
    void resumedMjpegCameraGoesLiveAgain() throws Exception {
        try (MjpegServer server = new MjpegServer(25);
             CameraSupervisor cam = CameraSupervisor.ffmpeg("http-cam", server.url("/live"),
                     FfmpegSource.Options.defaults().withIoTimeout(Duration.ofSeconds(5)), FAST, f -> { })) {
            cam.start();
            await("live frames", 10_000, () -> cam.status().frames() >= 5, cam);
            server.pause(true);
            await("STALLED", 3_000, () -> cam.state() == State.STALLED, cam);
            server.pause(false);
            await("LIVE again", 3_000, () -> cam.state() == State.LIVE, cam);
            assertNull(cam.status().lastError());
            assertEquals(0, cam.status().reconnects(), "same connection: a stall is not a reconnect");
        }
    }

    @Test
    void garbageStreamIsAnErrorStateNotACrash() throws Exception {
        try (MjpegServer server = new MjpegServer(25);
             CameraSupervisor cam = CameraSupervisor.ffmpeg("junk-cam", server.url("/garbage"),
                     FfmpegSource.Options.defaults().withIoTimeout(Duration.ofSeconds(2)), FAST, f -> { })) {
            cam.start();
            await("a failed open", 10_000, () -> cam.status().lastError() != null, cam);
            await("a retry", 10_000, () -> cam.status().reconnects() >= 1, cam);
            Status s = cam.status();
            assertTrue(s.lastError().startsWith("open failed: cannot open " + server.url("/garbage")), s.lastError());
            assertTrue(Set.of(State.BACKOFF, State.CONNECTING).contains(s.state()), s.toString());
            assertEquals(0, s.frames());
            cam.stop();
            assertTrue(cam.awaitTermination(Duration.ofSeconds(5)));
        }
    }

    @Test
    void fileSourceFinishesAndCountsConsumerErrors() throws Exception {
        String avi = FfmpegSourceTest.walkby().toString();
        AtomicInteger seen = new AtomicInteger();
        try (CameraSupervisor cam = CameraSupervisor.ffmpeg("file", avi, FfmpegSource.Options.defaults(), FAST, f -> {
            if (seen.incrementAndGet() % 2 == 0) {
                throw new IllegalStateException("consumer fails on even frames");
            }
        })) {
            cam.start();
            assertTrue(cam.awaitTermination(Duration.ofSeconds(20)));
            Status s = cam.status();
            assertEquals(State.FINISHED, s.state());
            assertEquals(seen.get(), s.frames());
            assertTrue(s.frames() > 0);
            assertEquals(s.frames() / 2, s.consumerErrors(), "a throwing consumer does not stop the camera");
            assertEquals(0, s.reconnects(), "a file is read once");
            assertNull(s.lastError());
            cam.stop();
            assertEquals(State.FINISHED, cam.state(), "stop keeps a finished camera finished");
        }
    }

    @Test
    void missingFileFailsWithoutRetrying() throws Exception {
        try (CameraSupervisor cam = CameraSupervisor.ffmpeg("file", "/nonexistent/clip.mp4",
                FfmpegSource.Options.defaults(), FAST, f -> { })) {
            cam.start();
            assertTrue(cam.awaitTermination(Duration.ofSeconds(5)));
            Status s = cam.status();
            assertEquals(State.FAILED, s.state());
            assertTrue(s.lastError().contains("no such video file"), s.lastError());
            assertEquals(0, s.reconnects());
        }
    }

    @Test
    void backoffDoublesUpToTheCapWithJitterBelowIt() {
        Settings s = new Settings(Duration.ofMillis(100), Duration.ofMillis(1000), 0.25, Duration.ofSeconds(5),
                Duration.ofSeconds(1));
        for (int i = 0; i < 200; i++) {
            long first = s.backoff(0).toMillis();
            long third = s.backoff(2).toMillis();
            long late = s.backoff(40).toMillis();
            assertTrue(first >= 75 && first <= 100, "first " + first);
            assertTrue(third >= 300 && third <= 400, "third " + third);
            assertTrue(late >= 750 && late <= 1000, "capped " + late);
        }
    }
}
