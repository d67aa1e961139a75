package org.privface.evaluation.crowd;

import java.awt.Color;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

import org.knowm.xchart.style.Styler;
import org.privface.agent.embed.FaceEmbedders;
import org.privface.evaluation.Charts;
import org.privface.evaluation.EmbeddingCache;
import org.privface.evaluation.EmbeddingSets;
import org.privface.evaluation.EvalOptions;
import org.privface.evaluation.Progress;
import org.privface.privacy.aggregate.Sphere;

/**
 * Calibrates the threshold of appearance linking ({@code agent.link.threshold}) on real faces, with
 * the embeddings the agent computes (YuNet → alignment → {@code fr_feature}, {@link EmbeddingSets}):
 * <ul>
 *   <li>miss rate: same-person pairs whose cosine is below the threshold. A miss starts a new
 *       person, which spends a fresh budget: a privacy loss. Measured on pairs from far to near what
 *       a gateway links within one window: {@code lfw139} (photos years apart: the pessimistic
 *       bound), two photos of one person composited into camera frames ({@link GatewayScenes}),
 *       {@code orl} (one sitting, pose and expression change), and renders of one photo in camera
 *       frames (size, tilt, exposure, blur, JPEG: the same day's look through other cameras);</li>
 *   <li>false-link rate per pair: pairs of different people of {@code lfw-public} at or above it.
 *       A false link merges two people, who then share one budget: a utility loss;</li>
 *   <li>false-link rate against a gallery: a stranger's face (one per {@code lfw-public} person)
 *       against the faces of 10 or 100 other people held at once, as the linker holds them; it
 *       links falsely when any of them reaches the threshold.</li>
 * </ul>
 * Writes {@code link-calibration-<model>.csv} and {@code .png} and prints the operating point: the highest
 * threshold on the grid whose miss rate is at most {@code --max-miss}.
 */
public final class LinkCalibration {
    /** People held at once: a quiet door, a busy hall. */
    static final int[] GALLERIES = {10, 100};
    /** Histogram bins over cosine [-1, 1]. */
    static final int BINS = 2000;

    private LinkCalibration() {
    }

    /** Rates at one threshold. */
    record Point(double threshold, double missRate, double falseLinkRate, double[] falseLinkGallery, double[] missWithin) {
    }

    public static void main(String[] args) throws Exception {
        org.privface.agent.dataset.BadDataset.exitOnError(() -> run(args));
    }

    /** The command; a bad data-set folder ends it with a message naming the file (exit status 2), not a stack trace. */
    static void run(String[] args) throws IOException {
        Map<String, String> opt = EvalOptions.parse(Map.ofEntries(
                Map.entry("--same", "lfw139"), Map.entry("--different", "lfw-public"),
                Map.entry("--datasets", System.getProperty("privface.datasets", "../shared/datasets")),
                Map.entry("--cache", "target/embeddings"),
                Map.entry("--models", String.join(",", FaceEmbedders.NAMES)),
                Map.entry("--out", "docs/results"), Map.entry("--max-miss", "0.01"), Map.entry("--seed", "18"),
                Map.entry("--within", "orl"), Map.entry("--scenes", "target/gateway-scenes"),
                Map.entry("--scene-people", "40")),
                args);
        for (String model : opt.get("--models").split(",")) {
            calibrate(opt, model.strip());
        }
    }

    /** One network's curves and operating point: each network's cosines need their own threshold. */
    static void calibrate(Map<String, String> opt, String model) throws IOException {
        System.out.println("== " + model);
        Path datasets = Path.of(opt.get("--datasets"));
        Path cache = Path.of(opt.get("--cache"));
        Progress progress = new Progress(System.out, 4 + GALLERIES.length);
        List<String> names = new ArrayList<>();
        List<long[]> hists = new ArrayList<>();
        List<Long> counts = new ArrayList<>();
        for (String set : opt.get("--within").split(",")) {
            if (set.isBlank()) {
                continue;
            }
            long[] h = new long[BINS];
            counts.add(pairs(EmbeddingSets.load(datasets, set.strip(), cache, model), true, h));
            names.add(set.strip());
            hists.add(h);
        }
        if (!opt.get("--scenes").isBlank()) {
            // Rendered here and embedded into the scenes' own cache: never into the shared one.
            Path scenes = Path.of(opt.get("--scenes"));
            GatewayScenes.write(datasets.resolve(opt.get("--same")), scenes, Integer.parseInt(opt.get("--scene-people")), 2, 4, 30);
            EmbeddingCache sc = EmbeddingSets.load(scenes, GatewayScenes.SET, scenes, model);
            long[] samePhoto = new long[BINS];
            long[] twoPhotos = new long[BINS];
            long[] n = scenePairs(sc, samePhoto, twoPhotos);
            names.add("scene_same_photo");
            hists.add(samePhoto);
            counts.add(n[0]);
            names.add("scene_two_photos");
            hists.add(twoPhotos);
            counts.add(n[1]);
        }
        EmbeddingCache same = EmbeddingSets.load(datasets, opt.get("--same"), cache, model);
        progress.step("embedded " + opt.get("--same"));
        EmbeddingCache different = EmbeddingSets.load(datasets, opt.get("--different"), cache, model);
        progress.step("embedded " + opt.get("--different"));
        long[] sameHist = new long[BINS];
        long samePairs = pairs(same, true, sameHist);
        progress.step("same-person pairs: " + samePairs);
        long[] diffHist = new long[BINS];
        long diffPairs = pairs(different, false, diffHist);
        progress.step("different-person pairs: " + diffPairs);
        double[][] galleryMax = new double[GALLERIES.length][];
        for (int g = 0; g < GALLERIES.length; g++) {
            galleryMax[g] = galleryMaxima(different, GALLERIES[g], Long.parseLong(opt.get("--seed")));
            progress.step("gallery of " + GALLERIES[g] + ": " + galleryMax[g].length + " strangers");
        }

        List<Point> points = new ArrayList<>();
        for (int k = -20; k <= 100; k++) {
            double t = k / 100.0;
            double[] gallery = new double[GALLERIES.length];
            for (int g = 0; g < GALLERIES.length; g++) {
                gallery[g] = atOrAbove(galleryMax[g], t);
            }
            double[] within = new double[names.size()];
            for (int w = 0; w < within.length; w++) {
                within[w] = below(hists.get(w), t) / (double) counts.get(w);
            }
            points.add(new Point(t, below(sameHist, t) / (double) samePairs,
                    1 - below(diffHist, t) / (double) diffPairs, gallery, within));
        }
        Path out = Path.of(opt.get("--out"));
        Files.createDirectories(out);
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("link-calibration-" + model + ".csv")))) {
            StringBuilder head = new StringBuilder("threshold,miss_rate,false_link_rate_pair");
            for (int g : GALLERIES) {
                head.append(",false_link_rate_").append(g).append("_held");
            }
            for (String n : names) {
                head.append(",miss_rate_").append(n.replace('-', '_'));
            }
            w.println(head);
            for (Point p : points) {
                w.printf(Locale.ROOT, "%.2f,%.6f,%.6f", p.threshold(), p.missRate(), p.falseLinkRate());
                for (double f : p.falseLinkGallery()) {
                    w.printf(Locale.ROOT, ",%.6f", f);
                }
                for (double f : p.missWithin()) {
                    w.printf(Locale.ROOT, ",%.6f", f);
                }
                w.println();
            }
        }
        double[] x = points.stream().mapToDouble(Point::threshold).toArray();
        Charts.line(out.resolve("link-calibration-" + model + ".png"), "Appearance linking on " + model + ": miss " + opt.get("--same")
                        + " (" + samePairs + " pairs), false link " + opt.get("--different"), "cosine threshold", "rate",
                false, Charts.YAxis.UNIT, Styler.LegendPosition.OutsideS, 900, 700, series(points, x, names, counts));
        double maxMiss = Double.parseDouble(opt.get("--max-miss"));
        Point op = null;
        for (Point p : points) {
            if (p.missRate() <= maxMiss) {
                op = p;
            }
        }
        System.out.printf(Locale.ROOT, "%d same-person pairs (%s, %d people), %d different-person pairs (%s, %d people)%n",
                samePairs, opt.get("--same"), same.classes(), diffPairs, opt.get("--different"), different.classes());
        for (int w = 0; w < names.size(); w++) {
            System.out.printf(Locale.ROOT, "%d same-person pairs (%s)%n", counts.get(w), names.get(w));
        }
        if (op == null) {
            System.out.println("no threshold on the grid reaches a miss rate of " + maxMiss);
        } else {
            System.out.printf(Locale.ROOT, "operating point: threshold %.2f, miss rate %.4f, false links %.4f per pair",
                    op.threshold(), op.missRate(), op.falseLinkRate());
            for (int g = 0; g < GALLERIES.length; g++) {
                System.out.printf(Locale.ROOT, ", %.4f against %d people held", op.falseLinkGallery()[g], GALLERIES[g]);
            }
            System.out.println();
        }
        System.out.println("wrote " + out.resolve("link-calibration-" + model + ".csv") + " and .png");
    }

    private static List<Charts.Series> series(List<Point> points, double[] x, List<String> names, List<Long> counts) {
        List<Charts.Series> out = new ArrayList<>();
        out.add(new Charts.Series("miss rate, lfw139 (same person below: over-spend)", x,
                points.stream().mapToDouble(Point::missRate).toArray(), null, false, Color.RED));
        Color[] reds = {new Color(230, 120, 0), new Color(170, 0, 120), new Color(120, 60, 0), new Color(255, 150, 150)};
        for (int w = 0; w < names.size(); w++) {
            int k = w;
            out.add(new Charts.Series("miss rate, " + names.get(w) + " (" + counts.get(w) + " pairs)", x,
                    points.stream().mapToDouble(p -> p.missWithin()[k]).toArray(), null, false, reds[w % reds.length]));
        }
        out.add(new Charts.Series("false links per pair (different people at or above: under-release)", x,
                points.stream().mapToDouble(Point::falseLinkRate).toArray(), null, false, Color.BLUE));
        Color[] shades = {new Color(0, 150, 200), new Color(0, 0, 120)};
        for (int g = 0; g < GALLERIES.length; g++) {
            int k = g;
            out.add(new Charts.Series("false links against " + GALLERIES[g] + " people held", x,
                    points.stream().mapToDouble(p -> p.falseLinkGallery()[k]).toArray(), null, true, shades[g % shades.length]));
        }
        return out;
    }

    /** Histogram of the cosines of all same-person ({@code same}) or all different-person pairs. */
    static long pairs(EmbeddingCache c, boolean same, long[] hist) {
        long n = 0;
        for (int i = 0; i < c.x().length; i++) {
            for (int j = i + 1; j < c.x().length; j++) {
                if ((c.labels()[i] == c.labels()[j]) == same) {
                    hist[bin(Sphere.dot(c.x()[i], c.x()[j]))]++;
                    n++;
                }
            }
        }
        return n;
    }

    /** Same-person pairs of the rendered scenes: renders of one photo, and of two photos of the person. */
    static long[] scenePairs(EmbeddingCache c, long[] samePhoto, long[] twoPhotos) {
        long[] n = new long[2];
        for (int i = 0; i < c.x().length; i++) {
            for (int j = i + 1; j < c.x().length; j++) {
                if (c.labels()[i] == c.labels()[j]) {
                    boolean one = GatewayScenes.photoOf(c.files().get(i)).equals(GatewayScenes.photoOf(c.files().get(j)));
                    (one ? samePhoto : twoPhotos)[bin(Sphere.dot(c.x()[i], c.x()[j]))]++;
                    n[one ? 0 : 1]++;
                }
            }
        }
        return n;
    }

    /** Per stranger (the first face of each person): the highest cosine to any face of {@code g} other people. */
    static double[] galleryMaxima(EmbeddingCache c, int g, long seed) {
        List<List<Integer>> byPerson = new ArrayList<>();
        for (int p = 0; p < c.classes(); p++) {
            byPerson.add(new ArrayList<>());
        }
        for (int i = 0; i < c.x().length; i++) {
            byPerson.get(c.labels()[i]).add(i);
        }
        SplittableRandom rnd = new SplittableRandom(seed);
        double[] out = new double[c.classes()];
        for (int p = 0; p < c.classes(); p++) {
            double[] q = c.x()[byPerson.get(p).get(0)];
            double best = -1;
            for (int k = 0; k < g; k++) {
                int other;
                do {
                    other = rnd.nextInt(c.classes());
                } while (other == p);
                for (int i : byPerson.get(other)) {
                    best = Math.max(best, Sphere.dot(q, c.x()[i]));
                }
            }
            out[p] = best;
        }
        return out;
    }

    static int bin(double cos) {
        return Math.min(BINS - 1, Math.max(0, (int) Math.floor((cos + 1) / 2 * BINS)));
    }

    /** Pairs whose cosine is below {@code t}; thresholds on the 0.01 grid fall on bin edges. */
    static long below(long[] hist, double t) {
        long n = 0;
        int edge = (int) Math.round((t + 1) / 2 * BINS);
        for (int b = 0; b < edge; b++) {
            n += hist[b];
        }
        return n;
    }

    static double atOrAbove(double[] maxima, double t) {
        long n = 0;
        for (double m : maxima) {
            if (m >= t) {
                n++;
            }
        }
        return n / (double) maxima.length;
    }
}
