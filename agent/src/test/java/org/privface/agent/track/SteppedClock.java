package org.privface.agent.track;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A wall clock for tests: it moves only when told, by running or by an NTP step. */
public final class SteppedClock extends Clock {
    private Instant now;

    public SteppedClock(Instant start) {
        this.now = start;
    }

    /** Moves the clock by {@code d}, either way. */
    public void step(Duration d) {
        now = now.plus(d);
    }

    @Override
    public Instant instant() {
        return now;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
