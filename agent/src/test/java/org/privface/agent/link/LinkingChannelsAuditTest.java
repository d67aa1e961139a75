package org.privface.agent.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.privface.privacy.StatusCounts;
import org.privface.agent.track.BudgetPolicy;
import org.privface.agent.track.TrackBudget;

/**
 * The sibling of {@code LinkingAuditTest} (k8s/local-stack: the whole gateway on real faces, where
 * lfw139 and YuNet are installed) for the scenes issue 39 found it does not run: a linking split, a
 * person held past their window, and a person in view for minutes. It runs the gateway's own
 * decision classes (the tracker's output replayed as a scene, {@link GatewayLinking}'s link and
 * recheck, the {@link PersonLedger}, each camera's {@link TrackBudget} and {@link ReleaseGate}) twice
 * on each scene: once where the faces of one person link ("all linked"), once where every
 * appearance has a face of its own ("none linked"). A frame every 100 ms.
 *
 * <p>It compares what the face topics and the status topic get from those decisions: for each scene
 * position (a track, and the segment a split made), the published track id it goes out under, and per
 * release every field of the record's {@code track} section and the release time; and the status
 * counts. It asserts:
 * <ul>
 *   <li>one published track id per position and one position per published id, in both runs;</li>
 *   <li>each published track's records are what a track alone would publish (releaseIndex 1, 2, … in a
 *       window; a new window only after the last one has passed);</li>
 *   <li>each position's releases with links are a prefix of its releases without: same fields, same
 *       times, only fewer (withholding shows as absence, docs/privacy.md; no release lines up with
 *       another track's window);</li>
 *   <li>the status counts move by at most 1 per person (track) per counter whatever the frames, and
 *       state the ε that covers it.</li>
 * </ul>
 */
class LinkingChannelsAuditTest {
    static final Instant T0 = Instant.parse("2026-11-28T10:00:00Z");
    static final long FRAME_MS = 100;
    static final int DIM = 32;

    /** A person's face from {@code atMs} on, in a track: the tracker following another face is a swap. */
    record Face(long atMs, int person) {
    }

    /** One track of the tracker: its camera, its span, and whose face it follows when. */
    record SceneTrack(String name, String camera, long startMs, long endMs, List<Face> faces) {
        int personAt(long ms) {
            int p = faces.get(0).person();
            for (Face f : faces) {
                if (f.atMs() <= ms) {
                    p = f.person();
                }
            }
            return p;
        }
    }

    /** A release as the wire shows it, times relative to the scene's start. */
    record Rel(String publishedId, int releaseIndex, long windowStartMs, double epsilonSpentInWindow, double epsilonBudget,
               String policy, long atMs) {
        /** Everything but the id (which is random per run). */
        String fields() {
            return releaseIndex + "|" + windowStartMs + "|" + epsilonSpentInWindow + "|" + epsilonBudget + "|" + policy
                    + "|" + atMs;
        }
    }

    record Run(Map<String, List<Rel>> byPosition, Map<String, Map<String, Long>> counted,
               Map<String, Map<String, Object>> sections) {
    }

    /**
     * Plays the scene. With {@code linked}, a person's faces share one direction; without, each track's
     * stretch on one person has its own, so nothing links (a split still happens where the face changes).
     */
    static Run play(List<SceneTrack> scene, boolean linked, String budgetSpec, double epsilon, Duration window)
            throws Exception {
        PersonLedger ledger = PersonLedger.inMemory(0.5, window);
        GatewayLinking linking = new GatewayLinking(ledger, 0, 0, 3, 5, false);
        Map<String, TrackBudget> budgets = new TreeMap<>();
        Map<String, ReleaseGate> gates = new TreeMap<>();
        for (SceneTrack t : scene) {
            budgets.computeIfAbsent(t.camera(), c -> new TrackBudget(BudgetPolicy.parse(budgetSpec), epsilon, window));
            SecureRandom seeded = SecureRandom.getInstance("SHA1PRNG");
            seeded.setSeed(t.camera().hashCode());
            gates.computeIfAbsent(t.camera(), c -> new ReleaseGate(linking,
                    new StatusCounts("person", Duration.ofMinutes(1), Duration.ofDays(1), 1, seeded)));
        }
        Map<String, Integer> directions = new HashMap<>();
        Map<String, List<Rel>> byPosition = new LinkedHashMap<>();
        Map<String, Long> frames = new HashMap<>();
        long end = scene.stream().mapToLong(SceneTrack::endMs).max().orElse(0);
        for (long ms = 0; ms <= end; ms += FRAME_MS) {
            Instant now = T0.plusMillis(ms);
            for (SceneTrack t : scene) {
                if (ms < t.startMs() || ms > t.endMs()) {
                    continue;
                }
                if (ms == t.endMs()) {
                    gates.get(t.camera()).ended(t.camera(), t.name(), now).forEach(budgets.get(t.camera())::forget);
                    continue;
                }
                int person = t.personAt(ms);
                String key = linked ? "p" + person : t.name() + "/p" + person;
                int dir = directions.computeIfAbsent(key, k -> directions.size());
                double[] e = new double[DIM];
                e[dir % DIM] = 1;
                long seen = frames.merge(t.name(), 1L, Long::sum);
                Optional<GatewayLinking.Segment> seg = linking.observe(t.camera(), t.name(), true, e, now);
                ReleaseGate.Decision d = gates.get(t.camera()).decide(t.name(), seen, seg, budgets.get(t.camera()), 1, now);
                if (d.granted()) {
                    String budgetTrack = seg.get().budgetTrack();
                    String position = t.name() + "#" + (budgetTrack.contains("~")
                            ? budgetTrack.substring(budgetTrack.indexOf('~') + 1) : "0");
                    TrackBudget.Grant g = d.grant();
                    byPosition.computeIfAbsent(position, p -> new ArrayList<>()).add(new Rel(d.publishedTrackId(),
                            g.releaseIndex(), g.windowStart().toEpochMilli() - T0.toEpochMilli(), g.epsilonSpentInWindow(),
                            g.epsilonBudget(), g.policy(), ms));
                }
            }
        }
        Map<String, Map<String, Long>> counted = new TreeMap<>();
        Map<String, Map<String, Object>> sections = new TreeMap<>();
        gates.forEach((camera, g) -> {
            counted.put(camera, g.counts().exact());
            sections.put(camera, g.counts().section(T0.plusMillis(end)));
        });
        return new Run(byPosition, counted, sections);
    }

    /** The assertions of the class comment, for one scene. */
    static Run[] audit(String scene, List<SceneTrack> tracks, String budget, double epsilon, Duration window)
            throws Exception {
        Run with = play(tracks, true, budget, epsilon, window);
        Run without = play(tracks, false, budget, epsilon, window);
        for (Run r : List.of(with, without)) {
            String which = (r == with ? "all linked" : "none linked") + ", " + scene;
            Map<String, Set<String>> positionsOfId = new HashMap<>();
            r.byPosition().forEach((pos, rels) -> {
                Set<String> ids = new TreeSet<>();
                rels.forEach(x -> ids.add(x.publishedId()));
                assertEquals(1, ids.size(), which + ": position " + pos + " went out under " + ids);
                rels.forEach(x -> positionsOfId.computeIfAbsent(x.publishedId(), i -> new TreeSet<>()).add(pos));
            });
            positionsOfId.forEach((id, pos) -> assertEquals(1, pos.size(),
                    which + ": one published track carries " + pos + ": a split shows on the wire"));
            r.byPosition().forEach((pos, rels) -> {
                for (int i = 1; i < rels.size(); i++) {
                    Rel a = rels.get(i - 1);
                    Rel b = rels.get(i);
                    boolean sameWindow = b.windowStartMs() == a.windowStartMs() && b.releaseIndex() == a.releaseIndex() + 1;
                    boolean nextWindow = b.releaseIndex() == 1 && b.windowStartMs() >= a.windowStartMs() + window.toMillis();
                    assertTrue(sameWindow || nextWindow, which + ": " + pos + " publishes " + a + " then " + b
                            + ", which its own budget does not explain");
                }
            });
            r.counted().forEach((camera, counts) -> counts.forEach((counter, n) -> assertTrue(n <= persons(tracks, camera),
                    which + ": " + camera + "'s " + counter + " counted " + n + " for " + persons(tracks, camera)
                            + " persons: a count must move at most 1 per person")));
            r.sections().forEach((camera, section) -> {
                Map<?, ?> noise = (Map<?, ?>) section.get("noise");
                assertEquals(4.0, noise.get("epsilonPerUnitPerWindow"), which + ": the stated ε per person per window");
                assertEquals(4.0, noise.get("epsilonPerUnitPerDay"), which + ": the stated ε per person per day");
            });
        }
        Set<String> positions = new TreeSet<>(without.byPosition().keySet());
        positions.addAll(with.byPosition().keySet());
        for (String pos : positions) {
            List<String> a = with.byPosition().getOrDefault(pos, List.of()).stream().map(Rel::fields).toList();
            List<String> b = without.byPosition().getOrDefault(pos, List.of()).stream().map(Rel::fields).toList();
            assertTrue(a.size() <= b.size() && b.subList(0, a.size()).equals(a), scene + ": " + pos
                    + " with links published " + a + ", without " + b
                    + ": a release with links must be one it would make without, at the same time with the same fields");
        }
        return new Run[] {with, without};
    }

    static int releases(Run r, String position) {
        return r.byPosition().getOrDefault(position, List.of()).size();
    }

    /**
     * The units a camera's tracks show: a person's stretch of a track (a person seen unlinked on two
     * tracks is two units). The most any status count of that camera may move in a day.
     */
    static long persons(List<SceneTrack> tracks, String camera) {
        return tracks.stream().filter(t -> t.camera().equals(camera))
                .flatMap(t -> t.faces().stream().map(f -> t.name() + "/" + f.person())).distinct().count();
    }

    static SceneTrack track(String name, String camera, long startMs, long endMs, int person) {
        return new SceneTrack(name, camera, startMs, endMs, List.of(new Face(startMs, person)));
    }

    /**
     * A split: the tracker on camera 0 follows P, then from 12 s Q's face (Q was on camera 1 first).
     * Before issue 39 the second segment published under P's track id: releaseIndex back to 1 and a
     * second window start on one track id, 2 × the track's budget.
     */
    @Test
    void aSplitSegmentGoesOutAsANewTrack() throws Exception {
        Run[] r = audit("split", List.of(
                new SceneTrack("t-swap", "cam-0", 0, 30_000, List.of(new Face(0, 1), new Face(12_000, 2))),
                track("t-q", "cam-1", 0, 6_000, 2)),
                "max-k:k=4,every=20", 4, Duration.ofMinutes(10));
        for (Run run : r) {
            assertTrue(releases(run, "t-swap#0") > 0 && releases(run, "t-swap#1") > 0, "the scene splits: " + run.byPosition());
        }
        assertTrue(releases(r[0], "t-swap#1") < releases(r[1], "t-swap#1"), "linked, Q's budget holds the segment");
    }

    /**
     * P on camera 0 releases, then P on camera 1 is held by P's spent budget. Before issue 39 the held
     * track released the moment P's window ended: within a frame of P's first release + W, a time the
     * first release's windowStartMillis makes public (a key across cameras).
     */
    @Test
    void aTrackHeldByItsPersonDoesNotReleaseWhenTheWindowEnds() throws Exception {
        Run[] r = audit("held past the window", List.of(
                track("t-p0", "cam-0", 0, 20_000, 1),
                track("t-p1", "cam-1", 10_000, 150_000, 1)),
                "once", 2, Duration.ofSeconds(60));
        assertEquals(0, releases(r[0], "t-p1#0"), "held by P's budget, then never: " + r[0].byPosition());
        assertEquals(3, releases(r[1], "t-p1#0"), "alone, its own windows: at 10, 70 and 130 s " + r[1].byPosition());
        assertEquals(1L, r[0].counted().get("cam-1").get(ReleaseGate.WITHHELD), "the status count of persons held");
    }

    /**
     * P in view on camera 0 for five minutes (3,000 frames), and twice briefly on camera 1. Before issue
     * 39 the status counts moved by one per face: 3,000 on camera 0 against noise of ±1.4.
     */
    @Test
    void aPersonInViewForMinutes() throws Exception {
        Run[] r = audit("in view for minutes", List.of(
                track("t-long", "cam-0", 0, 300_000, 1),
                track("t-b1", "cam-1", 100_000, 110_000, 1),
                track("t-b2", "cam-1", 200_000, 210_000, 1)),
                "once", 2, Duration.ofSeconds(60));
        assertEquals(5, releases(r[0], "t-long#0"), "once per window for five minutes: " + r[0].byPosition());
        assertEquals(1L, r[0].counted().get("cam-0").get(ReleaseGate.SEEN), "3,000 faces, one person: counted once");
    }
}
