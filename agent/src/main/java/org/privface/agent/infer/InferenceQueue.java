package org.privface.agent.infer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * One model's thread, fed by every camera (Frigate's shared detector queue): each camera has its
 * own bounded queue, and the thread serves the cameras round-robin, one request each in turn, so a
 * busy camera cannot starve a quiet one. A request to a camera whose queue is full is dropped, not
 * queued, and counted for that camera. The model is touched by this thread only, so it needs no
 * locking. A JDK executor has one queue for all submitters, which is why this is hand-written.
 */
public final class InferenceQueue implements AutoCloseable {
    /** A request refused because its camera's queue was full. */
    public static final class Dropped extends RuntimeException {
        Dropped(String model, String camera, int capacity) {
            super(model + ": camera " + camera + " already has " + capacity + " request(s) waiting; this one is dropped");
        }
    }

    private record Job<T>(Callable<T> work, CompletableFuture<T> result) {
        void run() {
            try {
                result.complete(work.call());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        }
    }

    /** One camera's counts: requests served and requests dropped. */
    public record CameraCounts(long served, long dropped) {
    }

    private final String model;
    private final int perCamera;
    private final Map<String, ArrayDeque<Job<?>>> queues = new LinkedHashMap<>();
    private final Map<String, long[]> counts = new LinkedHashMap<>();
    private final List<String> order = new ArrayList<>();
    private final Thread thread;
    private int next;
    private boolean closed;

    /**
     * @param model     its name, for the thread and errors
     * @param perCamera requests one camera may have waiting; a further one is dropped
     */
    public InferenceQueue(String model, int perCamera) {
        if (perCamera < 1) {
            throw new IllegalArgumentException("a camera's queue holds at least one request, was " + perCamera);
        }
        this.model = model;
        this.perCamera = perCamera;
        thread = new Thread(this::serve, "infer-" + model);
        thread.setDaemon(true);
        thread.start();
    }

    /** Queues {@code work} for {@code camera}; a future that fails with {@link Dropped} when its queue is full. */
    public synchronized <T> CompletableFuture<T> submit(String camera, Callable<T> work) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException(model + " is closed"));
        }
        ArrayDeque<Job<?>> q = queues.computeIfAbsent(camera, c -> {
            order.add(c);
            counts.put(c, new long[2]);
            return new ArrayDeque<>();
        });
        if (q.size() >= perCamera) {
            counts.get(camera)[1]++;
            return CompletableFuture.failedFuture(new Dropped(model, camera, perCamera));
        }
        Job<T> job = new Job<>(work, new CompletableFuture<>());
        q.add(job);
        notifyAll();
        return job.result();
    }

    /**
     * Runs {@code work} on the model's thread in {@code camera}'s turn and waits for it. The wait is
     * not cut short by an interrupt (the interrupt is kept for the caller): the agent's stop lets a
     * frame in progress finish, as a model run on the camera's own thread would.
     */
    public <T> T call(String camera, Callable<T> work) {
        CompletableFuture<T> f = submit(camera, work);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return f.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(model + " failed", e.getCause());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Per camera, in the order they first asked: served and dropped. */
    public synchronized Map<String, CameraCounts> counts() {
        Map<String, CameraCounts> m = new LinkedHashMap<>();
        counts.forEach((c, n) -> m.put(c, new CameraCounts(n[0], n[1])));
        return m;
    }

    private synchronized Job<?> take() throws InterruptedException {
        while (true) {
            if (closed) {
                return null;
            }
            for (int i = 0; i < order.size(); i++) {
                int at = (next + i) % order.size();
                String camera = order.get(at);
                Job<?> job = queues.get(camera).poll();
                if (job != null) {
                    next = (at + 1) % order.size();
                    counts.get(camera)[0]++;
                    return job;
                }
            }
            wait();
        }
    }

    private void serve() {
        try {
            for (Job<?> job; (job = take()) != null; ) {
                job.run();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the thread; requests still waiting fail. */
    @Override
    public void close() {
        List<Job<?>> left = new ArrayList<>();
        synchronized (this) {
            closed = true;
            queues.values().forEach(left::addAll);
            queues.values().forEach(ArrayDeque::clear);
            notifyAll();
        }
        left.forEach(j -> j.result().completeExceptionally(new IllegalStateException(model + " closed")));
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
