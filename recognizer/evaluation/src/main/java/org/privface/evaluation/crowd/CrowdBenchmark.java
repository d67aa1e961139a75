package org.privface.evaluation.crowd;

import java.awt.Color;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;

import org.knowm.xchart.style.Styler;
import org.privface.agent.embed.FaceEmbedders;
import org.privface.agent.link.GatewayLinking;
import org.privface.agent.link.PersonLedger;
import org.privface.agent.track.BudgetPolicy;
import org.privface.agent.track.TrackBudget;
import org.privface.evaluation.Charts;
import org.privface.evaluation.EmbeddingCache;
import org.privface.evaluation.EmbeddingSets;
import org.privface.evaluation.EvalOptions;

/**
 * The per-person budget in a crowd (issue 30): one gateway with 3 cameras sees N different real
 * people (lfw139 and lfw-public) in one 10-minute window, each appearing 2–4 times, on a different
 * camera each time after the first and with a different photo each time, at policy {@code once}.
 * Each appearance is a track of a few seconds at a random time in the window.
 *
 * <p>It runs the agent's own linking classes ({@link GatewayLinking}, {@link PersonLedger},
 * {@link TrackBudget}) on cached embeddings, one face per track (a photo, not a video, so the
 * track-averaging of several faces is not exercised here; the scene test does that), in the order
 * the tracks start and end, and charges each release as the camera worker does. Measured against
 * the truth, from the gateway's own ledger: the share of people released at least once (utility),
 * and the share who spent more than the policy's ε in the window (privacy: a missed link gave them
 * a fresh ε).
 */
public final class CrowdBenchmark {
    static final int CAMERAS = 3;
    static final double EPSILON = 2;
    static final Duration WINDOW = Duration.ofMinutes(10);
    static final Instant T0 = Instant.parse("2026-01-01T08:00:00Z");

    private CrowdBenchmark() {
    }

    /** One appearance: a photo of a person on a camera from start to end (seconds into the window). */
    record Track(int person, double[] face, int camera, double start, double end) {
    }

    /** Shares of people released at least once and over their ε, over the runs of one setting. */
    record Outcome(double released, double over, double releasedSd, double overSd) {
    }

    public static void main(String[] args) throws IOException {
        Map<String, String> opt = EvalOptions.parse(Map.ofEntries(
                Map.entry("--sets", "lfw139,lfw-public"),
                Map.entry("--datasets", System.getProperty("privface.datasets", "../shared/datasets")),
                Map.entry("--cache", "target/embeddings"),
                Map.entry("--models", String.join(",", FaceEmbedders.NAMES)),
                Map.entry("--people", "20,100,300"), Map.entry("--runs", "8"),
                Map.entry("--out", "docs/results"), Map.entry("--seed", "30")), args);
        Path out = Path.of(opt.get("--out"));
        Files.createDirectories(out);
        int runs = Integer.parseInt(opt.get("--runs"));
        long seed = Long.parseLong(opt.get("--seed"));
        int[] crowd = java.util.Arrays.stream(opt.get("--people").split(",")).mapToInt(s -> Integer.parseInt(s.strip())).toArray();
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("crowd-benchmark.csv")))) {
            csv.println("network,people,rule,matches,disjoint_views,threshold,released,over_epsilon,released_sd,over_epsilon_sd,runs");
            for (String model : opt.get("--models").split(",")) {
                model = model.strip();
                List<List<double[]>> pool = pool(opt, model);
                System.out.printf(Locale.ROOT, "== %s: %d people with 2 or more photos%n", model, pool.size());
                List<Charts.Series> series = new ArrayList<>();
                double before = FaceEmbedders.linkThreshold(model);
                double[] grid = grid(model);
                Color[] shades = {new Color(0, 150, 0), new Color(0, 0, 200), new Color(200, 0, 0)};
                for (int ci = 0; ci < crowd.length; ci++) {
                    int n = crowd[ci];
                    Outcome b = run(pool, n, runs, seed, GatewayLinking.Rule.single(before));
                    row(csv, model, n, "before", 1, false, before, b, runs);
                    System.out.printf(Locale.ROOT, "%s N=%d before (max, %.2f): released %.3f, over ε %.3f%n", model, n,
                            before, b.released(), b.over());
                    for (int matches : new int[] {1, 2}) {
                        double[] rel = new double[grid.length];
                        double[] over = new double[grid.length];
                        for (int k = 0; k < grid.length; k++) {
                            Outcome o = run(pool, n, runs, seed, new GatewayLinking.Rule(grid[k], matches, 1,
                                    GatewayLinking.DEFAULT_RECHECK_EVERY, true, null));
                            row(csv, model, n, "after", matches, true, grid[k], o, runs);
                            rel[k] = o.released();
                            over[k] = o.over();
                        }
                        csv.flush();
                        best(model, n, matches, grid, rel, over);
                        if (matches == 2) {
                            series.add(new Charts.Series(n + " people: released", grid, rel, null, false, shades[ci % 3]));
                            series.add(new Charts.Series(n + " people: over ε", grid, over, null, true, shades[ci % 3]));
                        }
                    }
                }
                Charts.line(out.resolve("crowd-benchmark-" + model + ".png"), "Crowd on one gateway, " + model
                                + " (mean of 2 best matches, disjoint views, policy once)", "link threshold (cosine)",
                        "share of people", false, Charts.YAxis.UNIT, Styler.LegendPosition.OutsideS, 900, 640, series);
            }
        }
        System.out.println("wrote " + out.resolve("crowd-benchmark.csv") + " and crowd-benchmark-<network>.png");
    }

    /** Thresholds on a 0.01 grid over where each network's cosines decide. */
    static double[] grid(String model) {
        double lo = FaceEmbedders.DLIB.equals(model) ? 0.86 : 0.20;
        double hi = FaceEmbedders.DLIB.equals(model) ? 0.96 : 0.55;
        int n = (int) Math.round((hi - lo) / 0.01) + 1;
        double[] g = new double[n];
        for (int i = 0; i < n; i++) {
            g[i] = Math.round((lo + i * 0.01) * 100) / 100.0;
        }
        return g;
    }

    /** The best trade-off: the most released with at most 1 % over ε, else the fewest errors of both kinds. */
    static void best(String model, int n, int matches, double[] grid, double[] rel, double[] over) {
        int bestOk = -1;
        int bestSum = 0;
        for (int k = 0; k < grid.length; k++) {
            if (over[k] <= 0.01 && (bestOk < 0 || rel[k] > rel[bestOk])) {
                bestOk = k;
            }
            if (over[k] + 1 - rel[k] < over[bestSum] + 1 - rel[bestSum]) {
                bestSum = k;
            }
        }
        System.out.printf(Locale.ROOT, "%s N=%d matches=%d: best with ≤1%% over ε: %s; fewest errors: %.2f (released %.3f, over %.3f)%n",
                model, n, matches, bestOk < 0 ? "none" : String.format(Locale.ROOT, "%.2f (released %.3f, over %.3f)",
                        grid[bestOk], rel[bestOk], over[bestOk]), grid[bestSum], rel[bestSum], over[bestSum]);
    }

    private static void row(PrintWriter csv, String model, int n, String rule, int matches, boolean disjoint, double t,
                            Outcome o, int runs) {
        csv.printf(Locale.ROOT, "%s,%d,%s,%d,%b,%.2f,%.4f,%.4f,%.4f,%.4f,%d%n", model, n, rule, matches, disjoint, t,
                o.released(), o.over(), o.releasedSd(), o.overSd(), runs);
    }

    /** Every person of the sets with at least two photos, their embeddings per person. */
    static List<List<double[]>> pool(Map<String, String> opt, String model) throws IOException {
        List<List<double[]>> people = new ArrayList<>();
        for (String set : opt.get("--sets").split(",")) {
            EmbeddingCache c = EmbeddingSets.load(Path.of(opt.get("--datasets")), set.strip(), Path.of(opt.get("--cache")), model);
            List<List<double[]>> byPerson = new ArrayList<>();
            for (int p = 0; p < c.classes(); p++) {
                byPerson.add(new ArrayList<>());
            }
            for (int i = 0; i < c.x().length; i++) {
                byPerson.get(c.labels()[i]).add(c.x()[i]);
            }
            byPerson.stream().filter(l -> l.size() >= 2).forEach(people::add);
        }
        return people;
    }

    static Outcome run(List<List<double[]>> pool, int n, int runs, long seed, GatewayLinking.Rule rule) {
        double[] rel = new double[runs];
        double[] over = new double[runs];
        for (int r = 0; r < runs; r++) {
            // The same crowd for every rule and threshold of a run: the settings are compared on equal scenes.
            double[] o = once(scene(pool, n, new SplittableRandom(seed * 1_000_003L + r * 7919L + n)), n, rule);
            rel[r] = o[0];
            over[r] = o[1];
        }
        return new Outcome(mean(rel), mean(over), sd(rel), sd(over));
    }

    /** N people drawn from the pool, 2–4 tracks each on the gateway's cameras at random times in the window. */
    static List<Track> scene(List<List<double[]>> pool, int n, SplittableRandom rnd) {
        if (n > pool.size()) {
            throw new IllegalArgumentException(n + " people asked, the sets hold " + pool.size() + " with two photos or more");
        }
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < pool.size(); i++) {
            order.add(i);
        }
        for (int i = order.size() - 1; i > 0; i--) {
            java.util.Collections.swap(order, i, rnd.nextInt(i + 1));
        }
        double span = WINDOW.toSeconds() - 30;
        List<Track> tracks = new ArrayList<>();
        for (int p = 0; p < n; p++) {
            List<double[]> photos = new ArrayList<>(pool.get(order.get(p)));
            for (int i = photos.size() - 1; i > 0; i--) {
                java.util.Collections.swap(photos, i, rnd.nextInt(i + 1));
            }
            int k = Math.min(photos.size(), 2 + rnd.nextInt(3));
            double[] starts = new double[k];
            boolean apart;
            do {
                for (int i = 0; i < k; i++) {
                    starts[i] = rnd.nextDouble() * span;
                }
                java.util.Arrays.sort(starts);
                apart = true;
                for (int i = 1; i < k; i++) {
                    apart &= starts[i] - starts[i - 1] >= 4;
                }
            } while (!apart);
            int camera = rnd.nextInt(CAMERAS);
            for (int i = 0; i < k; i++) {
                double end = starts[i] + 3 + rnd.nextDouble() * 12;
                if (i + 1 < k) {
                    end = Math.min(end, starts[i + 1] - 1);
                }
                tracks.add(new Track(p, photos.get(i), camera, starts[i], end));
                camera = (camera + 1 + rnd.nextInt(CAMERAS - 1)) % CAMERAS;
            }
        }
        return tracks;
    }

    /**
     * One window of the scene through the gateway's linking and ledgers.
     *
     * @return {share of people released at least once, share whose releases spent more than ε}
     */
    static double[] once(List<Track> scene, int n, GatewayLinking.Rule rule) {
        PersonLedger ledger = PersonLedger.inMemory(rule.threshold(), rule.matches(), WINDOW);
        GatewayLinking linking = new GatewayLinking(ledger, 0, 0, rule.facesToLink(), rule.recheckEvery(), rule.disjointViews());
        List<TrackBudget> budgets = new ArrayList<>();
        for (int c = 0; c < CAMERAS; c++) {
            budgets.add(new TrackBudget(BudgetPolicy.once(), EPSILON, WINDOW));
        }
        // Events: each track's start (its face) and end, in time order.
        List<double[]> events = new ArrayList<>();
        for (int i = 0; i < scene.size(); i++) {
            events.add(new double[] {scene.get(i).start(), i, 0});
            events.add(new double[] {scene.get(i).end(), i, 1});
        }
        events.sort(Comparator.<double[]>comparingDouble(e -> e[0]).thenComparingDouble(e -> e[2]));
        double[] spent = new double[n];
        Map<Integer, Integer> releases = new HashMap<>();
        for (double[] e : events) {
            Track t = scene.get((int) e[1]);
            Instant at = T0.plusNanos((long) (e[0] * 1e9));
            String camera = "cam" + t.camera();
            String id = "trk-" + (int) e[1];
            TrackBudget budget = budgets.get(t.camera());
            if (e[2] == 1) {
                linking.observe(camera, id, false, null, at);
                linking.ended(camera, id, at).forEach(budget::forget);
                continue;
            }
            Optional<GatewayLinking.Segment> s = linking.observe(camera, id, true, t.face(), at);
            if (s.isEmpty() || !ledger.hasRoom(s.get().personId(), budget, at)) {
                continue;
            }
            Optional<TrackBudget.Grant> g = budget.request(s.get().budgetTrack(), 1, at);
            if (g.isPresent() && ledger.charge(s.get().personId(), budget, at).isPresent()) {
                spent[t.person()] += g.get().epsilonForThisRelease();
                releases.merge(t.person(), 1, Integer::sum);
            }
        }
        int released = 0;
        int over = 0;
        for (int p = 0; p < n; p++) {
            released += releases.containsKey(p) ? 1 : 0;
            over += spent[p] > EPSILON + 1e-9 ? 1 : 0;
        }
        return new double[] {released / (double) n, over / (double) n};
    }

    private static double mean(double[] v) {
        double s = 0;
        for (double x : v) {
            s += x;
        }
        return s / v.length;
    }

    private static double sd(double[] v) {
        double m = mean(v);
        double s = 0;
        for (double x : v) {
            s += (x - m) * (x - m);
        }
        return v.length < 2 ? 0 : Math.sqrt(s / (v.length - 1));
    }
}
