package org.privface.recognizer.model;

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

import org.privface.wire.FaceRecords;
import org.privface.wire.InvalidRecordException;
import org.privface.wire.WireLimits;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;

/**
 * Public strangers' releases, the open set's calibration data: faces of people who are never
 * enrolled (lfw-public, or an operator's public set; never a site's faces), each released once by
 * the same mechanism, basis and ε as the site's faces, and labelled with the public person's name
 * so that calibration and measurement use disjoint people. The file
 * ({@code recognizer.strangers-file}) is a sequence of records, each a 4-byte big-endian length and
 * the record in the wire's own encoding ({@link FaceRecords#encode}); every record passes the
 * wire's validator, so a bad file stops the recognizer with the record it failed on.
 */
public final class StrangerReleases {
    private final List<PerturbedFace> faces;

    StrangerReleases(List<PerturbedFace> faces) {
        this.faces = List.copyOf(faces);
    }

    public static StrangerReleases none() {
        return new StrangerReleases(List.of());
    }

    public static StrangerReleases load(Path file) throws IOException {
        List<PerturbedFace> out = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file)))) {
            while (true) {
                int n;
                try {
                    n = in.readInt();
                } catch (EOFException end) {
                    break;
                }
                if (n <= 0 || n > WireLimits.MAX_RECORD_BYTES_WITH_IMAGE) {
                    throw new IOException(file + ": record " + (out.size() + 1) + " claims " + n + " bytes");
                }
                byte[] b = new byte[n];
                try {
                    in.readFully(b);
                } catch (EOFException e) {
                    throw new IOException(file + ": record " + (out.size() + 1) + " is truncated", e);
                }
                PerturbedFace f;
                try {
                    f = FaceRecords.decodeFace(b);
                } catch (InvalidRecordException e) {
                    throw new IOException(file + ": record " + (out.size() + 1) + ": " + e.getMessage(), e);
                }
                if (f.getKind() != RecordKind.ENROLLMENT) {
                    throw new IOException(file + ": record " + (out.size() + 1)
                            + " has no label: a stranger record names its public person in enrollmentLabel");
                }
                out.add(f);
            }
        }
        return new StrangerReleases(out);
    }

    /** Writes releases in the format {@link #load} reads. */
    public static void write(Path file, List<PerturbedFace> faces) throws IOException {
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file)))) {
            for (PerturbedFace f : faces) {
                byte[] b = FaceRecords.encode(f);
                out.writeInt(b.length);
                out.write(b);
            }
        }
    }

    public int size() {
        return faces.size();
    }

    /**
     * The releases comparable with a model's faces: same basis, mechanism, sensitivity mode and
     * ε per face, from any site (they are public).
     */
    public List<PerturbedFace> matching(ModelKey key, String sensitivityMode, double epsilonPerFace) {
        return faces.stream().filter(f -> f.getMechanism().getBasisId().equals(key.basisId())
                && f.getMechanism().getName().equals(key.mechanism())
                && f.getMechanism().getSensitivityMode().equals(sensitivityMode)
                && Math.abs(f.getMechanism().getEpsilonPerFace() - epsilonPerFace) <= 1e-9 * epsilonPerFace).toList();
    }
}
