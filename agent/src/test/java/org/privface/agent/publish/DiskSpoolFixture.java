package org.privface.agent.publish;

import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.io.TempDir;
import org.privface.agent.publish.DiskSpool.Options;
import org.privface.agent.publish.DiskSpool.Spooled;

/** Fixed-size entries, exact byte offsets and file surgery shared by the spool's tests. */
abstract class DiskSpoolFixture {

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
}
