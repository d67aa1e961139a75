package org.privface.agent.publish;

import static java.nio.file.StandardOpenOption.APPEND;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.privface.agent.publish.DiskSpool.Options;
import org.privface.agent.publish.DiskSpool.Spooled;

class DiskSpoolTest {

    static final int H = DiskSpool.SEGMENT_HEADER_BYTES;

    @TempDir
    Path dir;

    /** Fixed-size entries, so byte offsets and capacities are exact. */
    static SpoolEntry entry(int i) {
        byte[] v = new byte[50];
        for (int j = 0; j < v.length; j++) {
            v[j] = (byte) (i * 31 + j);
        }
        return new SpoolEntry("site-a.query", "cam-" + (i % 3), v, String.format("e%06d", i), 1_700_000_000_000L + i);
    }

    static final int F = (int) SpoolFormat.framedSize(entry(0));
    /** Ten frames per segment. */
    static final int SEG = H + 10 * F;

    static Options opts(long maxBytes, DropPolicy policy) {
        return Options.of(maxBytes, policy).withSegmentBytes(SEG).withSyncEveryAppends(0);
    }

    static List<Spooled> all(DiskSpool s) {
        return s.peek(Integer.MAX_VALUE);
    }

    static List<String> ids(List<Spooled> l) {
        return l.stream().map(x -> x.entry().eventId()).collect(Collectors.toList());
    }

    static List<String> idRange(int fromInclusive, int toExclusive) {
        List<String> out = new ArrayList<>();
        for (int i = fromInclusive; i < toExclusive; i++) {
            out.add(String.format("e%06d", i));
        }
        return out;
    }

    static void appendAll(DiskSpool s, int fromInclusive, int toExclusive) {
        for (int i = fromInclusive; i < toExclusive; i++) {
            assertTrue(s.append(entry(i)), "append " + i);
        }
    }

    List<Path> segmentFiles() throws IOException {
        try (Stream<Path> st = Files.list(dir)) {
            return st.filter(p -> p.getFileName().toString().startsWith("seg-")).sorted().collect(Collectors.toList());
        }
    }

    long segmentBytesOnDisk() throws IOException {
        long n = 0;
        for (Path p : segmentFiles()) {
            n += Files.size(p);
        }
        return n;
    }

    static void flipByte(Path file, long offset) throws IOException {
        try (FileChannel c = FileChannel.open(file, READ, WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            c.read(b, offset);
            b.put(0, (byte) (b.get(0) ^ 0x5A)).rewind();
            c.write(b, offset);
        }
    }

    static void putInt(Path file, long offset, int v) throws IOException {
        try (FileChannel c = FileChannel.open(file, READ, WRITE)) {
            c.write(ByteBuffer.allocate(4).putInt(0, v), offset);
        }
    }

    static long frameOffset(int indexInSegment) {
        return H + (long) indexInSegment * F;
    }

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

    // ------------------------------------------------------------------ crash recovery

    static IntStream cuts() {
        return IntStream.of(1, 4, 7, 8, 9, 20, 60, F - 8, F - 1);
    }

    @ParameterizedTest(name = "cut {0} bytes off the last frame")
    @MethodSource("cuts")
    void tornTailIsTruncatedWithoutLosingCompleteEntries(int cut) throws IOException {
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            appendAll(s, 0, 10);
        }
        Path seg = segmentFiles().get(0);
        try (FileChannel c = FileChannel.open(seg, WRITE)) {
            c.truncate(c.size() - cut);
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            assertEquals(1, s.recoveredCorruptions());
            assertEquals(0, s.dropped(), "a torn write was never stored, so it is not a drop");
            assertEquals(idRange(0, 9), ids(all(s)));
            assertEquals(frameOffset(9), Files.size(seg));
            assertTrue(s.append(entry(10)));
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            assertEquals(0, s.recoveredCorruptions());
            List<String> expected = new ArrayList<>(idRange(0, 9));
            expected.add("e000010");
            assertEquals(expected, ids(all(s)));
        }
    }

    @Test
    void garbageZerosAndBadFramesAfterTheTailAreTruncated() throws IOException {
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            appendAll(s, 0, 5);
        }
        Path seg = segmentFiles().get(0);
        byte[] random = new byte[333];
        new Random(7).nextBytes(random);
        byte[] lastFrame = new byte[F];
        try (FileChannel c = FileChannel.open(seg, READ)) {
            c.read(ByteBuffer.wrap(lastFrame), frameOffset(4));
        }
        lastFrame[F - 1] ^= 1; // a whole frame whose CRC fails, with nothing after it
        byte[][] tails = {random, new byte[4096], lastFrame};
        for (byte[] tail : tails) {
            Files.write(seg, tail, APPEND);
            try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
                assertEquals(1, s.recoveredCorruptions());
                assertEquals(idRange(0, 5), ids(all(s)));
                assertEquals(frameOffset(5), Files.size(seg));
            }
        }
    }

    @Test
    void aCorruptEntryInTheMiddleIsCutOutAndTheSegmentRepaired() throws IOException {
        List<String> told = new CopyOnWriteArrayList<>();
        Options o = opts(1 << 20, DropPolicy.DROP_NEWEST).withDropListener((r, n, d) -> told.add(r + ":" + n));
        try (DiskSpool s = DiskSpool.open(dir, o)) {
            appendAll(s, 0, 10);
        }
        Path seg = segmentFiles().get(0);
        flipByte(seg, frameOffset(4) + 8 + 30); // inside e4's payload
        try (DiskSpool s = DiskSpool.open(dir, o)) {
            assertEquals(1, s.recoveredCorruptions());
            assertEquals(1, s.dropped(DropReason.CORRUPT));
            assertEquals(List.of("CORRUPT:1"), told);
            List<String> expected = new ArrayList<>(idRange(0, 4));
            expected.addAll(idRange(5, 10));
            assertEquals(expected, ids(all(s)));
            assertEquals(frameOffset(9), Files.size(seg), "the bad frame is gone from disk");
            assertEquals(9, s.depth());
        }
        try (DiskSpool s = DiskSpool.open(dir, o)) {
            assertEquals(0, s.recoveredCorruptions(), "the repair was persisted");
            assertEquals(9, s.depth());
        }
    }

    @Test
    void aCorruptLengthEndsThatSegmentOnlyAndLaterSegmentsSurvive() throws IOException {
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            appendAll(s, 0, 30);
        }
        Path second = segmentFiles().get(1);
        putInt(second, frameOffset(4), 0x7FFF_FFFF); // e14's length
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            assertEquals(1, s.recoveredCorruptions());
            List<String> expected = new ArrayList<>(idRange(0, 14));
            expected.addAll(idRange(20, 30));
            assertEquals(expected, ids(all(s)));
            assertTrue(s.append(entry(30)));
            assertEquals(30, all(s).get(24).seq());
            s.commit(Long.MAX_VALUE);
            assertEquals(0, s.depth());
            assertTrue(segmentFiles().isEmpty());
        }
    }

    @Test
    void corruptionFoundWhileRunningDiscardsTheRestOfThatSegment() throws IOException {
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            appendAll(s, 0, 20);
            flipByte(segmentFiles().get(0), frameOffset(3) + 8 + 30); // a disk fault under a running spool
            List<Spooled> first = s.peek(10);
            assertEquals(idRange(0, 3), ids(first), "entries before the fault are still delivered");
            s.commit(first.get(2).seq());
            assertEquals(idRange(10, 20), ids(s.peek(100)));
            assertEquals(7, s.dropped(DropReason.CORRUPT));
            assertEquals(1, s.recoveredCorruptions());
            assertEquals(10, s.depth());
        }
    }

    @Test
    void anUnreadableCheckpointReplaysEverythingRatherThanLosingAnything() throws IOException {
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            appendAll(s, 0, 20);
            s.commit(4);
        }
        Files.write(dir.resolve(SpoolFormat.CHECKPOINT), new byte[] {1, 2, 3});
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            assertEquals(1, s.recoveredCorruptions());
            assertEquals(idRange(0, 20), ids(all(s)), "at least once: e0..e4 come again");
        }
    }

    @Test
    void aSecondOpenOfTheSameDirectoryIsRefused() throws IOException {
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            IOException e = assertThrows(IOException.class, () -> DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST)));
            assertTrue(e.getMessage().contains("already open"));
            s.append(entry(0));
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            assertEquals(1, s.depth());
        }
    }

    /** Kills a real JVM with SIGKILL while it appends and commits, then checks nothing was lost. */
    @Test
    @Timeout(60)
    void survivesSigkillOfTheWritingJvm() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path spool = dir.resolve("spool");
        Path err = dir.resolve("child.err");
        Process p = new ProcessBuilder(java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                CrashChild.class.getName(), spool.toString())
                .redirectError(err.toFile())
                .start();
        long lastReported = -1;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                lastReported = Long.parseLong(line.trim());
                if (lastReported >= 5000) {
                    break;
                }
            }
            p.destroyForcibly(); // SIGKILL on Unix: no shutdown hooks, no close()
            assertTrue(p.waitFor(20, TimeUnit.SECONDS));
        } finally {
            p.destroyForcibly();
        }
        assertTrue(lastReported >= 5000, "child stopped early; exit " + p.exitValue() + ": " + Files.readString(err));
        try (DiskSpool s = DiskSpool.open(spool, CrashChild.options())) {
            assertTrue(s.recoveredCorruptions() <= 1, "at most one torn write");
            List<Spooled> left = all(s);
            assertEquals(left.size(), s.depth());
            long first = left.get(0).seq();
            for (int i = 0; i < left.size(); i++) {
                Spooled x = left.get(i);
                assertEquals(first + i, x.seq(), "no gaps");
                assertEquals(entry((int) x.seq()), x.entry());
            }
            long last = left.get(left.size() - 1).seq();
            assertTrue(last >= lastReported, "entry " + lastReported + " was appended before it was reported");
            assertTrue(left.size() >= CrashChild.WINDOW, "only committed entries may be gone, kept " + left.size());
        }
    }

    /** Appends forever, committing all but the newest WINDOW entries; prints progress every 100 entries. */
    public static final class CrashChild {
        static final int WINDOW = 1000;

        static Options options() {
            return Options.of(64L << 20, DropPolicy.DROP_NEWEST).withSegmentBytes(32 * 1024).withSyncEveryAppends(0);
        }

        public static void main(String[] args) throws IOException {
            try (DiskSpool s = DiskSpool.open(Path.of(args[0]), options())) {
                for (int i = 0; ; i++) {
                    if (!s.append(entry(i))) {
                        throw new IllegalStateException("dropped " + i);
                    }
                    if (i >= WINDOW) {
                        s.commit(i - WINDOW);
                    }
                    if (i % 100 == 0) {
                        System.out.println(i);
                        System.out.flush();
                    }
                }
            }
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

    // ------------------------------------------------------------------ disk full

    /** Wraps real channels; while full, writes store half their bytes and then fail, as a filling disk does. */
    static final class FaultyDisk implements DiskSpool.ChannelFactory {
        final AtomicBoolean full = new AtomicBoolean();
        final AtomicBoolean truncateFails = new AtomicBoolean();

        @Override
        public FileChannel open(Path path, OpenOption... options) throws IOException {
            return new FaultyChannel(FileChannel.open(path, options), this);
        }
    }

    @Test
    void aFullDiskDropsTheEntryWithItsReasonAndTheSpoolStaysUsable() throws IOException {
        FaultyDisk disk = new FaultyDisk();
        List<String> told = new CopyOnWriteArrayList<>();
        Options o = opts(1 << 20, DropPolicy.DROP_NEWEST).withChannels(disk).withDropListener((r, n, d) -> told.add(r + " " + d));
        try (DiskSpool s = DiskSpool.open(dir, o)) {
            appendAll(s, 0, 5);
            disk.full.set(true);
            assertFalse(s.append(entry(5)));
            assertEquals(1, s.dropped(DropReason.IO_ERROR));
            assertEquals(1, told.size());
            assertTrue(told.get(0).startsWith("IO_ERROR") && told.get(0).contains("No space left on device"), told.get(0));
            assertEquals(frameOffset(5), Files.size(segmentFiles().get(0)), "the partial frame was cut off");

            disk.truncateFails.set(true); // now even the clean-up fails: half a frame stays on disk
            assertFalse(s.append(entry(6)));
            assertTrue(Files.size(segmentFiles().get(0)) > frameOffset(5));
            disk.full.set(false);
            disk.truncateFails.set(false);
            appendAll(s, 7, 9); // overwrites the leftover from the spool's own end of data
            assertEquals(2, s.dropped());
            List<String> expected = new ArrayList<>(idRange(0, 5));
            expected.addAll(idRange(7, 9));
            assertEquals(expected, ids(all(s)));
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            assertEquals(0, s.recoveredCorruptions());
            List<String> expected = new ArrayList<>(idRange(0, 5));
            expected.addAll(idRange(7, 9));
            assertEquals(expected, ids(all(s)));
        }
    }

    @Test
    void aFailedWriteWithNothingAfterItIsRecoveredAsATornTail() throws IOException {
        FaultyDisk disk = new FaultyDisk();
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST).withChannels(disk))) {
            appendAll(s, 0, 5);
            disk.full.set(true);
            disk.truncateFails.set(true);
            assertFalse(s.append(entry(5)));
            disk.full.set(false);
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            assertEquals(1, s.recoveredCorruptions());
            assertEquals(idRange(0, 5), ids(all(s)));
        }
    }

    @Test
    void aFullDiskWhenRollingOverLeavesNoHalfMadeSegment() throws IOException {
        FaultyDisk disk = new FaultyDisk();
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST).withChannels(disk))) {
            appendAll(s, 0, 10);
            disk.full.set(true);
            assertFalse(s.append(entry(10)));
            assertEquals(1, segmentFiles().size());
            assertEquals(SEG, s.bytes());
            disk.full.set(false);
            appendAll(s, 11, 13);
            assertEquals(List.of(dir.resolve(SpoolFormat.segmentName(0)), dir.resolve(SpoolFormat.segmentName(10))), segmentFiles());
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            List<String> expected = new ArrayList<>(idRange(0, 10));
            expected.addAll(idRange(11, 13));
            assertEquals(expected, ids(all(s)));
            assertEquals(0, s.recoveredCorruptions());
        }
    }

    @Test
    void aFullDiskDuringCommitStillFreesSpaceAndOnlyRisksReplays() throws IOException {
        FaultyDisk disk = new FaultyDisk();
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST).withChannels(disk))) {
            appendAll(s, 0, 30);
            s.commit(4);
            disk.full.set(true); // the checkpoint can no longer be written
            assertEquals(10, s.commit(14));
            assertEquals(2, segmentFiles().size(), "the consumed segment is deleted anyway");
            assertEquals(15, s.depth());
            disk.full.set(false);
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            assertEquals(idRange(15, 30), ids(all(s)), "close wrote the checkpoint it owed");
        }
    }

    @Test
    void aFullDiskDuringRepairFallsBackToTruncation() throws IOException {
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            appendAll(s, 0, 10);
        }
        flipByte(segmentFiles().get(0), frameOffset(4) + 8 + 30);
        FaultyDisk disk = new FaultyDisk();
        disk.full.set(true);
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST).withChannels(disk))) {
            assertEquals(idRange(0, 4), ids(all(s)));
            assertEquals(6, s.dropped(DropReason.CORRUPT), "e4 was corrupt, e5..e9 had no room to be kept");
            disk.full.set(false);
        }
        try (DiskSpool s = DiskSpool.open(dir, opts(1 << 20, DropPolicy.DROP_NEWEST))) {
            assertEquals(0, s.recoveredCorruptions());
            assertEquals(idRange(0, 4), ids(all(s)));
        }
    }

    @Test
    void optionsAreValidated() {
        assertThrows(IllegalArgumentException.class, () -> Options.of(10, DropPolicy.DROP_NEWEST));
        assertThrows(IllegalArgumentException.class, () -> Options.of(1 << 20, DropPolicy.DROP_NEWEST).withSyncEveryAppends(-1));
        assertThrows(NullPointerException.class, () -> new SpoolEntry("t", null, null, "id", 0));
        assertNotNull(Options.of(1 << 20, DropPolicy.DROP_OLDEST));
    }

    /** Delegates to a real channel, failing writes and truncation on demand. */
    static final class FaultyChannel extends FileChannel {
        private final FileChannel d;
        private final FaultyDisk disk;

        FaultyChannel(FileChannel d, FaultyDisk disk) {
            this.d = d;
            this.disk = disk;
        }

        private IOException fillUp(ByteBuffer src, long position) throws IOException {
            ByteBuffer half = src.slice().limit(src.remaining() / 2);
            if (position < 0) {
                d.write(half);
            } else {
                d.write(half, position);
            }
            return new IOException("No space left on device");
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            if (disk.full.get()) {
                throw fillUp(src, position);
            }
            return d.write(src, position);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            if (disk.full.get()) {
                throw fillUp(src, -1);
            }
            return d.write(src);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            if (disk.full.get()) {
                throw new IOException("No space left on device");
            }
            return d.write(srcs, offset, length);
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            if (disk.truncateFails.get()) {
                throw new IOException("Input/output error");
            }
            d.truncate(size);
            return this;
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            return d.read(dst);
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            return d.read(dsts, offset, length);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            return d.read(dst, position);
        }

        @Override
        public long position() throws IOException {
            return d.position();
        }

        @Override
        public FileChannel position(long newPosition) throws IOException {
            d.position(newPosition);
            return this;
        }

        @Override
        public long size() throws IOException {
            return d.size();
        }

        @Override
        public void force(boolean metaData) throws IOException {
            d.force(metaData);
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
            return d.transferTo(position, count, target);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
            if (disk.full.get()) {
                throw new IOException("No space left on device");
            }
            return d.transferFrom(src, position, count);
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            return d.map(mode, position, size);
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) throws IOException {
            return d.lock(position, size, shared);
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) throws IOException {
            return d.tryLock(position, size, shared);
        }

        @Override
        protected void implCloseChannel() throws IOException {
            d.close();
        }
    }
}
