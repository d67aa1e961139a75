package org.privface.agent.capture;

import java.time.Instant;

import org.opencv.core.Mat;

/**
 * A decoded frame. Lives only in memory: it is never written to disk, logged or put in an error
 * message. {@code origin} names where it came from (a file name or a frame index), not its content.
 */
public record Frame(Mat image, long sequence, Instant capturedAt, String origin) implements AutoCloseable {
    /** When it was captured, or now on the steady clock where the source gave no time (budget windows run on that clock). */
    public Instant capturedAtOrNow() {
        return capturedAt != null ? capturedAt : SteadyClock.system().instant();
    }

    @Override
    public void close() {
        image.release();
    }
}
