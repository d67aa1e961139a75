package org.privface.wire;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.privface.wire.avro.PerturbedFace;

/**
 * Perturbed faces kept in a file instead of a topic (the public strangers' releases the
 * recognizer calibrates its open set on): each record is a 4-byte big-endian length and the record
 * in the wire's own encoding ({@link FaceRecords#encode}). Reading applies the wire's validator
 * and limits to every record, and a bad record stops the read with its number.
 */
public final class FaceRecordFiles {
    private FaceRecordFiles() {
    }

    public static void write(Path file, List<PerturbedFace> faces) throws IOException {
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file)))) {
            for (PerturbedFace f : faces) {
                byte[] b = FaceRecords.encode(f);
                out.writeInt(b.length);
                out.write(b);
            }
        }
    }

    public static List<PerturbedFace> read(Path file) throws IOException {
        List<PerturbedFace> out = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file)))) {
            while (true) {
                int n;
                try {
                    n = in.readInt();
                } catch (EOFException end) {
                    break;
                }
                int index = out.size() + 1;
                if (n <= 0 || n > WireLimits.MAX_RECORD_BYTES_WITH_IMAGE) {
                    throw new IOException(file + ": record " + index + " claims " + n + " bytes");
                }
                byte[] b = new byte[n];
                try {
                    in.readFully(b);
                } catch (EOFException e) {
                    throw new IOException(file + ": record " + index + " is truncated", e);
                }
                try {
                    out.add(FaceRecords.decodeFace(b));
                } catch (InvalidRecordException e) {
                    throw new IOException(file + ": record " + index + ": " + e.getMessage(), e);
                }
            }
        }
        return out;
    }
}
