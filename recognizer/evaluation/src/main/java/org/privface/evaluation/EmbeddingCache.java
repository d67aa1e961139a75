package org.privface.evaluation;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Embeddings of a folder-per-person data set, computed once and kept in a file under
 * {@code target/} (about 12 ms a face: lfw-public's 4,840 faces take minutes), so evaluations do
 * not recompute them. File: magic "PFE1", count, dimension, then per face the person (UTF), the
 * file name (UTF) and the floats; big-endian.
 *
 * @param x      one L2-normalised embedding per face
 * @param labels identity per face, 0 … people − 1 in the folder order
 * @param people folder names
 * @param files  image file names
 */
public record EmbeddingCache(double[][] x, int[] labels, List<String> people, List<String> files) {
    static final int MAGIC = 0x50464531;

    public int classes() {
        return people.size();
    }

    public int dimension() {
        return x.length == 0 ? 0 : x[0].length;
    }

    public static EmbeddingCache read(Path file) throws IOException {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file)))) {
            if (in.readInt() != MAGIC) {
                throw new IOException(file + " is not an embedding cache");
            }
            int n = in.readInt();
            int d = in.readInt();
            double[][] x = new double[n][d];
            int[] y = new int[n];
            Map<String, Integer> ids = new LinkedHashMap<>();
            List<String> files = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String person = in.readUTF();
                files.add(in.readUTF());
                y[i] = ids.computeIfAbsent(person, p -> ids.size());
                for (int j = 0; j < d; j++) {
                    x[i][j] = in.readFloat();
                }
            }
            return new EmbeddingCache(x, y, List.copyOf(ids.keySet()), files);
        }
    }

    public void write(Path file) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(tmp)))) {
            out.writeInt(MAGIC);
            out.writeInt(x.length);
            out.writeInt(dimension());
            for (int i = 0; i < x.length; i++) {
                out.writeUTF(people.get(labels[i]));
                out.writeUTF(files.get(i));
                for (double v : x[i]) {
                    out.writeFloat((float) v);
                }
            }
        }
        Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    /** The faces of the given people only, relabelled 0 … in the order given. */
    public EmbeddingCache subset(List<Integer> keep) {
        Map<Integer, Integer> map = new LinkedHashMap<>();
        for (int c : keep) {
            map.put(c, map.size());
        }
        List<double[]> xs = new ArrayList<>();
        List<Integer> ys = new ArrayList<>();
        List<String> fs = new ArrayList<>();
        for (int i = 0; i < x.length; i++) {
            Integer c = map.get(labels[i]);
            if (c != null) {
                xs.add(x[i]);
                ys.add(c);
                fs.add(files.get(i));
            }
        }
        return new EmbeddingCache(xs.toArray(double[][]::new), ys.stream().mapToInt(Integer::intValue).toArray(),
                keep.stream().map(people::get).toList(), fs);
    }
}
