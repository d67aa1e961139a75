package org.privface.agent.publish;

import static java.nio.file.StandardOpenOption.APPEND;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.privface.agent.publish.DiskSpool.Options;
import org.privface.agent.publish.DiskSpool.Spooled;

/** Crash recovery: torn tails, corrupt entries and checkpoints, a second open, SIGKILL of the writer. */
class SpoolRecoveryTest extends DiskSpoolFixture {

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
}
