package org.privface.agent.publish;

import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.TRUNCATE_EXISTING;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.privface.agent.publish.SpoolFormat.FRAME_HEADER_BYTES;
import static org.privface.agent.publish.SpoolFormat.LOCK;
import static org.privface.agent.publish.SpoolFormat.MAX_FRAME;
import static org.privface.agent.publish.SpoolFormat.MIN_PAYLOAD;
import static org.privface.agent.publish.SpoolFormat.SEGMENT_MAGIC;
import static org.privface.agent.publish.SpoolFormat.VERSION;
import static org.privface.agent.publish.SpoolFormat.closeQuietly;
import static org.privface.agent.publish.SpoolFormat.deleteQuietly;
import static org.privface.agent.publish.SpoolFormat.encode;
import static org.privface.agent.publish.SpoolFormat.framedSize;
import static org.privface.agent.publish.SpoolFormat.readFrame;
import static org.privface.agent.publish.SpoolFormat.readFully;
import static org.privface.agent.publish.SpoolFormat.segmentName;
import static org.privface.agent.publish.SpoolFormat.syncDirectory;
import static org.privface.agent.publish.SpoolFormat.writeCheckpoint;
import static org.privface.agent.publish.SpoolFormat.writeFully;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.privface.agent.publish.SpoolFormat.Frame;
import org.privface.agent.publish.SpoolFormat.Segment;
import org.privface.agent.publish.SpoolFormat.Status;

/**
 * A bounded, crash-safe FIFO of Kafka records on local disk, for while the broker is unreachable.
 * Entries are removed only when {@link #commit(long)} says the broker acknowledged them, so delivery
 * is at least once; consumers de-duplicate by event id.
 *
 * <p>Every entry gets the next sequence number; the checkpoint stores a sequence number rather than a
 * file offset, so it stays valid when segments are deleted or repaired. The bound counts segment
 * files (headers included); the checkpoint and lock file are not counted. The file format is
 * {@link SpoolFormat}'s; {@link #open} repairs whatever a crash left as {@link SpoolRecovery} describes,
 * and never fails on corrupt content.
 *
 * <p>Thread safety: every method holds the spool's monitor, which is enough for one producer and
 * one replay thread. The drop listener runs under it too, so it must be quick.
 */
public final class DiskSpool implements AutoCloseable {

    public static final int DEFAULT_SEGMENT_BYTES = 4 << 20;
    /**
     * fsync trade-off: written data sits in the kernel's page cache, which survives SIGKILL of the
     * JVM, so forcing only matters for power loss or a kernel crash. Forcing every append makes every
     * entry durable but costs a flash write each (slow, and wears SD cards); forcing every N appends
     * risks at most the last N-1 entries on power loss, which recovery then truncates cleanly.
     */
    public static final int DEFAULT_SYNC_EVERY_APPENDS = 64;
    public static final int SEGMENT_HEADER_BYTES = SpoolFormat.SEGMENT_HEADER_BYTES;
    private static final System.Logger LOG = System.getLogger(DiskSpool.class.getName());

    /** Opens segment and checkpoint files; replaceable so tests can simulate a full disk. */
    @FunctionalInterface
    public interface ChannelFactory {
        FileChannel open(Path path, OpenOption... options) throws IOException;
    }

    /** Told of every drop, with the number of entries and a human-readable reason. */
    @FunctionalInterface
    public interface DropListener {
        void dropped(DropReason reason, long entries, String detail);
    }

    /** A stored entry with the sequence number to pass to {@link #commit(long)}. */
    public record Spooled(long seq, SpoolEntry entry) {
    }

    /**
     * @param segmentBytes target segment size; capped at a quarter of maxBytes so DROP_OLDEST
     *     never discards more than about a quarter of the spool at once, and DROP_NEWEST wastes at
     *     most one partly acknowledged segment. An entry bigger than a segment gets one to itself.
     * @param syncEveryAppends force data to disk every this many appends; 1 = every append, 0 =
     *     never (page cache only); see {@link #DEFAULT_SYNC_EVERY_APPENDS}. When positive, a segment
     *     is also forced as it is rolled over. {@link #close()} always forces.
     */
    public record Options(long maxBytes, DropPolicy policy, int segmentBytes, int syncEveryAppends,
                          ChannelFactory channels, DropListener dropListener) {

        public Options {
            long min = SEGMENT_HEADER_BYTES + FRAME_HEADER_BYTES + MIN_PAYLOAD;
            if (maxBytes < min) {
                throw new IllegalArgumentException("maxBytes must be at least " + min + ", was " + maxBytes);
            }
            Objects.requireNonNull(policy, "policy");
            if (segmentBytes <= SEGMENT_HEADER_BYTES) {
                throw new IllegalArgumentException("segmentBytes must exceed the header, was " + segmentBytes);
            }
            if (syncEveryAppends < 0) {
                throw new IllegalArgumentException("syncEveryAppends must be >= 0, was " + syncEveryAppends);
            }
            Objects.requireNonNull(channels, "channels");
            Objects.requireNonNull(dropListener, "dropListener");
        }

        public static Options of(long maxBytes, DropPolicy policy) {
            return new Options(maxBytes, policy, DEFAULT_SEGMENT_BYTES, DEFAULT_SYNC_EVERY_APPENDS,
                    FileChannel::open, (reason, n, detail) -> { });
        }

        public Options withSegmentBytes(int v) {
            return new Options(maxBytes, policy, v, syncEveryAppends, channels, dropListener);
        }

        public Options withSyncEveryAppends(int v) {
            return new Options(maxBytes, policy, segmentBytes, v, channels, dropListener);
        }

        public Options withChannels(ChannelFactory v) {
            return new Options(maxBytes, policy, segmentBytes, syncEveryAppends, v, dropListener);
        }

        public Options withDropListener(DropListener v) {
            return new Options(maxBytes, policy, segmentBytes, syncEveryAppends, channels, v);
        }
    }

    private final Path dir;
    private final Options opt;
    private final long segmentBytes;
    private final FileChannel lockChannel;
    private final FileLock lock;
    /** Oldest first; the first is the head (read cursor), the last is where appends go. */
    private final ArrayDeque<Segment> segments = new ArrayDeque<>();
    private long headPos = SEGMENT_HEADER_BYTES;
    private int headConsumed;
    /** Sequence number of the last committed entry, or a lower bound for it. */
    private long cursorSeq;
    private long nextSeq;
    private long depth;
    private long bytes;
    private long droppedTotal;
    private final long[] droppedBy = new long[DropReason.values().length];
    private long corruptions;
    private int unsynced;
    private boolean checkpointDirty;
    private boolean closed;

    private DiskSpool(Path dir, Options opt, FileChannel lockChannel, FileLock lock) {
        this.dir = dir;
        this.opt = opt;
        this.lockChannel = lockChannel;
        this.lock = lock;
        long minSegment = SEGMENT_HEADER_BYTES + FRAME_HEADER_BYTES + MIN_PAYLOAD;
        this.segmentBytes = Math.min(opt.segmentBytes(), Math.max(opt.maxBytes() / 4, minSegment));
    }

    public static DiskSpool open(Path dir, long maxBytes, DropPolicy policy) throws IOException {
        return open(dir, Options.of(maxBytes, policy));
    }

    /**
     * Opens or creates the spool in dir and recovers it. Throws only for real I/O failures (the
     * directory cannot be read, or another process holds the spool), never for corrupt content.
     */
    public static DiskSpool open(Path dir, Options options) throws IOException {
        Files.createDirectories(dir);
        FileChannel lc = FileChannel.open(dir.resolve(LOCK), CREATE, WRITE);
        FileLock lock;
        try {
            lock = lc.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            lc.close();
            throw new IOException("spool " + dir + " is already open");
        }
        DiskSpool s = new DiskSpool(dir, options, lc, lock);
        try {
            s.recover();
            return s;
        } catch (IOException | RuntimeException e) {
            s.closeChannels();
            lock.release();
            lc.close();
            throw e;
        }
    }

    // ---------------------------------------------------------------- public API

    /** Appends an entry; false if it was dropped (the reason is counted and told to the listener). */
    public synchronized boolean append(SpoolEntry e) {
        ensureOpen();
        Objects.requireNonNull(e, "entry");
        long frameBytes = framedSize(e);
        if (frameBytes > MAX_FRAME || frameBytes + SEGMENT_HEADER_BYTES > opt.maxBytes()) {
            return drop(DropReason.TOO_LARGE, 1, "entry " + e.eventId() + " needs " + (frameBytes + SEGMENT_HEADER_BYTES)
                    + " bytes on disk, more than the spool bound of " + opt.maxBytes());
        }
        while (bytes + bytesNeeded(frameBytes) > opt.maxBytes()) {
            if (opt.policy() == DropPolicy.DROP_NEWEST || segments.isEmpty()) {
                return drop(DropReason.FULL, 1, "spool full (" + bytes + " of " + opt.maxBytes()
                        + " bytes), refused entry " + e.eventId());
            }
            evictHead(DropReason.EVICTED, "spool full, evicted the oldest segment to admit entry " + e.eventId());
        }
        try {
            write(encode(nextSeq, e));
            return true;
        } catch (IOException ex) {
            return drop(DropReason.IO_ERROR, 1, "entry " + e.eventId() + " not stored: " + ex);
        }
    }

    /** Up to max of the oldest unacknowledged entries, oldest first; nothing is removed. */
    public synchronized List<Spooled> peek(int max) {
        ensureOpen();
        if (max <= 0) {
            throw new IllegalArgumentException("max must be positive, was " + max);
        }
        try {
            while (true) {
                List<Spooled> out = new ArrayList<>((int) Math.min(max, Math.min(depth, 1024)));
                if (collect(out, max)) {
                    return out;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public synchronized Optional<Spooled> peek() {
        List<Spooled> one = peek(1);
        return one.isEmpty() ? Optional.empty() : Optional.of(one.get(0));
    }

    /**
     * Removes every stored entry with a sequence number up to and including upToSeq, once the broker
     * has acknowledged them. Sequence numbers rather than a count, so entries DROP_OLDEST evicted
     * while they were in flight are simply skipped. Returns the number of entries removed.
     *
     * <p>The checkpoint is written before consumed segments are deleted; a crash in between, or a
     * checkpoint lost to power failure, only replays entries again (duplicates, never loss).
     */
    public synchronized long commit(long upToSeq) {
        ensureOpen();
        long removed = 0;
        List<Segment> consumed = new ArrayList<>();
        try {
            while (depth > 0) {
                Segment h = segments.peekFirst();
                long[] f = frameAt(h, headPos);
                if (f == null || f[1] <= cursorSeq || f[1] > h.lastSeq) {
                    corruptHead("unreadable frame at byte " + headPos + " of " + h.path.getFileName());
                    continue;
                }
                if (f[1] > upToSeq) {
                    break;
                }
                headPos += FRAME_HEADER_BYTES + f[0];
                headConsumed++;
                depth--;
                removed++;
                cursorSeq = f[1];
                if (headConsumed == h.count) {
                    segments.pollFirst();
                    consumed.add(h);
                    headPos = SEGMENT_HEADER_BYTES;
                    headConsumed = 0;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (removed > 0) {
                checkpointDirty = !writeCheckpoint(opt.channels(), dir, cursorSeq + 1, false);
            }
            for (Segment s : consumed) {
                closeQuietly(s);
                deleteQuietly(s.path);
                bytes -= s.size;
            }
        }
        return removed;
    }

    /** Forces appended data to disk now, whatever the sync policy. */
    public synchronized void sync() throws IOException {
        ensureOpen();
        Segment a = segments.peekLast();
        if (a != null) {
            ch(a).force(false);
        }
        unsynced = 0;
    }

    /** Unacknowledged entries. */
    public synchronized long depth() {
        return depth;
    }

    /** Bytes of segment files on disk, including acknowledged entries whose segment is not yet fully consumed. */
    public synchronized long bytes() {
        return bytes;
    }

    /** Entries dropped for any reason since open (and, for CORRUPT, found during this open's recovery). */
    public synchronized long dropped() {
        return droppedTotal;
    }

    public synchronized long dropped(DropReason reason) {
        return droppedBy[reason.ordinal()];
    }

    /** Corruption found and repaired: torn tails truncated, bad frames cut out, unreadable headers or checkpoint. */
    public synchronized long recoveredCorruptions() {
        return corruptions;
    }

    public long maxBytes() {
        return opt.maxBytes();
    }

    /** The segment size in effect (the configured size capped at a quarter of the bound). */
    public long segmentBytes() {
        return segmentBytes;
    }

    public Path directory() {
        return dir;
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        IOException failure = null;
        try {
            Segment a = segments.peekLast();
            if (a != null && a.ch != null && a.ch.isOpen()) {
                a.ch.force(false);
            }
        } catch (IOException e) {
            failure = e;
        }
        if (checkpointDirty && !writeCheckpoint(opt.channels(), dir, cursorSeq + 1, true) && failure == null) {
            failure = new IOException("could not write the checkpoint of " + dir);
        }
        closeChannels();
        try {
            lock.release();
            lockChannel.close();
        } catch (IOException e) {
            failure = failure == null ? e : failure;
        }
        if (failure != null) {
            throw failure;
        }
    }

    // ---------------------------------------------------------------- writing

    private long bytesNeeded(long frameBytes) {
        Segment a = segments.peekLast();
        return needsRoll(a, frameBytes) ? frameBytes + SEGMENT_HEADER_BYTES : frameBytes;
    }

    private boolean needsRoll(Segment a, long frameBytes) {
        return a == null || (a.count > 0 && a.size + frameBytes > segmentBytes);
    }

    private void write(byte[] frame) throws IOException {
        Segment a = segments.peekLast();
        if (needsRoll(a, frame.length)) {
            a = roll();
        }
        FileChannel ch = ch(a);
        long pos = a.size;
        try {
            writeFully(ch, ByteBuffer.wrap(frame), pos);
        } catch (IOException ex) {
            // Cut off a partial frame. If even that fails, the next append overwrites it from the same
            // offset (writes go to our logical end, not the file's) and recovery truncates any rest.
            try {
                ch.truncate(pos);
            } catch (IOException ignored) {
                // see above
            }
            throw ex;
        }
        a.size += frame.length;
        a.count++;
        a.lastSeq = nextSeq++;
        depth++;
        bytes += frame.length;
        unsynced++;
        if (opt.syncEveryAppends() > 0 && unsynced >= opt.syncEveryAppends()) {
            force(a);
        }
    }

    private Segment roll() throws IOException {
        Segment prev = segments.peekLast();
        if (prev != null && opt.syncEveryAppends() > 0 && unsynced > 0) {
            force(prev);
        }
        long base = nextSeq;
        Segment s = new Segment(dir.resolve(segmentName(base)));
        FileChannel ch = opt.channels().open(s.path, CREATE, TRUNCATE_EXISTING, READ, WRITE);
        try {
            ByteBuffer h = ByteBuffer.allocate(SEGMENT_HEADER_BYTES).putInt(SEGMENT_MAGIC).putInt(VERSION).putLong(base);
            writeFully(ch, h.flip(), 0);
        } catch (IOException e) {
            closeQuietly(ch);
            deleteQuietly(s.path);
            throw e;
        }
        s.ch = ch;
        s.size = SEGMENT_HEADER_BYTES;
        if (prev != null && prev != segments.peekFirst()) {
            closeQuietly(prev);
        }
        segments.addLast(s);
        bytes += SEGMENT_HEADER_BYTES;
        if (opt.syncEveryAppends() > 0) {
            syncDirectory(dir);
        }
        return s;
    }

    private void force(Segment s) {
        try {
            ch(s).force(false);
            unsynced = 0;
        } catch (IOException e) {
            // The data is written; only its durability is in doubt. Keep the count so the next append retries.
            LOG.log(System.Logger.Level.WARNING, "spool " + dir + ": fsync failed: " + e);
        }
    }

    // ---------------------------------------------------------------- reading and dropping

    /** Fills out from the cursor; false if it discarded a corrupt head and must start again. */
    private boolean collect(List<Spooled> out, int max) throws IOException {
        boolean head = true;
        long minSeq = cursorSeq + 1;
        for (Segment s : segments) {
            long pos = head ? headPos : SEGMENT_HEADER_BYTES;
            try {
                while (pos < s.size && out.size() < max) {
                    Frame f = readFrame(ch(s), pos, s.size, minSeq);
                    if (f.status() != Status.OK) {
                        if (head && out.isEmpty()) {
                            corruptHead("bad frame at byte " + pos + " of " + s.path.getFileName());
                            return false;
                        }
                        return true; // what precedes it is good; it is dealt with once it reaches the head
                    }
                    out.add(new Spooled(f.seq(), f.entry()));
                    minSeq = f.seq() + 1;
                    pos += FRAME_HEADER_BYTES + f.len();
                }
            } finally {
                if (!head && s != segments.peekLast()) {
                    closeQuietly(s);
                }
            }
            if (out.size() >= max) {
                return true;
            }
            head = false;
        }
        return true;
    }

    /** Runtime corruption (a disk fault after open): the rest of the head segment cannot be trusted. */
    private void corruptHead(String detail) {
        corruption(detail + "; discarding the rest of that segment");
        evictHead(DropReason.CORRUPT, detail);
    }

    private void evictHead(DropReason reason, String detail) {
        Segment h = segments.pollFirst();
        long lost = h.count - headConsumed;
        closeQuietly(h);
        deleteQuietly(h.path);
        bytes -= h.size;
        depth -= lost;
        headPos = SEGMENT_HEADER_BYTES;
        headConsumed = 0;
        if (lost > 0) {
            drop(reason, lost, detail + " (" + lost + " entries)");
        }
    }

    boolean drop(DropReason reason, long n, String detail) {
        droppedTotal += n;
        droppedBy[reason.ordinal()] += n;
        try {
            opt.dropListener().dropped(reason, n, detail);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "spool drop listener failed", e);
        }
        return false;
    }

    void corruption(String detail) {
        corruptions++;
        LOG.log(System.Logger.Level.WARNING, "spool " + dir + ": " + detail);
    }

    // ---------------------------------------------------------------- recovery

    private void recover() throws IOException {
        SpoolRecovery.Found found = new SpoolRecovery(this, dir, opt.channels()).scan();
        segments.addAll(found.segments());
        long checkpoint = found.checkpoint();
        long prev = found.lastSeq();
        long maxBase = found.maxBase();
        long from = Math.max(checkpoint, 0);
        // Wholly acknowledged segments: a crash came between writing the checkpoint and deleting them.
        while (!segments.isEmpty() && segments.peekFirst().lastSeq < from) {
            Files.deleteIfExists(segments.pollFirst().path);
        }
        for (Segment s : segments) {
            bytes += s.size;
            depth += s.count;
        }
        Segment head = segments.peekFirst();
        if (head != null) {
            long[] f;
            while ((f = frameAt(head, headPos)) != null && f[1] < from) {
                headPos += FRAME_HEADER_BYTES + f[0];
                headConsumed++;
            }
            depth -= headConsumed;
        }
        cursorSeq = from - 1;
        nextSeq = Math.max(Math.max(from, prev + 1), maxBase);
    }

    // ---------------------------------------------------------------- framing

    /** Length and sequence number of the frame at pos, or null if its length is out of range. */
    private long[] frameAt(Segment s, long pos) throws IOException {
        if (s.size - pos < FRAME_HEADER_BYTES + 8) {
            return null;
        }
        ByteBuffer b = ByteBuffer.allocate(FRAME_HEADER_BYTES + 8);
        if (!readFully(ch(s), b, pos)) {
            return null;
        }
        int len = b.getInt(0);
        if (len < MIN_PAYLOAD || len > s.size - pos - FRAME_HEADER_BYTES) {
            return null;
        }
        return new long[] {len, b.getLong(FRAME_HEADER_BYTES)};
    }

    // ---------------------------------------------------------------- plumbing

    private FileChannel ch(Segment s) throws IOException {
        // Reopens after a close by Thread.interrupt() on whichever thread last used it.
        if (s.ch == null || !s.ch.isOpen()) {
            s.ch = opt.channels().open(s.path, READ, WRITE);
        }
        return s.ch;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("spool " + dir + " is closed");
        }
    }

    private void closeChannels() {
        for (Segment s : segments) {
            closeQuietly(s);
        }
    }

}
