package org.privface.agent.publish;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.nio.file.StandardCopyOption.ATOMIC_MOVE;
import static java.nio.file.StandardCopyOption.REPLACE_EXISTING;
import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.TRUNCATE_EXISTING;
import static java.nio.file.StandardOpenOption.WRITE;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * The spool's on-disk format, all integers big-endian:
 * <pre>
 * seg-&lt;first seq, 20 digits&gt;.log   header: int magic "PFSG", int version 1, long first seq
 *                                   then frames: int len, int crc, payload[len]
 *                                   crc = CRC32C(len bytes + payload)
 *                                   payload = long seq, long createdAt, str topic, str key (len -1 = null),
 *                                             str eventId, bytes value   (str/bytes = int len + bytes, UTF-8)
 * checkpoint                        int magic "PFCK", int version 1, long next unacknowledged seq,
 *                                   int CRC32C of the preceding 16 bytes; replaced by write-temp + ATOMIC_MOVE
 * spool.lock                        held with a file lock while open, so two processes cannot share a spool
 * </pre>
 * Encoding and checking frames, and the file plumbing that {@link DiskSpool} and
 * {@link SpoolRecovery} share.
 */
final class SpoolFormat {
    static final int SEGMENT_HEADER_BYTES = 16;
    static final int FRAME_HEADER_BYTES = 8;
    /** seq, createdAt, and the four length fields. */
    static final int MIN_PAYLOAD = 8 + 8 + 4 + 4 + 4 + 4;
    static final int SEGMENT_MAGIC = 0x50465347;
    static final int CHECKPOINT_MAGIC = 0x5046434B;
    static final int VERSION = 1;
    static final int CHECKPOINT_BYTES = 20;
    static final String CHECKPOINT = "checkpoint";
    static final String CHECKPOINT_TMP = "checkpoint.tmp";
    static final String LOCK = "spool.lock";
    static final String REPAIR_SUFFIX = ".repair";
    static final Pattern SEGMENT_NAME = Pattern.compile("seg-(\\d{20})\\.log");
    static final long MAX_FRAME = Integer.MAX_VALUE - 64;
    private static final System.Logger LOG = System.getLogger(DiskSpool.class.getName());

    private SpoolFormat() {
    }

    /** One segment file as the spool tracks it. */
    static final class Segment {
        final Path path;
        long size;
        int count;
        long lastSeq = -1;
        /** Open while this is the head or the active segment, or briefly while peeked. */
        FileChannel ch;

        Segment(Path path) {
            this.path = path;
        }
    }

    enum Status { OK, BAD_RECORD, BAD_BOUNDARY }

    record Frame(Status status, int len, long seq, SpoolEntry entry) {
        static final Frame BOUNDARY = new Frame(Status.BAD_BOUNDARY, 0, -1, null);

        static Frame badRecord(int len) {
            return new Frame(Status.BAD_RECORD, len, -1, null);
        }
    }

    static long framedSize(SpoolEntry e) {
        return FRAME_HEADER_BYTES + MIN_PAYLOAD + utf8Length(e.topic()) + (e.key() == null ? 0 : utf8Length(e.key()))
                + utf8Length(e.eventId()) + (long) e.value().length;
    }

    static byte[] encode(long seq, SpoolEntry e) {
        byte[] topic = e.topic().getBytes(UTF_8);
        byte[] key = e.key() == null ? null : e.key().getBytes(UTF_8);
        byte[] id = e.eventId().getBytes(UTF_8);
        int payload = MIN_PAYLOAD + topic.length + (key == null ? 0 : key.length) + id.length + e.value().length;
        ByteBuffer b = ByteBuffer.allocate(FRAME_HEADER_BYTES + payload);
        b.putInt(payload).putInt(0).putLong(seq).putLong(e.createdAtMillis());
        b.putInt(topic.length).put(topic);
        if (key == null) {
            b.putInt(-1);
        } else {
            b.putInt(key.length).put(key);
        }
        b.putInt(id.length).put(id);
        b.putInt(e.value().length).put(e.value());
        byte[] frame = b.array();
        b.putInt(4, crc(frame, frame, FRAME_HEADER_BYTES, payload));
        return frame;
    }

    static int crc(byte[] lenBytes, byte[] payload, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(lenBytes, 0, 4);
        c.update(payload, off, len);
        return (int) c.getValue();
    }

    /** Reads and checks the frame at pos; limit is the segment's logical end. */
    static Frame readFrame(FileChannel ch, long pos, long limit, long minSeq) throws IOException {
        if (limit - pos < FRAME_HEADER_BYTES) {
            return Frame.BOUNDARY;
        }
        ByteBuffer head = ByteBuffer.allocate(FRAME_HEADER_BYTES);
        if (!readFully(ch, head, pos)) {
            return Frame.BOUNDARY;
        }
        int len = head.getInt(0);
        if (len < MIN_PAYLOAD || len > limit - pos - FRAME_HEADER_BYTES) {
            return Frame.BOUNDARY;
        }
        byte[] payload = new byte[len];
        if (!readFully(ch, ByteBuffer.wrap(payload), pos + FRAME_HEADER_BYTES)) {
            return Frame.BOUNDARY;
        }
        if (crc(head.array(), payload, 0, len) != head.getInt(4)) {
            return Frame.badRecord(len);
        }
        try {
            ByteBuffer p = ByteBuffer.wrap(payload);
            long seq = p.getLong();
            long createdAt = p.getLong();
            String topic = new String(readBytes(p, p.getInt()), UTF_8);
            int keyLen = p.getInt();
            String key = keyLen == -1 ? null : new String(readBytes(p, keyLen), UTF_8);
            String eventId = new String(readBytes(p, p.getInt()), UTF_8);
            byte[] value = readBytes(p, p.getInt());
            if (seq < minSeq || p.hasRemaining()) {
                return Frame.badRecord(len);
            }
            return new Frame(Status.OK, len, seq, new SpoolEntry(topic, key, value, eventId, createdAt));
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            return Frame.badRecord(len);
        }
    }

    private static byte[] readBytes(ByteBuffer p, int n) {
        if (n < 0 || n > p.remaining()) {
            throw new IllegalArgumentException("bad length " + n);
        }
        byte[] out = new byte[n];
        p.get(out);
        return out;
    }

    static long utf8Length(String s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3; // lone surrogates become '?' (1 byte) in getBytes; over-counting is harmless here
            }
        }
        return n;
    }

    static String segmentName(long baseSeq) {
        return String.format("seg-%020d.log", baseSeq);
    }

    static boolean readFully(FileChannel ch, ByteBuffer b, long pos) throws IOException {
        while (b.hasRemaining()) {
            int n = ch.read(b, pos + b.position());
            if (n < 0) {
                return false;
            }
        }
        return true;
    }

    static void writeFully(FileChannel ch, ByteBuffer b, long pos) throws IOException {
        long at = pos;
        while (b.hasRemaining()) {
            at += ch.write(b, at);
        }
    }

    /** Makes a new or renamed file's directory entry durable; not supported everywhere, so best effort. */
    static void syncDirectory(Path dir) {
        try (FileChannel d = FileChannel.open(dir, READ)) {
            d.force(true);
        } catch (IOException | UnsupportedOperationException ignored) {
            // best effort
        }
    }

    static void closeQuietly(Segment s) {
        closeQuietly(s.ch);
        s.ch = null;
    }

    static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // nothing to do
            }
        }
    }

    static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "could not delete " + p + ": " + e);
        }
    }

    /** Replaces the checkpoint (write-temp, then ATOMIC_MOVE); false if it could not. */
    static boolean writeCheckpoint(DiskSpool.ChannelFactory channels, Path dir, long nextUnacked, boolean force) {
        ByteBuffer b = ByteBuffer.allocate(CHECKPOINT_BYTES).putInt(CHECKPOINT_MAGIC).putInt(VERSION).putLong(nextUnacked);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, 16);
        b.putInt((int) crc.getValue()).flip();
        Path tmp = dir.resolve(CHECKPOINT_TMP);
        try {
            try (FileChannel c = channels.open(tmp, CREATE, TRUNCATE_EXISTING, WRITE)) {
                writeFully(c, b, 0);
                if (force) {
                    c.force(true);
                }
            }
            Files.move(tmp, dir.resolve(CHECKPOINT), ATOMIC_MOVE, REPLACE_EXISTING);
            return true;
        } catch (IOException e) {
            // Harmless until the next success: an old checkpoint only replays entries again.
            deleteQuietly(tmp);
            return false;
        }
    }
}
