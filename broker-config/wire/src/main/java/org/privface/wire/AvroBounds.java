package org.privface.wire;

import java.util.Map;

import org.apache.avro.Schema;

/**
 * Walks an Avro single-object message against its writer schema before Avro decodes it, and
 * refuses any length or item count larger than the bytes left. Avro allocates a string or an
 * array at the size its length prefix claims before reading a byte of it, so a 150-byte record
 * claiming a 2 GB string would otherwise exhaust the heap (found by FaceRecordsFuzzTest).
 */
final class AvroBounds {
    /** Avro single-object encoding: the marker C3 01, then the 8-byte little-endian schema fingerprint. */
    static final int HEADER_BYTES = 10;
    /** Nesting in our schemas is three deep; a writer schema is ours, so this only guards the walk itself. */
    private static final int MAX_DEPTH = 32;

    private final byte[] b;
    private int pos;

    private AvroBounds(byte[] bytes) {
        this.b = bytes;
        this.pos = HEADER_BYTES;
    }

    /**
     * Checks the body of a single-object message against the writer schema its fingerprint names.
     * An unknown header or fingerprint is left for Avro to refuse: it allocates nothing for those.
     */
    static void check(byte[] bytes, Map<Long, Schema> writers) {
        if (bytes.length < HEADER_BYTES || (bytes[0] & 0xff) != 0xC3 || bytes[1] != 0x01) {
            return;
        }
        long fingerprint = 0;
        for (int i = 9; i >= 2; i--) {
            fingerprint = (fingerprint << 8) | (bytes[i] & 0xff);
        }
        Schema writer = writers.get(fingerprint);
        if (writer != null) {
            new AvroBounds(bytes).walk(writer, 0);
        }
    }

    private void walk(Schema s, int depth) {
        if (depth > MAX_DEPTH) {
            throw new InvalidRecordException("record nests deeper than " + MAX_DEPTH);
        }
        switch (s.getType()) {
            case NULL -> { }
            case BOOLEAN -> skip(1);
            case INT, LONG, ENUM -> varLong();
            case FLOAT -> skip(4);
            case DOUBLE -> skip(8);
            case FIXED -> skip(s.getFixedSize());
            case STRING, BYTES -> skip(length());
            case RECORD -> s.getFields().forEach(f -> walk(f.schema(), depth + 1));
            case UNION -> {
                long branch = varLong();
                if (branch < 0 || branch >= s.getTypes().size()) {
                    throw new InvalidRecordException("union branch " + branch + " does not exist");
                }
                walk(s.getTypes().get((int) branch), depth + 1);
            }
            case ARRAY -> blocks(s.getElementType(), null, depth);
            case MAP -> blocks(s.getValueType(), Schema.create(Schema.Type.STRING), depth);
        }
    }

    /** Array or map blocks: a count, negated when followed by the block's byte size, until a zero count. */
    private void blocks(Schema item, Schema key, int depth) {
        while (true) {
            long count = varLong();
            if (count == 0) {
                return;
            }
            if (count < 0) {
                count = -count;
                length(); // the block's byte size: only checked, the items are walked anyway
            }
            // Every item of our schemas takes at least one byte, so a count beyond the bytes left is a lie.
            if (count < 0 || count > remaining()) {
                throw new InvalidRecordException("collection of " + count + " items in " + remaining() + " bytes");
            }
            for (long i = 0; i < count; i++) {
                if (key != null) {
                    walk(key, depth + 1);
                }
                walk(item, depth + 1);
            }
        }
    }

    private int remaining() {
        return b.length - pos;
    }

    private int length() {
        long n = varLong();
        if (n < 0 || n > remaining()) {
            throw new InvalidRecordException("length " + n + " exceeds the " + remaining() + " bytes left");
        }
        return (int) n;
    }

    private void skip(int n) {
        if (n > remaining()) {
            throw new InvalidRecordException("record truncated");
        }
        pos += n;
    }

    /** Avro's zig-zag variable-length long. */
    private long varLong() {
        long raw = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos >= b.length) {
                throw new InvalidRecordException("record truncated");
            }
            int x = b[pos++] & 0xff;
            raw |= (long) (x & 0x7f) << shift;
            if ((x & 0x80) == 0) {
                return (raw >>> 1) ^ -(raw & 1);
            }
        }
        throw new InvalidRecordException("malformed variable-length integer");
    }
}
