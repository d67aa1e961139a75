package org.privface.agent.publish;

import static java.nio.file.StandardCopyOption.ATOMIC_MOVE;
import static java.nio.file.StandardCopyOption.REPLACE_EXISTING;
import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.TRUNCATE_EXISTING;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.privface.agent.publish.SpoolFormat.CHECKPOINT;
import static org.privface.agent.publish.SpoolFormat.CHECKPOINT_BYTES;
import static org.privface.agent.publish.SpoolFormat.CHECKPOINT_MAGIC;
import static org.privface.agent.publish.SpoolFormat.CHECKPOINT_TMP;
import static org.privface.agent.publish.SpoolFormat.FRAME_HEADER_BYTES;
import static org.privface.agent.publish.SpoolFormat.REPAIR_SUFFIX;
import static org.privface.agent.publish.SpoolFormat.SEGMENT_HEADER_BYTES;
import static org.privface.agent.publish.SpoolFormat.SEGMENT_MAGIC;
import static org.privface.agent.publish.SpoolFormat.SEGMENT_NAME;
import static org.privface.agent.publish.SpoolFormat.VERSION;
import static org.privface.agent.publish.SpoolFormat.crc;
import static org.privface.agent.publish.SpoolFormat.deleteQuietly;
import static org.privface.agent.publish.SpoolFormat.readFrame;
import static org.privface.agent.publish.SpoolFormat.readFully;
import static org.privface.agent.publish.SpoolFormat.syncDirectory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.zip.CRC32C;

import org.privface.agent.publish.SpoolFormat.Frame;
import org.privface.agent.publish.SpoolFormat.Segment;
import org.privface.agent.publish.SpoolFormat.Status;

/**
 * Recovery on {@link DiskSpool#open}: each segment is read and every frame checked (length in range,
 * CRC, sequence increasing). A bad frame whose length is intact and which is followed by a good frame
 * is cut out (the segment is rewritten, the entry counted as {@link DropReason#CORRUPT}); anything
 * else ends the segment there: it is truncated, which is how a torn tail from a killed write is
 * discarded. Each is one {@link DiskSpool#recoveredCorruptions()} event; open does not fail on
 * corruption. Runs once, under the spool's monitor, before the spool is handed out.
 */
final class SpoolRecovery {
    private final DiskSpool spool;
    private final Path dir;
    private final DiskSpool.ChannelFactory channels;

    SpoolRecovery(DiskSpool spool, Path dir, DiskSpool.ChannelFactory channels) {
        this.spool = spool;
        this.dir = dir;
        this.channels = channels;
    }

    /** What the files on disk hold once repaired: usable segments oldest first, and the checkpoint. */
    record Found(List<Segment> segments, long checkpoint, long lastSeq, long maxBase) {
    }

    /** Deletes leftovers of interrupted repairs, then validates every segment and reads the checkpoint. */
    Found scan() throws IOException {
        List<Segment> kept = new ArrayList<>();
        deleteQuietly(dir.resolve(CHECKPOINT_TMP));
        TreeMap<Long, Path> found = new TreeMap<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                if (n.endsWith(REPAIR_SUFFIX)) {
                    Files.deleteIfExists(p);
                    continue;
                }
                Matcher m = SEGMENT_NAME.matcher(n);
                if (m.matches()) {
                    found.put(Long.parseLong(m.group(1)), p);
                }
            }
        }
        long checkpoint = readCheckpoint();
        long prev = -1;
        long maxBase = 0;
        for (Map.Entry<Long, Path> f : found.entrySet()) {
            maxBase = Math.max(maxBase, f.getKey());
            Segment s = scanSegment(f.getKey(), f.getValue(), prev);
            if (s == null) {
                continue;
            }
            if (s.count == 0) {
                Files.deleteIfExists(s.path);
                continue;
            }
            prev = s.lastSeq;
            kept.add(s);
        }
        return new Found(kept, checkpoint, prev, maxBase);
    }

    private long readCheckpoint() throws IOException {
        Path p = dir.resolve(CHECKPOINT);
        if (!Files.exists(p)) {
            return -1;
        }
        byte[] b = Files.readAllBytes(p);
        if (b.length == CHECKPOINT_BYTES) {
            ByteBuffer bb = ByteBuffer.wrap(b);
            CRC32C crc = new CRC32C();
            crc.update(b, 0, 16);
            if (bb.getInt(0) == CHECKPOINT_MAGIC && bb.getInt(4) == VERSION
                    && bb.getInt(16) == (int) crc.getValue() && bb.getLong(8) >= 0) {
                return bb.getLong(8);
            }
        }
        spool.corruption("checkpoint unreadable; replaying from the oldest stored entry");
        return -1;
    }

    /** Validates one segment, truncating or repairing it; null if it was unusable and deleted. */
    private Segment scanSegment(long base, Path path, long prevSeq) throws IOException {
        Segment s = new Segment(path);
        String name = path.getFileName().toString();
        try (FileChannel ch = channels.open(path, READ, WRITE)) {
            long size = ch.size();
            ByteBuffer h = ByteBuffer.allocate(SEGMENT_HEADER_BYTES);
            if (size < SEGMENT_HEADER_BYTES || !readFully(ch, h, 0) || h.getInt(0) != SEGMENT_MAGIC
                    || h.getInt(4) != VERSION || h.getLong(8) != base) {
                if (size > 0) { // size 0: killed between creating the file and writing its header
                    spool.corruption("segment " + name + " has a bad header; deleted");
                }
                ch.close();
                Files.deleteIfExists(path);
                return null;
            }
            List<long[]> cut = new ArrayList<>();
            int countBeforeCut = 0;
            long lastSeqBeforeCut = -1;
            long pos = SEGMENT_HEADER_BYTES;
            while (pos < size) {
                Frame f = readFrame(ch, pos, size, prevSeq + 1);
                if (f.status() == Status.OK) {
                    s.count++;
                    s.lastSeq = prevSeq = f.seq();
                    pos += FRAME_HEADER_BYTES + f.len();
                    continue;
                }
                if (f.status() == Status.BAD_RECORD) {
                    long next = pos + FRAME_HEADER_BYTES + f.len();
                    if (next < size && readFrame(ch, next, size, prevSeq + 1).status() == Status.OK) {
                        if (cut.isEmpty()) {
                            countBeforeCut = s.count;
                            lastSeqBeforeCut = s.lastSeq;
                        }
                        cut.add(new long[] {pos, next});
                        spool.corruption("segment " + name + ": corrupt entry at byte " + pos + " cut out");
                        spool.drop(DropReason.CORRUPT, 1, "corrupt entry at byte " + pos + " of " + name);
                        pos = next;
                        continue;
                    }
                }
                spool.corruption("segment " + name + ": torn or corrupt tail at byte " + pos + " of " + size + "; truncated");
                ch.truncate(pos);
                size = pos;
            }
            s.size = size;
            if (!cut.isEmpty()) {
                try {
                    s.size = rewriteWithout(ch, path, size, cut);
                } catch (IOException e) {
                    // No room to repair (disk full?): keep what precedes the first bad entry.
                    long first = cut.get(0)[0];
                    ch.truncate(first);
                    spool.drop(DropReason.CORRUPT, s.count - countBeforeCut,
                            "no room to repair " + name + " (" + e + "); truncated at byte " + first);
                    s.size = first;
                    s.count = countBeforeCut;
                    s.lastSeq = lastSeqBeforeCut;
                }
            }
        }
        return s;
    }

    /** Copies the segment without the cut ranges to a temporary file, then moves it over the original. */
    private long rewriteWithout(FileChannel ch, Path path, long size, List<long[]> cut) throws IOException {
        Path tmp = path.resolveSibling(path.getFileName() + REPAIR_SUFFIX);
        long written = 0;
        try {
            try (FileChannel out = channels.open(tmp, CREATE, TRUNCATE_EXISTING, WRITE)) {
                long pos = 0;
                for (long[] c : cut) {
                    written += copy(ch, pos, c[0] - pos, out);
                    pos = c[1];
                }
                written += copy(ch, pos, size - pos, out);
                out.force(true);
            }
            Files.move(tmp, path, ATOMIC_MOVE, REPLACE_EXISTING);
        } catch (IOException e) {
            deleteQuietly(tmp);
            throw e;
        }
        syncDirectory(dir);
        return written;
    }

    private static long copy(FileChannel from, long pos, long count, FileChannel to) throws IOException {
        long left = count;
        while (left > 0) {
            long n = from.transferTo(pos, left, to);
            if (n <= 0) {
                throw new IOException("copy made no progress");
            }
            pos += n;
            left -= n;
        }
        return count;
    }
}
