package org.privface.localstack.load;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Rows of named numbers, one per sample, appended to a CSV as they come so an interrupted run
 * keeps what it measured. The first row fixes the columns.
 */
final class SampleTable {
    private final Path csv;
    private final List<Map<String, Double>> rows = new ArrayList<>();
    private List<String> columns;

    SampleTable(Path csv) throws IOException {
        this.csv = csv;
        Files.createDirectories(csv.toAbsolutePath().getParent());
        Files.deleteIfExists(csv);
    }

    void add(LinkedHashMap<String, Double> row) {
        rows.add(row);
        StringBuilder sb = new StringBuilder();
        if (columns == null) {
            columns = List.copyOf(row.keySet());
            sb.append(String.join(",", columns)).append('\n');
        }
        for (int i = 0; i < columns.size(); i++) {
            Double v = row.get(columns.get(i));
            sb.append(i == 0 ? "" : ",").append(v == null || v.isNaN() ? "" : format(v));
        }
        sb.append('\n');
        try {
            Files.writeString(csv, sb, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String format(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : String.format(Locale.ROOT, "%.4f", v);
    }

    int size() {
        return rows.size();
    }

    /** One column over all rows (NaN where a row lacks it). */
    double[] column(String name) {
        return rows.stream().mapToDouble(r -> r.getOrDefault(name, Double.NaN)).toArray();
    }

    /** Rows from index {@code from} (inclusive) to {@code to} (exclusive) of one column. */
    double[] column(String name, int from, int to) {
        double[] all = column(name);
        return java.util.Arrays.copyOfRange(all, Math.max(0, from), Math.min(all.length, Math.max(from, to)));
    }

    Path csv() {
        return csv;
    }
}
