package org.privface.agent.publish;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.privface.agent.publish.DiskSpool.Options;
import org.privface.agent.publish.DiskSpool.Spooled;

/** Order, acknowledgement and reopening; the bound and the drop policies; concurrency. */
class DiskSpoolTest extends DiskSpoolFixture {

    // ------------------------------------------------------------------ order, ack, reopen

    @Test
    void orderAndContentPreservedAcrossReopen() throws IOException {
        List<SpoolEntry> written = new ArrayList<>();
        for (int i = 0; i < 45; i++) {
            // Vary sizes, null keys and non-ASCII text so the framing is exercised beyond fixed-size entries.
            byte[] v = new byte[i * 7];
            new Random(i).nextBytes(v);
            written.add(new SpoolEntry(i % 2 == 0 ? "site-a.query" : "site-ü.enrol", i % 5 == 0 ? null : "cam-" + i + "-ñ",
                    v, "id-" + i, 1_700_000_000_000L + i));
        }
        for (SpoolEntry e : written) {
            assertEquals(SpoolFormat.encode(0, e).length, SpoolFormat.framedSize(e));
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            for (SpoolEntry e : written.subList(0, 30)) {
                assertTrue(s.append(e));
            }
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            assertEquals(30, s.depth());
            for (SpoolEntry e : written.subList(30, 45)) {
                assertTrue(s.append(e));
            }
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            List<Spooled> got = all(s);
            assertEquals(written, got.stream().map(Spooled::entry).collect(Collectors.toList()));
            for (int i = 0; i < got.size(); i++) {
                assertEquals(i, got.get(i).seq());
            }
            assertEquals(45, s.depth());
            assertEquals(segmentBytesOnDisk(), s.bytes());
            assertEquals(0, s.recoveredCorruptions());
            assertEquals(0, s.dropped());
            assertEquals(written.get(0), s.peek().orElseThrow().entry());
        }
    }

    @Test
    void commitRemovesEntriesAndSurvivesReopen() throws IOException {
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            appendAll(s, 0, 50);
            List<Spooled> batch = s.peek(23);
            assertEquals(idRange(0, 23), ids(batch));
            assertEquals(23, s.commit(batch.get(22).seq()));
            assertEquals(27, s.depth());
            assertEquals("e000023", s.peek().orElseThrow().entry().eventId());
            assertEquals(0, s.commit(batch.get(22).seq()), "committing again removes nothing");
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            assertEquals(27, s.depth());
            assertEquals(idRange(23, 50), ids(all(s)));
            assertEquals(27, s.commit(Long.MAX_VALUE));
            assertEquals(0, s.depth());
            assertEquals(0, s.bytes());
            assertTrue(segmentFiles().isEmpty(), "fully consumed segments are deleted");
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            assertEquals(0, s.depth());
            assertTrue(s.peek().isEmpty());
            assertTrue(s.append(entry(50)));
            assertEquals(50, s.peek().orElseThrow().seq(), "sequence numbers never go back, even with nothing stored");
        }
    }

    @Test
    void segmentsRollOverAndConsumedOnesAreDeleted() throws IOException {
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            assertEquals(SEG, s.segmentBytes());
            appendAll(s, 0, 35);
            List<String> names = segmentFiles().stream().map(p -> p.getFileName().toString()).collect(Collectors.toList());
            assertEquals(List.of(SpoolFormat.segmentName(0), SpoolFormat.segmentName(10), SpoolFormat.segmentName(20),
                    SpoolFormat.segmentName(30)), names);
            assertEquals(3L * SEG + H + 5L * F, s.bytes());
            assertEquals(segmentBytesOnDisk(), s.bytes());

            s.commit(9);
            assertEquals(3, segmentFiles().size());
            s.commit(24);
            assertEquals(2, segmentFiles().size(), "a partly consumed segment stays until it is fully consumed");
            assertEquals(segmentBytesOnDisk(), s.bytes());
            assertEquals(10, s.depth());
            s.commit(34);
            assertEquals(0, segmentFiles().size(), "the active segment too is deleted once consumed");
            assertTrue(s.append(entry(35)));
            assertEquals(List.of(dir.resolve(SpoolFormat.segmentName(35))), segmentFiles());
        }
    }

    @Test
    void anEntryLargerThanASegmentGetsItsOwnSegment() throws IOException {
        try (DiskSpool s = DiskSpool.open(dir, opts(4L * SEG, DropPolicy.DROP_NEWEST))) {
            appendAll(s, 0, 3);
            SpoolEntry big = new SpoolEntry("t", null, new byte[SEG + 100], "big", 1);
            assertTrue(s.append(big));
            appendAll(s, 3, 5);
            assertEquals(3, segmentFiles().size());
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(4L * SEG, DropPolicy.DROP_NEWEST))) {
            List<String> expected = new ArrayList<>(idRange(0, 3));
            expected.add("big");
            expected.addAll(idRange(3, 5));
            assertEquals(expected, ids(all(s)));
        }
    }

    // ------------------------------------------------------------------ bound and drop policies

    @Test
    void dropNewestRefusesExactlyWhatDoesNotFit() throws IOException {
        List<DropReason> told = new CopyOnWriteArrayList<>();
        long max = 4L * SEG; // exactly four segments of ten entries
        Options o = opts(max, DropPolicy.DROP_NEWEST).withDropListener((r, n, d) -> {
            for (int i = 0; i < n; i++) {
                told.add(r);
            }
        });
        try (DiskSpool s = DiskSpool.open(dir, o)) {
            int accepted = 0;
            for (int i = 0; i < 100; i++) {
                accepted += s.append(entry(i)) ? 1 : 0;
                assertTrue(s.bytes() <= max);
                assertTrue(segmentBytesOnDisk() <= max);
            }
            assertEquals(40, accepted);
            assertEquals(60, s.dropped());
            assertEquals(60, s.dropped(DropReason.FULL));
            assertEquals(60, told.size());
            assertEquals(max, s.bytes());
            assertEquals(idRange(0, 40), ids(all(s)), "DROP_NEWEST keeps the oldest");

            s.commit(9); // frees one whole segment
            appendAll(s, 100, 110);
            assertFalse(s.append(entry(110)));
            assertEquals(61, s.dropped(DropReason.FULL));
            List<String> expected = new ArrayList<>(idRange(10, 40));
            expected.addAll(idRange(100, 110));
            assertEquals(expected, ids(all(s)));
        }
    }

    @Test
    void dropOldestEvictsExactlyTheOldestAndCountsThem() throws IOException {
        long max = 4L * SEG;
        try (DiskSpool s = DiskSpool.open(dir, opts(max, DropPolicy.DROP_OLDEST))) {
            for (int i = 0; i < 100; i++) {
                assertTrue(s.append(entry(i)), "DROP_OLDEST always admits the new entry");
                assertTrue(segmentBytesOnDisk() <= max);
            }
            // Evictions at entries 40, 50, ..., 90, a whole ten-entry segment each.
            assertEquals(60, s.dropped(DropReason.EVICTED));
            assertEquals(60, s.dropped());
            assertEquals(40, s.depth());
            assertEquals(idRange(60, 100), ids(all(s)), "DROP_OLDEST keeps the newest");
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(max, DropPolicy.DROP_OLDEST))) {
            assertEquals(idRange(60, 100), ids(all(s)));
            assertEquals(0, s.dropped(), "counters are per open");
        }
    }

    @Test
    void dropOldestCountsOnlyUnacknowledgedEntriesAndLateCommitsAreHarmless() throws IOException {
        try (DiskSpool s = DiskSpool.open(dir, opts(4L * SEG, DropPolicy.DROP_OLDEST))) {
            appendAll(s, 0, 40);
            List<Spooled> inFlight = s.peek(8);
            s.commit(inFlight.get(4).seq()); // e0..e4 acknowledged, e5..e7 still in flight
            assertTrue(s.append(entry(40)));
            assertEquals(5, s.dropped(DropReason.EVICTED), "only e5..e9 were unacknowledged in the evicted segment");
            assertEquals(31, s.depth());
            // The replay thread now acknowledges e5..e7, which were evicted meanwhile: nothing newer may go.
            assertEquals(0, s.commit(inFlight.get(7).seq()));
            assertEquals(31, s.depth());
            assertEquals(idRange(10, 41), ids(all(s)));
        }
    }

    @Test
    void anEntryLargerThanTheBoundIsRefusedWithAClearReason() throws IOException {
        AtomicReference<String> detail = new AtomicReference<>();
        AtomicReference<DropReason> reason = new AtomicReference<>();
        Options o = opts(4096, DropPolicy.DROP_OLDEST).withDropListener((r, n, d) -> {
            reason.set(r);
            detail.set(d);
        });
        try (DiskSpool s = DiskSpool.open(dir, o)) {
            appendAll(s, 0, 3);
            assertFalse(s.append(new SpoolEntry("t", "k", new byte[4096], "huge", 0)));
            assertEquals(DropReason.TOO_LARGE, reason.get());
            assertTrue(detail.get().contains("huge") && detail.get().contains("more than the spool bound of 4096"), detail.get());
            assertEquals(1, s.dropped(DropReason.TOO_LARGE));
            assertEquals(0, s.dropped(DropReason.EVICTED), "a hopeless entry must not evict anything");
            assertEquals(idRange(0, 3), ids(all(s)));
            assertTrue(s.append(entry(3)), "still usable");
        }
    }

    // ------------------------------------------------------------------ concurrency

    @Test
    @Timeout(30)
    void oneProducerAndOneReplayThreadLoseNothingAndKeepOrder() throws Exception {
        int n = 20_000;
        try (DiskSpool s = DiskSpool.open(dir, opts(64L << 20, DropPolicy.DROP_NEWEST))) {
            AtomicReference<Throwable> producerFailure = new AtomicReference<>();
            Thread producer = new Thread(() -> {
                try {
                    for (int i = 0; i < n; i++) {
                        if (!s.append(entry(i))) {
                            throw new AssertionError("dropped " + i);
                        }
                    }
                } catch (Throwable t) {
                    producerFailure.set(t);
                }
            }, "spool-producer");
            producer.start();
            int expected = 0;
            while (expected < n) {
                List<Spooled> batch = s.peek(97);
                if (batch.isEmpty()) {
                    if (producerFailure.get() != null) {
                        fail(producerFailure.get());
                    }
                    Thread.sleep(1);
                    continue;
                }
                for (Spooled x : batch) {
                    assertEquals(entry(expected), x.entry());
                    assertEquals(expected, x.seq());
                    expected++;
                }
                s.commit(batch.get(batch.size() - 1).seq());
            }
            producer.join();
            assertEquals(null, producerFailure.get());
            assertEquals(0, s.depth());
            assertEquals(0, s.dropped());
            assertTrue(segmentFiles().isEmpty());
        }
    }

    @Test
    @Timeout(30)
    void dropOldestUnderConcurrencyDeliversAnOrderedSubsetAndCountsTheRest() throws Exception {
        int n = 5_000;
        try (DiskSpool s = DiskSpool.open(dir, opts(4L * SEG, DropPolicy.DROP_OLDEST))) {
            Thread producer = new Thread(() -> appendAll(s, 0, n), "spool-producer");
            producer.start();
            List<Long> seen = new ArrayList<>();
            while (producer.isAlive() || s.depth() > 0) {
                List<Spooled> batch = s.peek(7);
                if (batch.isEmpty()) {
                    Thread.sleep(1);
                }
                for (Spooled x : batch) {
                    assertEquals(entry((int) x.seq()), x.entry());
                    seen.add(x.seq());
                }
                if (!batch.isEmpty()) {
                    s.commit(batch.get(batch.size() - 1).seq());
                }
            }
            producer.join();
            for (int i = 1; i < seen.size(); i++) {
                assertTrue(seen.get(i) > seen.get(i - 1), "strictly increasing");
            }
            // Entries seen and then evicted before their commit are in both counts.
            assertTrue(seen.size() + s.dropped(DropReason.EVICTED) >= n);
            assertEquals(n - 1, seen.get(seen.size() - 1));
            assertEquals(s.dropped(), s.dropped(DropReason.EVICTED));
        }
    }

    @Test
    void optionsAreValidated() {
        assertThrows(IllegalArgumentException.class, () -> Options.of(10, DropPolicy.DROP_NEWEST));
        assertThrows(IllegalArgumentException.class, () -> Options.of(1 << 20, DropPolicy.DROP_NEWEST).withSyncEveryAppends(-1));
        assertThrows(NullPointerException.class, () -> new SpoolEntry("t", null, null, "id", 0));
        assertNotNull(Options.of(1 << 20, DropPolicy.DROP_OLDEST));
    }
}
