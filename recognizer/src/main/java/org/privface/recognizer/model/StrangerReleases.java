package org.privface.recognizer.model;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import org.privface.wire.FaceRecordFiles;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;

/**
 * Public strangers' releases, the open set's calibration data: faces of people who are never
 * enrolled (lfw-public, or an operator's public set; never a site's faces), each released once by
 * the same mechanism, basis and ε as the site's faces, and labelled with the public person's name
 * so that calibration and measurement use disjoint people. The file
 * ({@code recognizer.strangers-file}) is a {@link FaceRecordFiles} file, written by the agent's
 * {@code StrangerTool}; a bad record stops the recognizer with its number.
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
        List<PerturbedFace> faces = FaceRecordFiles.read(file);
        for (int i = 0; i < faces.size(); i++) {
            if (faces.get(i).getKind() != RecordKind.ENROLLMENT) {
                throw new IOException(file + ": record " + (i + 1)
                        + " has no label: a stranger record names its public person in enrollmentLabel");
            }
        }
        return new StrangerReleases(faces);
    }

    /** Writes releases in the format {@link #load} reads. */
    public static void write(Path file, List<PerturbedFace> faces) throws IOException {
        FaceRecordFiles.write(file, faces);
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
