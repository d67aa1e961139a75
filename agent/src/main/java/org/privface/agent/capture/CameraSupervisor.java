package org.privface.agent.capture;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one camera reading on its own thread: reopens a live source with exponential backoff when it
 * fails to open or its stream ends, and a watchdog marks it {@link State#STALLED} when frames stop.
 * Each frame is released when the consumer returns; a consumer that needs the pixels later must copy them.
 *
 * <p>A file's frames go to the consumer on the camera's thread, every one of them. A live camera's go
 * through a one-frame slot to a second thread that runs the consumer: the camera's thread keeps reading
 * at the camera's rate, and a frame still in the slot when the next arrives is released unprocessed and
 * counted ({@link Status#dropped()}). A consumer slower than the camera therefore sees the newest frame,
 * at most one frame old, and nothing queues in the agent (frames of a live source must not share pixels
 * with later reads; {@link FfmpegSource} copies each).
 *
 * <p>A blocked FFmpeg read cannot be interrupted from outside (JavaCV holds the grabber's lock while it
 * reads), so a silent peer is ended by the source's I/O timeout. {@link #stop()} does not wait for that:
 * it returns after at most the stop grace, and the camera's thread closes the source when the read returns.
 */
public final class CameraSupervisor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CameraSupervisor.class);

    public enum State {
        /** Opening the source. */
        CONNECTING,
        /** Open, and frames arrived within the stall time. */
        LIVE,
        /** Open, but no frame for longer than the stall time. */
        STALLED,
        /** Waiting before the next attempt to open. */
        BACKOFF,
        /** A file source ended normally. */
        FINISHED,
        /** A file source could not be opened or read; not retried. */
        FAILED,
        /** Stopped by {@link #stop()}. */
        STOPPED;

        boolean terminal() {
            return this == FINISHED || this == FAILED || this == STOPPED;
        }
    }

    /**
     * @param camera         the camera's id, as it appears in logs and status
     * @param state          where the camera is now
     * @param since          when it entered that state
     * @param frames         frames handed to the consumer, over all connections
     * @param dropped        live frames replaced in the slot by a newer one before the consumer was free
     * @param skipped        frames the sources skipped as undecodable, over all connections
     * @param lastFrameAt    when the last frame arrived; null before the first
     * @param reconnects     attempts to open after the first
     * @param consumerErrors frames whose consumer threw
     * @param lastError      why the last open or stream failed, or why it is stalled; text only, never pixels
     */
    public record Status(String camera, State state, Instant since, long frames, long dropped, long skipped,
                         Instant lastFrameAt, long reconnects, long consumerErrors, String lastError) {
    }

    /**
     * @param initialBackoff wait before the first reopen; doubles per failed attempt
     * @param maxBackoff     the doubling stops here
     * @param jitter         fraction in [0, 1] taken off each wait at random, so cameras behind one switch
     *                       that failed together do not all reconnect together
     * @param stallAfter     no frame for this long marks a live camera STALLED
     * @param stopGrace      how long {@link #stop()} waits for the camera's thread before returning anyway
     */
    public record Settings(Duration initialBackoff, Duration maxBackoff, double jitter, Duration stallAfter,
                           Duration stopGrace) {
        public Settings {
            Objects.requireNonNull(initialBackoff, "initialBackoff");
            Objects.requireNonNull(maxBackoff, "maxBackoff");
            Objects.requireNonNull(stallAfter, "stallAfter");
            Objects.requireNonNull(stopGrace, "stopGrace");
            if (initialBackoff.isNegative() || maxBackoff.compareTo(initialBackoff) < 0) {
                throw new IllegalArgumentException("need 0 <= initialBackoff <= maxBackoff");
            }
            if (!(jitter >= 0 && jitter <= 1)) {
                throw new IllegalArgumentException("jitter must be in [0, 1]");
            }
            if (stallAfter.isNegative() || stallAfter.isZero() || stopGrace.isNegative()) {
                throw new IllegalArgumentException("stallAfter must be positive, stopGrace not negative");
            }
        }

        public static Settings defaults() {
            return new Settings(Duration.ofSeconds(1), Duration.ofSeconds(30), 0.2, Duration.ofSeconds(5),
                    Duration.ofSeconds(2));
        }

        /** The wait before attempt {@code failures + 1}: initial × 2^failures, capped, less up to jitter of it. */
        Duration backoff(int failures) {
            long cap = maxBackoff.toMillis();
            long base = initialBackoff.toMillis() << Math.min(failures, 30);
            long ms = base < 0 || base > cap ? cap : base;
            long off = (long) (ms * jitter * ThreadLocalRandom.current().nextDouble());
            return Duration.ofMillis(ms - off);
        }
    }

    /** Opens the camera's source; called again for every reconnect. */
    @FunctionalInterface
    public interface Opener {
        FrameSource open() throws IOException;
    }

    private final String camera;
    private final Opener opener;
    private final boolean live;
    private final Settings settings;
    private final Consumer<Frame> consumer;
    private final Thread worker;
    /** A live camera's consumer thread; null for a file. */
    private final Thread pipeline;
    /** Guards {@link #pending}, the one frame waiting for the live consumer. */
    private final Object slot = new Object();
    private Frame pending;
    private final ScheduledExecutorService watchdog;
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final CountDownLatch stopSignal = new CountDownLatch(1);

    // State and since change together under this lock; counters are read without it.
    private final Object lock = new Object();
    private State state = State.CONNECTING;
    private Instant since = Instant.now();
    private String lastError;
    private volatile long frames;
    private volatile long dropped;
    private volatile long skippedClosed;
    private volatile FrameSource current;
    private volatile long lastProgressNanos = System.nanoTime();
    private volatile Instant lastFrameAt;
    private volatile long reconnects;
    private volatile long consumerErrors;

    /**
     * @param live true for a camera (reopened when it ends), false for a file (read once)
     */
    /** The camera in the MDC of its own threads, so each log line (JSON logs) names it. */
    private Runnable withCamera(Runnable r) {
        return () -> {
            org.slf4j.MDC.put("camera", camera);
            r.run();
        };
    }

    public CameraSupervisor(String camera, Opener opener, boolean live, Settings settings, Consumer<Frame> consumer) {
        this.camera = Objects.requireNonNull(camera, "camera");
        this.opener = Objects.requireNonNull(opener, "opener");
        this.live = live;
        this.settings = Objects.requireNonNull(settings, "settings");
        this.consumer = Objects.requireNonNull(consumer, "consumer");
        this.worker = new Thread(withCamera(this::run), "camera-" + camera);
        worker.setDaemon(true);
        this.pipeline = live ? new Thread(withCamera(this::consumeLatest), "camera-" + camera + "-pipeline") : null;
        if (pipeline != null) {
            pipeline.setDaemon(true);
        }
        this.watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "camera-" + camera + "-watchdog");
            t.setDaemon(true);
            return t;
        });
    }

    /** A supervisor for a URI that {@link FfmpegSource} opens; live unless it names a file. */
    public static CameraSupervisor ffmpeg(String camera, String uri, FfmpegSource.Options options, Settings settings,
                                          Consumer<Frame> consumer) {
        return new CameraSupervisor(camera, () -> new FfmpegSource(uri, options), FfmpegSource.kindOf(uri).live(),
                settings, consumer);
    }

    public CameraSupervisor start() {
        if (!started.compareAndSet(false, true)) {
            throw new IllegalStateException("already started");
        }
        long period = Math.max(20, Math.min(1000, settings.stallAfter().toMillis() / 5));
        watchdog.scheduleAtFixedRate(this::checkStall, period, period, TimeUnit.MILLISECONDS);
        if (pipeline != null) {
            pipeline.start();
        }
        worker.start();
        return this;
    }

    public Status status() {
        FrameSource src = current;
        long skippedNow = skippedClosed + (src == null ? 0 : src.skipped());
        synchronized (lock) {
            return new Status(camera, state, since, frames, dropped, skippedNow, lastFrameAt, reconnects,
                    consumerErrors, lastError);
        }
    }

    public State state() {
        synchronized (lock) {
            return state;
        }
    }

    /**
     * Stops reading and returns within the stop grace. Idempotent. A FINISHED or FAILED camera keeps its
     * state; any other becomes STOPPED.
     */
    public void stop() {
        if (!stopping.compareAndSet(false, true)) {
            return;
        }
        stopSignal.countDown();
        synchronized (slot) {
            slot.notifyAll();
        }
        watchdog.shutdownNow();
        synchronized (lock) {
            if (!state.terminal()) {
                enter(State.STOPPED);
            }
        }
        if (!started.get()) {
            return;
        }
        // Wakes a consumer blocked in Java; a native FFmpeg read ignores it and ends at its I/O timeout.
        worker.interrupt();
        if (pipeline != null) {
            pipeline.interrupt();
        }
        try {
            long graceEnd = System.nanoTime() + Math.max(1, settings.stopGrace().toNanos());
            worker.join(Math.max(1, settings.stopGrace().toMillis()));
            if (pipeline != null) {
                pipeline.join(Math.max(1, (graceEnd - System.nanoTime()) / 1_000_000));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (worker.isAlive()) {
            LOG.info("camera {}: stopped; its thread is still in a blocking read and closes the source when it returns",
                    camera);
        }
    }

    /**
     * After {@link #stop()}: waits until the thread that runs frames through the pipeline has ended, so
     * a frame in progress (its ε already charged) reaches the spool before the spool closes. Unlike
     * {@link #awaitTermination}, it does not wait for a live source's blocking read.
     */
    public boolean awaitFrameInProgress(Duration timeout) throws InterruptedException {
        if (!started.get()) {
            return true;
        }
        Thread runner = pipeline != null ? pipeline : worker;
        runner.join(Math.max(1, timeout.toMillis()));
        return !runner.isAlive();
    }

    /** Waits until the camera's thread has ended and closed its source; true if it did within the timeout. */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        if (!started.get()) {
            return true;
        }
        long end = System.nanoTime() + timeout.toNanos();
        worker.join(Math.max(1, timeout.toMillis()));
        if (pipeline != null) {
            if (!worker.isAlive()) {
                // The camera's thread ended (stopped, or a live source that gave up): nothing more will come.
                stopping.set(true);
                synchronized (slot) {
                    slot.notifyAll();
                }
            }
            pipeline.join(Math.max(1, (end - System.nanoTime()) / 1_000_000));
            return !worker.isAlive() && !pipeline.isAlive();
        }
        return !worker.isAlive();
    }

    @Override
    public void close() {
        stop();
    }

    private void run() {
        int failures = 0;
        boolean first = true;
        while (!stopping.get()) {
            if (!first) {
                reconnects++;
            }
            first = false;
            setState(State.CONNECTING, null);
            FrameSource src;
            try {
                src = opener.open();
            } catch (IOException | RuntimeException e) {
                String why = "open failed: " + e.getMessage();
                if (!live) {
                    setState(State.FAILED, why);
                    break;
                }
                LOG.warn("camera {}: {}", camera, why);
                if (!backoff(failures++, why)) {
                    break;
                }
                continue;
            }
            String why;
            boolean broke = false;
            try {
                if (stopping.get()) {
                    break;
                }
                current = src;
                lastProgressNanos = System.nanoTime();
                setState(State.LIVE, null);
                if (read(src)) {
                    failures = 0;
                }
                why = "stream ended" + src.lastError().map(e -> ": " + e).orElse("");
            } catch (RuntimeException e) {
                why = "read failed: " + e.getMessage();
                broke = true;
            } finally {
                current = null;
                skippedClosed += src.skipped();
                src.close();
            }
            if (stopping.get()) {
                break;
            }
            if (!live) {
                if (broke) {
                    setState(State.FAILED, why);
                } else {
                    setState(State.FINISHED, null);
                }
                break;
            }
            LOG.warn("camera {}: {}", camera, why);
            if (!backoff(failures++, why)) {
                break;
            }
        }
        watchdog.shutdownNow();
    }

    /**
     * Reads frames until the source ends or stop; true if at least one frame came. A file's frames go to
     * the consumer here; a live camera's into the slot, replacing (and dropping) one still waiting there.
     */
    private boolean read(FrameSource src) {
        boolean any = false;
        Optional<Frame> next;
        while (!stopping.get() && (next = src.next()).isPresent()) {
            Frame f = next.get();
            if (stopping.get()) {
                f.close();
                break;
            }
            any = true;
            lastFrameAt = f.capturedAt();
            lastProgressNanos = System.nanoTime();
            synchronized (lock) {
                if (state == State.STALLED) {
                    enter(State.LIVE);
                    lastError = null;
                }
            }
            if (pipeline == null) {
                try (f) {
                    deliver(f);
                }
                continue;
            }
            Frame replaced;
            synchronized (slot) {
                if (stopping.get()) {
                    replaced = f; // the consumer's thread has ended or is ending: nobody will take it
                } else {
                    replaced = pending;
                    pending = f;
                    slot.notifyAll();
                }
            }
            if (replaced != null) {
                replaced.close();
                if (replaced != f) {
                    dropped++;
                }
            }
        }
        return any;
    }

    /** A live camera's consumer thread: takes the newest frame from the slot until stop. */
    private void consumeLatest() {
        while (true) {
            Frame f;
            synchronized (slot) {
                while (pending == null && !stopping.get()) {
                    try {
                        slot.wait();
                    } catch (InterruptedException e) {
                        // Only stop() interrupts this thread; the loop sees stopping.
                    }
                }
                if (stopping.get()) {
                    if (pending != null) {
                        pending.close();
                        pending = null;
                    }
                    return;
                }
                f = pending;
                pending = null;
            }
            try (f) {
                deliver(f);
            }
        }
    }

    private void deliver(Frame f) {
        frames++;
        try {
            consumer.accept(f);
        } catch (RuntimeException e) {
            long n = ++consumerErrors;
            // The exception's own text could quote whatever the consumer put there; name its type only.
            if (n == 1) {
                LOG.warn("camera {}: frame consumer threw {}", camera, e.getClass().getName());
            } else {
                LOG.debug("camera {}: frame consumer threw {} ({} so far)", camera, e.getClass().getName(), n);
            }
        }
    }

    /** Waits before the next attempt; false if stopped meanwhile. */
    private boolean backoff(int failures, String why) {
        Duration wait = settings.backoff(failures);
        setState(State.BACKOFF, why);
        try {
            return !stopSignal.await(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            // Only stop() interrupts this thread.
            return false;
        }
    }

    private void checkStall() {
        long quietNanos = System.nanoTime() - lastProgressNanos;
        if (quietNanos <= settings.stallAfter().toNanos()) {
            return;
        }
        synchronized (lock) {
            if (state == State.LIVE) {
                enter(State.STALLED);
                lastError = String.format(java.util.Locale.ROOT, "no frame for %.1f s", quietNanos / 1e9);
                LOG.warn("camera {}: {}", camera, lastError);
            }
        }
    }

    private void setState(State s, String error) {
        synchronized (lock) {
            if (state == State.STOPPED) {
                return;
            }
            enter(s);
            lastError = error != null ? error : (s == State.LIVE || s == State.FINISHED ? null : lastError);
        }
    }

    private void enter(State s) {
        if (state != s) {
            state = s;
            since = Instant.now();
        }
    }
}
