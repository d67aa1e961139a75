package org.privface.agent.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.privface.agent.capture.SteadyClock;
import org.privface.agent.link.PersonLedger;

/**
 * NTP steps the wall clock by ±10 minutes while a face is in view (docs/reliability.md, "The clock
 * steps by ten minutes"). Measured on the {@link SteadyClock}, the face gets no more ε in any real
 * window than the cap, and its window is not held open longer either; measured on the wall clock
 * (what the camera worker did before), a forward step ends its track and its window early and it
 * is paid again within the real window.
 */
class ClockStepTest {
    static final Instant T0 = Instant.parse("2026-06-01T08:00:00Z");
    static final Duration WINDOW = Duration.ofMinutes(30);
    static final Duration STEP_AT = Duration.ofMinutes(15);
    static final Duration RUN = Duration.ofMinutes(62);

    /** A machine's two clocks: the wall clock, which NTP may step, and the monotonic nanoseconds, which it does not. */
    static final class Machine {
        long nanos = 987_654_321L;
        final SteppedClock wallClock = new SteppedClock(T0);

        void run(Duration d) {
            nanos += d.toNanos();
            wallClock.step(d);
        }

        void step(Duration d) {
            wallClock.step(d);
        }
    }

    /**
     * One face in view at one frame a second for {@link #RUN}, the wall clock stepped by {@code step}
     * at {@link #STEP_AT}; tracker, track ledger and ({@code linked}) person ledger all read the
     * steady clock or the wall clock. Returns the real times (since the start) at which a release was granted.
     */
    static List<Duration> grants(Duration step, boolean steady, boolean linked) {
        Machine m = new Machine();
        Clock clock = steady ? new SteadyClock(m.wallClock, () -> m.nanos) : m.wallClock;
        IouTracker tracker = new IouTracker();
        TrackBudget budget = new TrackBudget(BudgetPolicy.once(), 2.0, WINDOW);
        PersonLedger persons = PersonLedger.inMemory(0.5, WINDOW);
        double[] face = new double[128];
        face[0] = 1;
        List<Duration> out = new ArrayList<>();
        String lastTrack = null;
        String person = null;
        for (long s = 0; s <= RUN.toSeconds(); s++) {
            if (s == STEP_AT.toSeconds()) {
                m.step(step);
            }
            Instant now = clock.instant();
            IouTracker.Tracked t = tracker.update(List.of(new Box(100, 100, 80, 80)), s, now).get(0);
            if (linked && !t.trackId().equals(lastTrack)) {
                person = persons.link("door", face, now).orElseThrow().personId();
                lastTrack = t.trackId();
            }
            if ((!linked || persons.hasRoom(person, budget, now))
                    && budget.request(t.trackId(), t.framesSeen(), now).isPresent()) {
                Optional<PersonLedger.Charge> c = linked ? persons.charge(person, budget, now) : Optional.empty();
                if (!linked || c.isPresent()) {
                    out.add(Duration.ofSeconds(s));
                }
            }
            m.run(Duration.ofSeconds(1));
        }
        return out;
    }

    /** The most grants within any real window: with one release per window, 1 is the cap. */
    static int mostInOneRealWindow(List<Duration> grants) {
        int most = 0;
        for (Duration from : grants) {
            most = Math.max(most, (int) grants.stream().filter(g -> !g.minus(from).isNegative() && g.minus(from)
                    .compareTo(WINDOW) < 0).count());
        }
        return most;
    }

    @Test
    void onTheSteadyClockAStepGrantsNoExtraEpsilonAndHoldsNoWindowOpen() {
        List<Duration> expected = List.of(Duration.ZERO, WINDOW, WINDOW.multipliedBy(2));
        for (boolean linked : new boolean[] {false, true}) {
            for (Duration step : List.of(Duration.ofMinutes(10), Duration.ofMinutes(-10), Duration.ZERO)) {
                List<Duration> g = grants(step, true, linked);
                assertEquals(expected, g, "step " + step + (linked ? ", per person" : ", per track")
                        + ": one release per real window, at its real start");
                assertEquals(1, mostInOneRealWindow(g));
            }
        }
    }

    @Test
    void onTheWallClockAForwardStepPaysTheFaceAgainWithinTheRealWindow() {
        List<Duration> perTrack = grants(Duration.ofMinutes(10), false, false);
        assertEquals(STEP_AT, perTrack.get(1), "the step ends the track (idle 10 min): its next track is paid at once");
        assertTrue(mostInOneRealWindow(perTrack) >= 2, "twice the cap within a real window: " + perTrack);
        List<Duration> perPerson = grants(Duration.ofMinutes(10), false, true);
        assertEquals(WINDOW.minusMinutes(10), perPerson.get(1), "the person's window ends 10 min early");
        assertTrue(mostInOneRealWindow(perPerson) >= 2, "twice the cap within a real window: " + perPerson);
        List<Duration> backward = grants(Duration.ofMinutes(-10), false, true);
        assertEquals(WINDOW.plusMinutes(10), backward.get(1), "a backward step holds the window open 10 min longer");
        assertEquals(1, mostInOneRealWindow(backward));
    }

    @Test
    void theSteadyClockFollowsMonotonicTimeNotTheWall() {
        Machine m = new Machine();
        SteadyClock c = new SteadyClock(m.wallClock, () -> m.nanos);
        assertEquals(T0, c.instant());
        m.run(Duration.ofSeconds(90));
        m.step(Duration.ofMinutes(-10));
        assertEquals(T0.plusSeconds(90), c.instant());
        m.step(Duration.ofMinutes(20));
        m.run(Duration.ofMillis(1));
        assertEquals(T0.plusSeconds(90).plusMillis(1), c.instant());
    }
}
