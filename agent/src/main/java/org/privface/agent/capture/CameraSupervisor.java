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
 * Each frame goes to the consumer on the camera's thread and is released when the consumer returns; a
 * consumer that needs the pixels later must copy them.
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
     * @param skipped        frames the sources skipped as undecodable, over all connections
     * @param lastFrameAt    when the last frame arrived; null before the first
     * @param reconnects     attempts to open after the first
     * @param consumerErrors frames whose consumer threw
     * @param lastError      why the last open or stream failed, or why it is stalled; text only, never pixels
     */
    public record Status(String camera, State state, Instant since, long frames, long skipped, Instant lastFrameAt,
                         long reconnects, long consumerErrors, String lastError) {
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
    private volatile long skippedClosed;
    private volatile FrameSource current;
    private volatile long lastProgressNanos = System.nanoTime();
    private volatile Instant lastFrameAt;
    private volatile long reconnects;
    private volatile long consumerErrors;

    /**
     * @param live true for a camera (reopened when it ends), false for a file (read once)
     */
    public CameraSupervisor(String camera, Opener opener, boolean live, Settings settings, Consumer<Frame> consumer) {
        this.camera = Objects.requireNonNull(camera, "camera");
        this.opener = Objects.requireNonNull(opener, "opener");
        this.live = live;
        this.settings = Objects.requireNonNull(settings, "settings");
        this.consumer = Objects.requireNonNull(consumer, "consumer");
        this.worker = new Thread(this::run, "camera-" + camera);
        worker.setDaemon(true);
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
        worker.start();
        return this;
    }

    public Status status() {
        FrameSource src = current;
        long skippedNow = skippedClosed + (src == null ? 0 : src.skipped());
        synchronized (lock) {
            return new Status(camera, state, since, frames, skippedNow, lastFrameAt, reconnects, consumerErrors,
                    lastError);
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
        try {
            worker.join(Math.max(1, settings.stopGrace().toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (worker.isAlive()) {
            LOG.info("camera {}: stopped; its thread is still in a blocking read and closes the source when it returns",
                    camera);
        }
    }

    /** Waits until the camera's thread has ended and closed its source; true if it did within the timeout. */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        if (!started.get()) {
            return true;
        }
        worker.join(Math.max(1, timeout.toMillis()));
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

    /** Hands frames to the consumer until the source ends or stop; true if at least one frame came. */
    private boolean read(FrameSource src) {
        boolean any = false;
        Optional<Frame> next;
        while (!stopping.get() && (next = src.next()).isPresent()) {
            try (Frame f = next.get()) {
                if (stopping.get()) {
                    break;
                }
                any = true;
                frames++;
                lastFrameAt = f.capturedAt();
                lastProgressNanos = System.nanoTime();
                synchronized (lock) {
                    if (state == State.STALLED) {
                        enter(State.LIVE);
                        lastError = null;
                    }
                }
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
        }
        return any;
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
