package org.privface.agent.publish;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.privface.agent.publish.DiskSpool.Options;

/** A filling disk: every write that fails loses only its own entry, with its reason, and the spool stays usable. */
class SpoolDiskFullTest extends DiskSpoolFixture {

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
