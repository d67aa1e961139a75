package org.privface.agent.infer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class InferenceQueueTest {
    /** Holds the model's thread on a first request, so the test can fill the queues behind it. */
    private static CountDownLatch block(InferenceQueue q) throws InterruptedException {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        q.submit("gate", () -> {
            started.countDown();
            return release.await(10, TimeUnit.SECONDS);
        });
        started.await(10, TimeUnit.SECONDS);
        return release;
    }

    @Test
    void servesCamerasInTurnNotInArrivalOrder() throws Exception {
        try (InferenceQueue q = new InferenceQueue("test", 3)) {
            CountDownLatch release = block(q);
            List<String> served = Collections.synchronizedList(new ArrayList<>());
            List<CompletableFuture<?>> all = new ArrayList<>();
            // A busy camera asks three times before a quiet one asks once.
            for (int i = 0; i < 3; i++) {
                int n = i;
                all.add(q.submit("busy", () -> served.add("busy" + n)));
            }
            all.add(q.submit("quiet", () -> served.add("quiet0")));
            release.countDown();
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
            // Round-robin from after the gate camera: busy, quiet, then busy's remaining two.
            assertEquals(List.of("busy0", "quiet0", "busy1", "busy2"), served);
        }
    }

    @Test
    void dropsBeyondACamerasQueueAndCountsItForThatCameraOnly() throws Exception {
        try (InferenceQueue q = new InferenceQueue("test", 2)) {
            CountDownLatch release = block(q);
            List<CompletableFuture<Integer>> busy = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                busy.add(q.submit("busy", () -> 1));
            }
            CompletableFuture<Integer> quiet = q.submit("quiet", () -> 2);
            ExecutionException e = assertThrows(ExecutionException.class, () -> busy.get(4).get(10, TimeUnit.SECONDS));
            assertInstanceOf(InferenceQueue.Dropped.class, e.getCause());
            release.countDown();
            assertEquals(1, busy.get(0).get(10, TimeUnit.SECONDS));
            assertEquals(2, quiet.get(10, TimeUnit.SECONDS));
            assertEquals(new InferenceQueue.CameraCounts(2, 3), q.counts().get("busy"));
            assertEquals(new InferenceQueue.CameraCounts(1, 0), q.counts().get("quiet"));
        }
    }

    @Test
    void callReturnsTheResultAndRethrowsTheModelsError() {
        try (InferenceQueue q = new InferenceQueue("test", 1)) {
            assertEquals("infer-test", q.call("cam", () -> Thread.currentThread().getName()));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> q.call("cam", () -> {
                        throw new IllegalArgumentException("bad face");
                    }));
            assertEquals("bad face", e.getMessage());
        }
    }

    @Test
    void anInterruptedCallerStillGetsItsResultAndKeepsTheInterrupt() throws Exception {
        try (InferenceQueue q = new InferenceQueue("test", 1)) {
            CountDownLatch release = block(q);
            Object[] got = new Object[2];
            Thread cam = new Thread(() -> {
                got[0] = q.call("cam", () -> "done");
                got[1] = Thread.currentThread().isInterrupted();
            });
            cam.start();
            Thread.sleep(100);
            cam.interrupt();
            Thread.sleep(100);
            release.countDown();
            cam.join(10_000);
            assertEquals("done", got[0]);
            assertEquals(true, got[1]);
        }
    }
}
