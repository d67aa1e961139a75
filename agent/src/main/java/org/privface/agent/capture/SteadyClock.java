package org.privface.agent.capture;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * The clock the frame sources stamp frames with, and so the clock budget windows and track
 * idleness are measured on. It reads the wall clock once, when it starts, and from then on
 * advances by the monotonic {@link System#nanoTime}, which NTP slews but never steps. So a step of
 * the system clock (±10 min when NTP corrects it) neither ends a window early, which would grant
 * a fresh allowance within the real window, nor keeps one open longer (docs/reliability.md, "The
 * clock steps by ten minutes"). Records carry these capture times; after a step they differ from
 * the wall clock by the step until the agent restarts. The person ledger persists windows in
 * them, and a restart reads those against the wall clock again.
 */
public final class SteadyClock extends Clock {
    private static final SteadyClock SYSTEM = new SteadyClock(Clock.systemUTC(), System::nanoTime);

    private final Instant start;
    private final long startNanos;
    private final LongSupplier nanoTime;

    /**
     * @param wall     read once, for the start
     * @param nanoTime a monotonic count of nanoseconds ({@code System::nanoTime})
     */
    public SteadyClock(Clock wall, LongSupplier nanoTime) {
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
        this.startNanos = nanoTime.getAsLong();
        this.start = wall.instant();
    }

    /** The agent's one steady clock, started with the process. */
    public static SteadyClock system() {
        return SYSTEM;
    }

    @Override
    public Instant instant() {
        return start.plusNanos(nanoTime.getAsLong() - startNanos);
    }

    @Override
    public long millis() {
        return instant().toEpochMilli();
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        if (!ZoneOffset.UTC.equals(zone)) {
            throw new UnsupportedOperationException("the steady clock is UTC only");
        }
        return this;
    }
}
