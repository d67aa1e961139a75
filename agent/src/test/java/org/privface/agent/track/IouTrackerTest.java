package org.privface.agent.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IouTrackerTest {

    private static final Instant T0 = Instant.parse("2024-05-01T10:00:00Z");

    private static Instant at(long frame) {
        return T0.plusMillis(frame * 33);
    }

    private static Box box(int x, int y) {
        return new Box(x, y, 40, 40);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3})
    void followsMovingBoxesOverAHundredFramesWithStableIds(int faces) {
        Random r = new Random(1000 + faces);
        double[] x = new double[faces];
        double[] y = new double[faces];
        double[] vx = new double[faces];
        double[] vy = new double[faces];
        for (int i = 0; i < faces; i++) {
            x[i] = 50 + r.nextInt(400);
            y[i] = 40 + 200 * i; // separate lanes, so the faces never meet
            vx[i] = r.nextDouble() * 12 - 6;
            vy[i] = r.nextDouble() * 4 - 2;
        }
        IouTracker tracker = new IouTracker();
        String[] ids = new String[faces];
        for (int f = 0; f < 100; f++) {
            List<Integer> order = new ArrayList<>();
            List<Box> dets = new ArrayList<>();
            for (int i = 0; i < faces; i++) {
                vx[i] += r.nextDouble() - 0.5;
                vy[i] += (r.nextDouble() - 0.5) * 0.5;
                x[i] += vx[i];
                y[i] += vy[i];
                if (x[i] < 0 || x[i] > 600) {
                    vx[i] = -vx[i];
                }
                if (y[i] < 40 + 200 * i - 60 || y[i] > 40 + 200 * i + 60) {
                    vy[i] = -vy[i];
                }
                order.add(i);
            }
            Collections.shuffle(order, r); // detector order carries no identity
            for (int i : order) {
                int size = 60 + r.nextInt(5) - 2; // detector jitter
                dets.add(new Box((int) Math.round(x[i]), (int) Math.round(y[i]), size, size));
            }
            List<IouTracker.Tracked> out = tracker.update(dets, f, at(f));
            assertEquals(faces, out.size());
            assertTrue(tracker.ended().isEmpty(), "frame " + f + " ended " + tracker.ended());
            for (int k = 0; k < faces; k++) {
                int face = order.get(k);
                IouTracker.Tracked t = out.get(k);
                assertEquals(dets.get(k), t.box());
                assertEquals(f + 1, t.framesSeen());
                assertEquals(f == 0, t.isNew());
                if (f == 0) {
                    ids[face] = t.trackId();
                } else {
                    assertEquals(ids[face], t.trackId(), "face " + face + " frame " + f);
                }
            }
        }
        assertEquals(faces, new HashSet<>(List.of(ids)).size());
        assertEquals(faces, tracker.size());
    }

    @Test
    void crossingPathsKeepTheirIdsWhenOwnOverlapIsHigher() {
        IouTracker tracker = new IouTracker();
        String a = null;
        String b = null;
        for (int f = 0; f < 60; f++) {
            // A goes right, B goes left, 20 px apart vertically: at the crossing A's old box overlaps B's new one
            // above the threshold too, and only the highest-IoU-first order keeps them apart.
            Box boxA = box(10 + 5 * f, 100);
            Box boxB = box(305 - 5 * f, 120);
            List<IouTracker.Tracked> out = tracker.update(List.of(boxB, boxA), f, at(f));
            if (f == 0) {
                b = out.get(0).trackId();
                a = out.get(1).trackId();
            }
            assertEquals(b, out.get(0).trackId(), "B at frame " + f);
            assertEquals(a, out.get(1).trackId(), "A at frame " + f);
        }
        assertTrue(box(160, 100).iou(box(160, 120)) > IouTracker.DEFAULT_IOU_THRESHOLD, "the test must really cross");
    }

    @Test
    void fastMotionIsFollowedByCentreDistance() {
        // 30 px per frame on a 40 px box: IoU 10/70, below the threshold.
        assertTrue(box(0, 0).iou(box(30, 0)) < IouTracker.DEFAULT_IOU_THRESHOLD);
        IouTracker tracker = new IouTracker();
        String id = tracker.update(List.of(box(0, 0)), 0, at(0)).get(0).trackId();
        for (int f = 1; f < 20; f++) {
            assertEquals(id, tracker.update(List.of(box(30 * f, 0)), f, at(f)).get(0).trackId());
        }

        IouTracker iouOnly = new IouTracker(IouTracker.Config.defaults().withCentreFraction(0));
        String first = iouOnly.update(List.of(box(0, 0)), 0, at(0)).get(0).trackId();
        IouTracker.Tracked next = iouOnly.update(List.of(box(30, 0)), 1, at(1)).get(0);
        assertTrue(next.isNew());
        assertNotEquals(first, next.trackId());
    }

    @Test
    void eachTrackIsMatchedAtMostOncePerFrame() {
        IouTracker tracker = new IouTracker();
        String id = tracker.update(List.of(box(100, 100)), 0, at(0)).get(0).trackId();
        List<IouTracker.Tracked> out = tracker.update(List.of(box(102, 100), box(101, 100)), 1, at(1));
        // The closer detection keeps the track; the other cannot share it.
        assertEquals(id, out.get(1).trackId());
        assertTrue(out.get(0).isNew());
        assertNotEquals(id, out.get(0).trackId());
    }

    @Test
    void aTrackSurvivesMaxMissedFramesAndEndsAfterOneMore() {
        IouTracker.Config config = IouTracker.Config.defaults().withMaxMissedFrames(5);

        IouTracker tracker = new IouTracker(config);
        String id = seen(tracker, 0, 10);
        for (int f = 10; f < 15; f++) { // 5 missed frames
            tracker.update(List.of(), f, at(f));
            assertTrue(tracker.ended().isEmpty());
        }
        IouTracker.Tracked back = tracker.update(List.of(box(100, 100)), 15, at(15)).get(0);
        assertEquals(id, back.trackId());
        assertEquals(11, back.framesSeen());

        IouTracker gone = new IouTracker(config);
        String old = seen(gone, 0, 10);
        for (int f = 10; f < 16; f++) { // 6 missed frames
            gone.update(List.of(), f, at(f));
            assertEquals(f == 15 ? List.of(old) : List.of(), gone.ended(), "frame " + f);
        }
        IouTracker.Tracked fresh = gone.update(List.of(box(100, 100)), 16, at(16)).get(0);
        assertTrue(fresh.isNew());
        assertNotEquals(old, fresh.trackId());
        assertEquals(1, fresh.framesSeen());
    }

    @Test
    void skippedFrameSequencesCountAsMissed() {
        IouTracker tracker = new IouTracker(IouTracker.Config.defaults().withMaxMissedFrames(5));
        String id = seen(tracker, 0, 1);
        IouTracker.Tracked t = tracker.update(List.of(box(100, 100)), 7, at(7)).get(0); // frames 1..6 missed
        assertTrue(t.isNew());
        assertEquals(List.of(id), tracker.ended());
    }

    @Test
    void aTrackEndsAfterMaxIdleTime() {
        IouTracker tracker = new IouTracker(IouTracker.Config.defaults().withMaxIdle(Duration.ofSeconds(2)));
        String id = tracker.update(List.of(box(100, 100)), 0, T0).get(0).trackId();
        assertEquals(id, tracker.update(List.of(box(100, 100)), 1, T0.plusSeconds(2)).get(0).trackId());
        IouTracker.Tracked t = tracker.update(List.of(box(100, 100)), 2, T0.plusSeconds(5)).get(0);
        assertTrue(t.isNew());
        assertEquals(List.of(id), tracker.ended());
    }

    @Test
    void aReconnectKeepsTracksSeenWithinMaxIdleAndEndsOlderOnes() {
        IouTracker tracker = new IouTracker();
        String id = seen(tracker, 100, 3);
        // The camera reconnects 3 s later and its frame numbers start again: the face still in place keeps its track.
        IouTracker.Tracked t = tracker.update(List.of(box(100, 100)), 0, at(102).plusSeconds(3)).get(0);
        assertFalse(t.isNew());
        assertEquals(id, t.trackId());
        assertEquals(4, t.framesSeen());
        assertEquals(List.of(), tracker.ended());
        // A reconnect after more than maxIdle (10 s) ends it.
        IouTracker.Tracked late = tracker.update(List.of(box(100, 100)), 0, at(102).plusSeconds(20)).get(0);
        assertTrue(late.isNew());
        assertEquals(List.of(id), tracker.ended());
    }

    @Test
    void pastMaxTracksNewFacesAreUntrackedAndNoLiveTrackIsEvicted() {
        IouTracker tracker = new IouTracker(IouTracker.Config.defaults().withMaxTracks(3));
        List<String> ids = new ArrayList<>();
        for (int f = 0; f < 3; f++) {
            // Each frame a new face far from the others; earlier ones are unseen but not yet expired.
            ids.add(tracker.update(List.of(box(200 * f, 0)), f, at(f)).get(0).trackId());
        }
        IouTracker.Tracked fourth = tracker.update(List.of(box(600, 0)), 3, at(3)).get(0);
        assertTrue(fourth.untracked() && fourth.trackId() == null, "no room: untracked, to be withheld");
        assertEquals(List.of(), tracker.ended(), "no track is evicted to make room");
        assertEquals(3, tracker.size());
        // The first face, unseen for three frames, still has its track (and so its spent budget).
        assertEquals(ids.get(0), tracker.update(List.of(box(0, 0)), 4, at(4)).get(0).trackId());

        IouTracker crowded = new IouTracker(IouTracker.Config.defaults().withMaxTracks(3));
        List<Box> five = List.of(box(0, 0), box(200, 0), box(400, 0), box(600, 0), box(800, 0));
        for (int f = 0; f < 30; f++) {
            List<IouTracker.Tracked> out = crowded.update(five, f, at(f));
            assertEquals(5, out.size());
            assertEquals(3, out.stream().filter(x -> !x.untracked()).count(), "frame " + f);
            assertEquals(2, out.stream().filter(IouTracker.Tracked::untracked).count());
            boolean first = f == 0;
            assertTrue(out.stream().filter(x -> !x.untracked()).allMatch(x -> !x.isNew() || first),
                    "the same three faces keep their tracks; the other two never get a fresh one per frame");
            assertEquals(List.of(), crowded.ended());
        }
        // When a tracked face leaves and its track ends, a waiting face gets the free slot.
        List<Box> four = List.of(box(200, 0), box(400, 0), box(600, 0), box(800, 0));
        List<IouTracker.Tracked> out = null;
        for (int f = 30; f < 48; f++) {
            out = crowded.update(four, f, at(f));
        }
        assertEquals(3, out.stream().filter(x -> !x.untracked()).count());
        assertEquals(1, out.stream().filter(IouTracker.Tracked::untracked).count());
    }

    @Test
    void idsAreRandomUuidsNotDerivedFromContent() {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            String id = new IouTracker().update(List.of(box(100, 100)), 0, T0).get(0).trackId();
            assertTrue(id.matches("trk-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"), id);
            assertTrue(seen.add(id), "same box, same time must still give a fresh id");
        }
    }

    @Test
    void badConfigurationIsRejected() {
        IouTracker.Config d = IouTracker.Config.defaults();
        assertThrows(IllegalArgumentException.class, () -> d.withIouThreshold(1.0));
        assertThrows(IllegalArgumentException.class, () -> d.withIouThreshold(-0.1));
        assertThrows(IllegalArgumentException.class, () -> d.withIouThreshold(Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> d.withCentreFraction(-1));
        assertThrows(IllegalArgumentException.class, () -> d.withCentreFraction(Double.POSITIVE_INFINITY));
        assertThrows(IllegalArgumentException.class, () -> d.withMaxMissedFrames(-1));
        assertThrows(IllegalArgumentException.class, () -> d.withMaxIdle(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> d.withMaxTracks(0));
        assertThrows(IllegalArgumentException.class, () -> new Box(0, 0, -1, 5));
    }

    @Test
    void boxGeometry() {
        assertEquals(1.0, box(10, 10).iou(box(10, 10)));
        assertEquals(0.0, box(0, 0).iou(box(40, 0)));
        assertEquals(20.0 * 40 / (2 * 1600 - 800), box(0, 0).iou(box(20, 0)), 1e-15);
        assertEquals(0.0, new Box(0, 0, 0, 0).iou(new Box(0, 0, 0, 0)));
        assertEquals(1600, box(0, 0).area());
        Box far = new Box(Integer.MAX_VALUE - 10, Integer.MAX_VALUE - 10, 10, 10);
        assertEquals(1.0, far.iou(far));
        assertFalse(box(0, 0).iou(box(0, 39)) > 0.3);
    }

    /** Shows one static box at (100, 100) for {@code count} frames from {@code first}; returns its id. */
    private static String seen(IouTracker tracker, long first, int count) {
        String id = null;
        for (long f = first; f < first + count; f++) {
            id = tracker.update(List.of(box(100, 100)), f, at(f)).get(0).trackId();
        }
        return id;
    }
}
