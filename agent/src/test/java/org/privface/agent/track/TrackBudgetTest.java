package org.privface.agent.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

import org.junit.jupiter.api.Test;

class TrackBudgetTest {

    private static final Instant T0 = Instant.parse("2024-05-01T10:00:00Z");
    private static final Duration WINDOW = Duration.ofMinutes(10);

    private static Instant at(long frame) {
        return T0.plusMillis(frame * 33);
    }

    /** Requests frames first..last of one track and returns the grants. */
    private static List<TrackBudget.Grant> run(TrackBudget b, String track, long first, long last, Instant start) {
        List<TrackBudget.Grant> grants = new ArrayList<>();
        for (long f = first; f <= last; f++) {
            b.request(track, f, start.plusMillis((f - first) * 33)).ifPresent(grants::add);
        }
        return grants;
    }

    @Test
    void onceGrantsExactlyOnePerWindowAndAgainAfterIt() {
        TrackBudget b = new TrackBudget(BudgetPolicy.once(), 2.0, WINDOW);
        List<TrackBudget.Grant> first = run(b, "trk-a", 1, 500, T0);
        assertEquals(1, first.size());
        TrackBudget.Grant g = first.get(0);
        assertEquals(new TrackBudget.Grant("trk-a", 2.0, 1, 2.0, 2.0, T0, "once", Double.NaN), g);

        assertTrue(b.request("trk-a", 501, T0.plus(WINDOW).minusMillis(1)).isEmpty());
        Instant later = T0.plus(WINDOW);
        Optional<TrackBudget.Grant> again = b.request("trk-a", 502, later);
        assertTrue(again.isPresent());
        assertEquals(1, again.get().releaseIndex());
        assertEquals(2.0, again.get().epsilonSpentInWindow());
        assertEquals(later, again.get().windowStart());

        // Another track has its own allowance.
        assertEquals(1, run(b, "trk-b", 1, 50, T0).size());
        TrackBudget.Stats s = b.stats();
        assertEquals(3, s.grants());
        assertEquals(500 - 1 + 1 + 49, s.refusals());
        assertEquals(6.0, s.epsilonSpent());
        assertEquals("once", s.policy());
    }

    /**
     * Issue 34: a mechanism that spends a little less than its share (HammingCap's integer p) is
     * charged what it states, so the window's total equals the records' sum; a statement above
     * the share is refused.
     */
    @Test
    void aChargingLedgerChargesTheStatedEpsilonNotTheShare() {
        TrackBudget asked = new TrackBudget(BudgetPolicy.once(), 62.36774159047502, WINDOW);
        double stated = 61.67459488283353;
        TrackBudget b = asked.charging(stated);
        TrackBudget.Grant g = b.request("trk-a", 1, T0).orElseThrow();
        assertEquals(62.36774159047502, g.epsilonForThisRelease(), "the mechanism is calibrated to the share");
        assertEquals(stated, g.epsilonSpentInWindow());
        assertEquals(stated, b.stats().epsilonSpent());
        assertEquals(stated, b.unitsPerRelease());
        assertThrows(IllegalStateException.class, () -> asked.charging(Math.nextUp(62.36774159047502)));
    }

    @Test
    void maxKGrantsKSharesSummingToTheTrackBudget() {
        for (double cap : new double[] {0.1, 0.7, 1.0, 3.0, 16.0, 1e-3}) {
            for (int k = 1; k <= 60; k++) {
                TrackBudget b = new TrackBudget(BudgetPolicy.maxK(k), cap, WINDOW);
                List<TrackBudget.Grant> grants = run(b, "t", 1, 200, T0);
                assertEquals(k, grants.size(), "cap " + cap + " k " + k);
                double sum = 0;
                for (int i = 0; i < k; i++) {
                    TrackBudget.Grant g = grants.get(i);
                    assertEquals(i + 1, g.releaseIndex());
                    assertEquals(cap / k, g.epsilonForThisRelease());
                    assertEquals("max-k", g.policy());
                    sum += g.epsilonForThisRelease();
                    assertEquals(sum, g.epsilonSpentInWindow(), 1e-15);
                }
                assertEquals(cap, sum, 1e-12, "cap " + cap + " k " + k);
                assertEquals(cap, grants.get(k - 1).epsilonSpentInWindow(), 1e-12);
            }
        }
    }

    @Test
    void maxKSpacesReleasesAndSpacingSurvivesTheWindow() {
        TrackBudget b = new TrackBudget(BudgetPolicy.maxK(4, 5), 1.0, WINDOW);
        List<Long> frames = new ArrayList<>();
        for (long f = 1; f <= 100; f++) {
            if (b.request("t", f, at(f)).isPresent()) {
                frames.add(f);
            }
        }
        assertEquals(List.of(1L, 6L, 11L, 16L), frames);
        // New window, but frame 18 is only 2 frames after the last release.
        Instant next = at(1).plus(WINDOW); // the window began at the first grant
        assertTrue(b.request("t", 18, next).isEmpty());
        assertEquals(1, b.request("t", 21, next).orElseThrow().releaseIndex());
    }

    @Test
    void everyNReleasesEveryNthFrameUntilTheCap() {
        TrackBudget b = new TrackBudget(BudgetPolicy.everyN(4, 0.3), 1.0, WINDOW);
        List<Long> frames = new ArrayList<>();
        List<TrackBudget.Grant> grants = new ArrayList<>();
        for (long f = 1; f <= 100; f++) {
            Optional<TrackBudget.Grant> g = b.request("t", f, at(f));
            if (g.isPresent()) {
                frames.add(f);
                grants.add(g.get());
            }
        }
        assertEquals(List.of(1L, 5L, 9L), frames); // a 4th release would compose to 1.2 > 1.0
        assertEquals(0.9, grants.get(2).epsilonSpentInWindow(), 1e-15);
        assertEquals("every-n", grants.get(0).policy());
        assertEquals(1.0, grants.get(0).epsilonBudget());

        // An exact divisor spends the cap exactly and is not cut short by rounding.
        for (double cap : new double[] {0.1, 0.7, 1.0, 3.0, 16.0}) {
            for (int m = 1; m <= 200; m++) {
                TrackBudget exact = new TrackBudget(BudgetPolicy.everyN(1, cap / m), cap, WINDOW);
                assertEquals(m, run(exact, "t", 1, 400, T0).size(), "cap " + cap + " m " + m);
            }
        }
    }

    @Test
    void randomConfigurationsNeverSpendMoreThanTheCap() {
        Random r = new Random(20240501);
        for (int trial = 0; trial < 3000; trial++) {
            double cap = Math.exp(r.nextDouble() * 8 - 5); // about 0.007 .. 20
            BudgetPolicy policy;
            int n = 1 + r.nextInt(10);
            switch (r.nextInt(3)) {
                case 0:
                    policy = BudgetPolicy.once();
                    break;
                case 1:
                    policy = BudgetPolicy.maxK(1 + r.nextInt(30), n);
                    break;
                default:
                    // Half the time an exact share of the cap, where rounding matters most.
                    double eps = r.nextBoolean() ? cap / (1 + r.nextInt(30)) : cap * (0.04 + 0.96 * r.nextDouble());
                    policy = BudgetPolicy.everyN(n, eps);
            }
            TrackBudget b = new TrackBudget(policy, cap, WINDOW);
            double sum = 0;
            int count = 0;
            long frame = 0;
            long lastGranted = Long.MIN_VALUE;
            for (int i = 0; i < 400; i++) {
                frame += 1 + (r.nextInt(4) == 0 ? r.nextInt(5) : 0); // the caller may skip frames
                Optional<TrackBudget.Grant> g = b.request("t", frame, at(frame));
                if (g.isPresent()) {
                    assertTrue(count == 0 || frame - lastGranted >= policy.minFrameSpacing(), policy.spec());
                    lastGranted = frame;
                    sum += g.get().epsilonForThisRelease();
                    count++;
                    assertEquals(count, g.get().releaseIndex());
                }
            }
            String what = policy.spec() + " cap " + cap;
            assertTrue(sum <= cap + 1e-12, what + " spent " + sum);
            assertTrue(count <= policy.maxReleasesPerWindow(), what);
            // Not over-conservative either: stopped only because the next release would not fit.
            if (count < policy.maxReleasesPerWindow()) {
                assertTrue(sum + policy.epsilonPerRelease(cap) > cap - 1e-9, what + " stopped early at " + sum);
            }
            assertEquals(sum, b.stats().epsilonSpent(), 1e-12);
        }
    }

    @Test
    void concurrentRequestsNeverOverspend() throws Exception {
        for (BudgetPolicy policy : List.of(BudgetPolicy.maxK(7), BudgetPolicy.everyN(2, 0.15), BudgetPolicy.once())) {
            double cap = 1.0;
            TrackBudget b = new TrackBudget(policy, cap, WINDOW);
            int tracks = 20;
            int threads = 8;
            AtomicLongArray frames = new AtomicLongArray(tracks);
            Queue<TrackBudget.Grant> granted = new ConcurrentLinkedQueue<>();
            CountDownLatch go = new CountDownLatch(1);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    long seed = t;
                    done.add(pool.submit(() -> {
                        Random r = new Random(seed);
                        go.await();
                        for (int i = 0; i < 5000; i++) {
                            int track = r.nextInt(tracks);
                            long f = frames.incrementAndGet(track);
                            b.request("trk-" + track, f, T0).ifPresent(granted::add);
                        }
                        return null;
                    }));
                }
                go.countDown();
                for (Future<?> f : done) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            Map<String, Double> spent = new HashMap<>();
            Map<String, Integer> releases = new HashMap<>();
            for (TrackBudget.Grant g : granted) {
                spent.merge(g.trackId(), g.epsilonForThisRelease(), Double::sum);
                releases.merge(g.trackId(), 1, Integer::sum);
            }
            for (String track : spent.keySet()) {
                assertTrue(spent.get(track) <= cap + 1e-12, policy.spec() + " " + track + " " + spent.get(track));
                assertTrue(releases.get(track) <= policy.maxReleasesPerWindow());
            }
            // Every track saw thousands of frames, so each used its whole allowance, once.
            int perTrack = policy instanceof BudgetPolicy.MaxK ? 7 : policy instanceof BudgetPolicy.EveryN ? 6 : 1;
            assertEquals(tracks, releases.size());
            releases.values().forEach(v -> assertEquals(perTrack, v, policy.spec()));
            TrackBudget.Stats s = b.stats();
            assertEquals(granted.size(), s.grants());
            assertEquals(threads * 5000L, s.grants() + s.refusals());
            assertEquals(granted.stream().mapToDouble(TrackBudget.Grant::epsilonForThisRelease).sum(),
                    s.epsilonSpent(), 1e-9);
        }
    }

    @Test
    void aFullLedgerRefusesNewTracksUntilAWindowElapses() {
        TrackBudget b = new TrackBudget(BudgetPolicy.maxK(3), 1.0, WINDOW, 2);
        assertTrue(b.request("a", 1, T0).isPresent());
        assertTrue(b.request("b", 1, T0).isPresent());
        // Evicting a or b would reset a live budget, so c waits.
        assertTrue(b.request("c", 1, T0.plusSeconds(1)).isEmpty());
        assertEquals(1, b.stats().refusedForCapacity());
        assertTrue(b.request("a", 2, T0.plusSeconds(1)).isPresent());

        b.forget("b");
        assertTrue(b.request("c", 2, T0.plusSeconds(2)).isPresent());
        assertTrue(b.request("d", 1, T0.plusSeconds(3)).isEmpty());
        // a's window (from T0) has elapsed, so it can go; c's (from T0+2s) has not.
        assertTrue(b.request("d", 2, T0.plus(WINDOW)).isPresent());
        assertEquals(2, b.stats().tracksHeld());
        assertEquals(2, b.stats().refusedForCapacity());
    }

    @Test
    void forgottenTracksAreDropped() {
        TrackBudget b = new TrackBudget(BudgetPolicy.once(), 1.0, WINDOW);
        assertTrue(b.request("t", 1, T0).isPresent());
        assertEquals(1, b.stats().tracksHeld());
        b.forget("t");
        b.forget("never-seen");
        assertEquals(0, b.stats().tracksHeld());
    }

    @Test
    void compositionIsThePlainSum() {
        assertEquals(0.75, TrackBudget.compose(0.5, 0.25));
    }

    @Test
    void badParametersAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> BudgetPolicy.maxK(0));
        assertThrows(IllegalArgumentException.class, () -> BudgetPolicy.maxK(3, 0));
        assertThrows(IllegalArgumentException.class, () -> BudgetPolicy.everyN(0, 0.1));
        assertThrows(IllegalArgumentException.class, () -> BudgetPolicy.everyN(2, 0));
        assertThrows(IllegalArgumentException.class, () -> BudgetPolicy.everyN(2, -1));
        assertThrows(IllegalArgumentException.class, () -> BudgetPolicy.everyN(2, Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> BudgetPolicy.everyN(2, Double.POSITIVE_INFINITY));

        IllegalArgumentException tooBig = assertThrows(IllegalArgumentException.class,
                () -> new TrackBudget(BudgetPolicy.everyN(2, 1.5), 1.0, WINDOW));
        assertTrue(tooBig.getMessage().contains("exceeds the track budget"), tooBig.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new TrackBudget(BudgetPolicy.once(), 0, WINDOW));
        assertThrows(IllegalArgumentException.class, () -> new TrackBudget(BudgetPolicy.once(), Double.NaN, WINDOW));
        assertThrows(IllegalArgumentException.class, () -> new TrackBudget(BudgetPolicy.maxK(2), -1, WINDOW));
        assertThrows(IllegalArgumentException.class,
                () -> new TrackBudget(BudgetPolicy.maxK(Integer.MAX_VALUE), Double.MIN_VALUE, WINDOW));
        assertThrows(IllegalArgumentException.class, () -> new TrackBudget(BudgetPolicy.once(), 1, Duration.ZERO));
        assertThrows(IllegalArgumentException.class,
                () -> new TrackBudget(BudgetPolicy.once(), 1, Duration.ofSeconds(-1)));
        assertThrows(IllegalArgumentException.class, () -> new TrackBudget(BudgetPolicy.once(), 1, WINDOW, 0));
        TrackBudget b = new TrackBudget(BudgetPolicy.once(), 1, WINDOW);
        assertThrows(IllegalArgumentException.class, () -> b.request("t", -1, T0));
    }

    @Test
    void gaussianTracksComposeInQuadratureSoEachReleaseGetsMoreThanItsShare() {
        double delta = 1e-5;
        TrackBudget b = new TrackBudget(BudgetPolicy.maxK(4), 4.0, WINDOW, 100, TrackBudget.Accounting.GAUSSIAN_DP, delta);
        List<TrackBudget.Grant> grants = run(b, "trk-g", 1, 50, T0);
        assertEquals(4, grants.size());
        double muTrack = org.privface.privacy.gdp.MuGdp.muFor(4.0, delta);
        double summed = 0;
        for (TrackBudget.Grant g : grants) {
            assertEquals(muTrack / 2, g.muForThisRelease(), 1e-12, "mu splits as 1/sqrt(k)");
            assertTrue(g.epsilonForThisRelease() > 4.0 / 4, "each release gets more than a quarter of epsilon");
            summed += g.epsilonForThisRelease();
        }
        assertEquals(4.0, grants.get(3).epsilonSpentInWindow(), 1e-6, "composed: exactly the track's epsilon");
        assertTrue(summed > 4.0 * 1.5, "summing the per-release epsilons would overstate the spend: " + summed);
    }
}
