package org.privface.recognizer.console;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import io.micronaut.serde.annotation.Serdeable;
import jakarta.inject.Singleton;

/**
 * The privacy-utility curves measured offline by the evaluations (docs/results, bundled into the
 * service at build time), picked for a site's mechanism and mode: utility against ε per face on
 * the two real datasets. The evaluations are the source of truth; this only selects rows.
 */
@Singleton
public class TradeoffCurves {
    private static final List<String> DATASETS = List.of("lfw5", "orl");

    @Serdeable
    public record Curve(String dataset, String series, List<double[]> points) {
    }

    @Serdeable
    public record Tradeoff(String mechanism, String mode, String metric, String source, List<Curve> curves) {
    }

    /** Which evaluation, which rows and which column answer "what does ε cost" for a mechanism. */
    private record Selection(String file, String keyColumn, String key, String yColumn, boolean oneMinus,
                             String metric) {
    }

    public Optional<Tradeoff> forPolicy(String mechanism, String mode) {
        Selection s = select(mechanism == null ? "" : mechanism.toUpperCase(Locale.ROOT), mode == null ? "" : mode);
        if (s == null) {
            return Optional.empty();
        }
        List<Curve> curves = new ArrayList<>();
        for (String ds : DATASETS) {
            List<double[]> pts = read(s.file().replace("{ds}", ds), s);
            if (!pts.isEmpty()) {
                curves.add(new Curve(ds, s.key(), pts));
            }
        }
        return curves.isEmpty() ? Optional.empty()
                : Optional.of(new Tradeoff(mechanism, mode, s.metric(), "docs/results/" + s.file(), curves));
    }

    /** One ε of the answer evaluation, averaged over its seeds. */
    @Serdeable
    public record AnswerPoint(double epsilon, double fnir, double fpir, int seeds) {
    }

    /**
     * The answer's expected figures against ε, measured where the gallery size was nearest the site's,
     * for the faces its gateways decode together ({@code trackFaces}) and the shipped templates.
     */
    @Serdeable
    public record AnswerAdvice(String network, String set, int people, String rule, int trackFaces, String templates,
                               String source, List<AnswerPoint> points) {
    }

    /**
     * The answer evaluation of the shipped configuration (docs/frontier.md, "Large galleries":
     * {@code LargeGalleries} with the agent's template ε and releases, faces and 3-face tracks, ε 2 to 20),
     * bundled at build time.
     */
    static final String ANSWER_FILE = "large-galleries-advice.csv";

    /**
     * The answer release's measured FNIR and FPIR (FNIR at the Wilson threshold for FPIR 1 %; FPIR on
     * strangers the calibration never saw, tracks of them for tracks) per ε, for a site whose gallery
     * holds {@code identities} people and whose gateways answer once per {@code trackFaces} faces: the
     * rows of the evaluated gallery whose size is nearest (by ratio), of the evaluated track length
     * nearest and not above the site's, on the site's network where it was evaluated, else dlib (the
     * shipped default). The rule is the evaluation's (the shipped Wilson rule). Empty without a row.
     */
    public Optional<AnswerAdvice> forAnswer(int identities, String network, int trackFaces) {
        Optional<Table> t = table(ANSWER_FILE);
        if (t.isEmpty() || identities < 1) {
            return Optional.empty();
        }
        List<String> header = t.get().header();
        List<String[]> rows = t.get().rows();
        int[] col = new int[8];
        String[] names = {"network", "set", "people", "epsilon", "track_faces", "fnir", "fpir", "templates"};
        for (int i = 0; i < names.length; i++) {
            col[i] = header.indexOf(names[i]);
            if (col[i] < 0) {
                return Optional.empty();
            }
        }
        int tf = header.indexOf("template_epsilon");
        int tr = header.indexOf("template_releases");
        String network1 = rows.stream().anyMatch(f -> f[col[0]].equals(network)) ? network : "dlib";
        List<String[]> ours = rows.stream().filter(f -> f[col[0]].equals(network1) && f[col[7]].equals("releases"))
                .toList();
        int faces = ours.stream().mapToInt(f -> Integer.parseInt(f[col[4]])).filter(x -> x <= Math.max(1, trackFaces))
                .max().orElse(1);
        // The evaluated gallery size nearest the site's, by ratio (5 and 40 are as far from 14).
        Optional<String[]> nearest = ours.stream().min((a, b) -> Double.compare(
                Math.abs(Math.log(Double.parseDouble(a[col[2]]) / identities)),
                Math.abs(Math.log(Double.parseDouble(b[col[2]]) / identities))));
        if (nearest.isEmpty()) {
            return Optional.empty();
        }
        String chosenSet = nearest.get()[col[1]];
        java.util.TreeMap<Double, double[]> sums = new java.util.TreeMap<>();
        for (String[] f : ours) {
            if (!f[col[1]].equals(chosenSet) || Integer.parseInt(f[col[4]]) != faces) {
                continue;
            }
            try {
                double[] acc = sums.computeIfAbsent(Double.parseDouble(f[col[3]]), k -> new double[3]);
                acc[0] += Double.parseDouble(f[col[5]]);
                acc[1] += Double.parseDouble(f[col[6]]);
                acc[2]++;
            } catch (NumberFormatException e) {
                // a row without a figure is not a point
            }
        }
        List<AnswerPoint> points = new ArrayList<>();
        sums.forEach((e, a) -> points.add(new AnswerPoint(e, a[0] / a[2], a[1] / a[2], (int) a[2])));
        String templates = tf < 0 || tr < 0 ? "" : nearest.get()[tr] + " × ε " + nearest.get()[tf] + " per enrolled image";
        return Optional.of(new AnswerAdvice(network1, chosenSet, Integer.parseInt(nearest.get()[col[2]]), "wilson",
                faces, templates, "docs/results/" + ANSWER_FILE, points));
    }

    /** A bundled evaluation CSV: its header and rows. */
    private record Table(List<String> header, List<String[]> rows) {
    }

    /** Reads a CSV the build bundled from docs/results; empty when it is absent or unreadable. */
    private static Optional<Table> table(String file) {
        try (InputStream in = TradeoffCurves.class.getResourceAsStream("/console-results/" + file)) {
            if (in == null) {
                return Optional.empty();
            }
            // Plain numeric CSV written by the project's own evaluations: no quoting to handle.
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            String head = r.readLine();
            if (head == null) {
                return Optional.empty();
            }
            List<String[]> rows = new ArrayList<>();
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                rows.add(line.split(",", -1));
            }
            return Optional.of(new Table(Arrays.asList(head.split(",")), rows));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static Selection select(String mechanism, String mode) {
        return switch (mechanism) {
            case "PEEP" -> new Selection("peep-{ds}.csv", "mode", mode, "f1_mean", false, "recognition F1 (MLP)");
            // The agent's FISHER preset is the best vector release the frontier evaluation found per ε.
            case "FISHER" -> new Selection("frontier-{ds}.csv", "mechanism", "best-val-vector", "f1_mean", false,
                    "recognition F1");
            case "GAUSSIAN" -> new Selection("frontier-{ds}.csv", "mechanism", "pca-gauss-l2-lda-r1-val", "f1_mean",
                    false, "recognition F1");
            case "RDP" -> new Selection("rdp-ssim-{ds}.csv", "method", "rdp-" + mode, "fnr", true,
                    "match rate (1 − FNR, clean-trained matcher)");
            // The agent's EMBEDDING modes are the public-basis families of the deep frontier (docs/frontier.md).
            case "EMBEDDING" -> new Selection("deep-frontier-{ds}.csv", "family", "public-" + mode.split("\\.")[0]
                    .replaceFirst("-k\\d+.*$", ""), "f1_mean", false, "recognition F1 (nearest class mean)");
            default -> null;
        };
    }

    private static List<double[]> read(String file, Selection s) {
        List<double[]> pts = new ArrayList<>();
        Optional<Table> t = table(file);
        if (t.isEmpty()) {
            return pts;
        }
        List<String> header = t.get().header();
        int key = header.indexOf(s.keyColumn());
        int x = header.indexOf("epsilon_per_face");
        int y = header.indexOf(s.yColumn());
        if (key < 0 || x < 0 || y < 0) {
            return pts;
        }
        for (String[] f : t.get().rows()) {
            if (f.length <= Math.max(key, Math.max(x, y)) || !f[key].equals(s.key())) {
                continue;
            }
            try {
                double ex = Double.parseDouble(f[x]);
                double uy = Double.parseDouble(f[y]);
                if (Double.isFinite(ex) && Double.isFinite(uy)) {
                    pts.add(new double[] {ex, s.oneMinus() ? 1 - uy : uy});
                }
            } catch (NumberFormatException e) {
                // a row without a number (e.g. "inf" for no noise) is not a point on the curve
            }
        }
        pts.sort((a, b) -> Double.compare(a[0], b[0]));
        return pts;
    }
}
