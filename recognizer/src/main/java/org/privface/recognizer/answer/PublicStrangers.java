package org.privface.recognizer.answer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.privface.wire.WireLimits;

/**
 * Raw public projections (unit directions in a release space) of public strangers' faces, never a
 * site's: what a gallery's open-set threshold is calibrated on. A public face's projection is
 * public, so the recognizer may hold it. The file is text: a first line {@code # <set-id> <basisId>},
 * then one face per line, its coordinates separated by commas.
 *
 * @param setId   the public set's name (e.g. lfw-public), stated in the gallery record
 * @param basisId the release space the directions live in
 */
public record PublicStrangers(String setId, String basisId, double[][] directions) {
    public PublicStrangers {
        if (setId == null || !setId.matches(WireLimits.ID_PATTERN) || basisId == null || !basisId.matches(WireLimits.ID_PATTERN)) {
            throw new IllegalArgumentException("set id and basis id must be identifiers of " + WireLimits.ID_PATTERN);
        }
        if (directions.length == 0) {
            throw new IllegalArgumentException("no strangers in set " + setId);
        }
    }

    /** Public faces' embeddings projected the way the gateway decodes a query: their directions in {@code m}'s release space. */
    public static PublicStrangers project(String setId, org.privface.privacy.embedding.EmbeddingMechanism m,
                                          double[][] embeddings) {
        double[][] directions = new double[embeddings.length][];
        for (int i = 0; i < embeddings.length; i++) {
            directions[i] = m.direction(embeddings[i]);
        }
        return new PublicStrangers(setId, m.releaseSpace(), directions);
    }

    /** basisId prefix of a file of raw embeddings ({@code raw-<network>}), which serves every release space of that network. */
    public static final String RAW = "raw-";

    /**
     * These strangers in a release space: as they are when already in it; projected there when the
     * file holds raw embeddings of the space's network ({@code raw-dlib} serves
     * {@code dlib-<basis>.k<k>} for any k of the bundled public basis); else empty.
     */
    public java.util.Optional<PublicStrangers> inSpace(String space) {
        if (basisId.equals(space)) {
            return java.util.Optional.of(this);
        }
        if (!basisId.startsWith(RAW)) {
            return java.util.Optional.empty();
        }
        org.privface.privacy.embedding.EmbeddingBasis basis;
        try {
            basis = org.privface.privacy.embedding.EmbeddingBasis.bundled(basisId.substring(RAW.length()));
        } catch (RuntimeException e) {
            return java.util.Optional.empty();
        }
        String prefix = basis.id() + ".k";
        if (!space.startsWith(prefix)) {
            return java.util.Optional.empty();
        }
        int k;
        try {
            k = Integer.parseInt(space.substring(prefix.length()));
        } catch (NumberFormatException e) {
            return java.util.Optional.empty();
        }
        if (k < 1 || k > basis.maxDirections() || directions[0].length != basis.inputDimension()) {
            return java.util.Optional.empty();
        }
        double[][] d = new double[directions.length][];
        for (int i = 0; i < d.length; i++) {
            // As the gateway decodes a query: the unit embedding's first k public coordinates, scaled to unit length.
            d[i] = org.privface.privacy.embedding.EmbeddingMechanism.unit(
                    basis.project(org.privface.privacy.embedding.EmbeddingMechanism.unit(directions[i].clone()), k));
        }
        return java.util.Optional.of(new PublicStrangers(setId, space, d));
    }

    public static PublicStrangers read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        if (lines.isEmpty() || !lines.get(0).startsWith("# ")) {
            throw new IllegalArgumentException(file + ": the first line must be '# <set-id> <basisId>'");
        }
        String[] head = lines.get(0).substring(2).trim().split("\\s+");
        if (head.length != 2) {
            throw new IllegalArgumentException(file + ": the first line must be '# <set-id> <basisId>'");
        }
        List<double[]> out = new ArrayList<>();
        int k = -1;
        for (int i = 1; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (line.isEmpty()) {
                continue;
            }
            String[] parts = line.split(",");
            double[] v = new double[parts.length];
            try {
                for (int j = 0; j < v.length; j++) {
                    v[j] = Double.parseDouble(parts[j].trim());
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": not a list of numbers");
            }
            if (k >= 0 && v.length != k) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": " + v.length + " coordinates, not " + k);
            }
            k = v.length;
            out.add(v);
        }
        return new PublicStrangers(head[0], head[1], out.toArray(double[][]::new));
    }

    public void write(Path file) throws IOException {
        StringBuilder b = new StringBuilder("# ").append(setId).append(' ').append(basisId).append('\n');
        for (double[] v : directions) {
            for (int j = 0; j < v.length; j++) {
                b.append(j == 0 ? "" : ",").append(v[j]);
            }
            b.append('\n');
        }
        Files.writeString(file, b, StandardCharsets.UTF_8);
    }
}
