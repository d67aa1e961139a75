package org.privface.privacy.embedding;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The sign-cap shape a gallery's templates are released at: per network, ε per enrolled image and
 * gallery size, the evaluation's public-only selection, shipped as data with its provenance
 * ({@code embedding/template-presets.csv}). Templates average many releases of each person, so
 * they are best at more bits and wider balls than a single query vector (k 48–64, r 6–12 at ε 20,
 * against the vector preset's k 24, r 0): the shape that serves the vector does not serve them.
 */
public final class TemplatePresets {
    /** One selected row. */
    public record Row(String network, double epsilon, int gallery, int k, int radius) {
        public EmbeddingMechanism.Preset preset() {
            return new EmbeddingMechanism.Preset(k, radius);
        }

        /** Where the choice came from, for logs and summaries. */
        public String provenance() {
            return String.format(java.util.Locale.ROOT, "template preset k %d, r %d (%s, selected at ε %s for %d people on"
                    + " lfw-public only: docs/results/deep-answer-selection.csv)", k, radius, network, trim(epsilon), gallery);
        }
    }

    private static final List<Row> ROWS = load();

    private TemplatePresets() {
    }

    private static List<Row> load() {
        List<Row> rows = new ArrayList<>();
        try (InputStream in = TemplatePresets.class.getResourceAsStream("/embedding/template-presets.csv")) {
            if (in == null) {
                throw new IllegalStateException("embedding/template-presets.csv missing from the classpath");
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] p = line.split(",");
                rows.add(new Row(p[0], Double.parseDouble(p[1]), Integer.parseInt(p[2]), Integer.parseInt(p[3]),
                        Integer.parseInt(p[4])));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return List.copyOf(rows);
    }

    /**
     * The row for a network at ε per enrolled image and C people: the selection's largest ε not
     * above {@code epsilon} (its smallest below that), then the gallery size nearest C on a log scale.
     */
    public static Row forGallery(String network, double epsilon, int people) {
        List<Row> net = ROWS.stream().filter(r -> r.network().equals(network)).toList();
        if (net.isEmpty()) {
            throw new IllegalArgumentException("no template presets for network " + network);
        }
        double band = net.stream().mapToDouble(Row::epsilon).filter(e -> e <= epsilon).max()
                .orElse(net.stream().mapToDouble(Row::epsilon).min().orElseThrow());
        double logC = Math.log(Math.max(1, people));
        return net.stream().filter(r -> r.epsilon() == band)
                .min(Comparator.comparingDouble(r -> Math.abs(Math.log(r.gallery()) - logC))).orElseThrow();
    }

    private static String trim(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
