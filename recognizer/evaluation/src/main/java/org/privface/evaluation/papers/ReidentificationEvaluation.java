package org.privface.evaluation.papers;

import static org.privface.evaluation.Figures.fmt;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.knowm.xchart.style.Styler;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.image.OpenCv;
import org.privface.evaluation.Charts;
import org.privface.evaluation.EvalOptions;
import org.privface.evaluation.Progress;
import org.privface.evaluation.StratifiedSplit;
import org.privface.privacy.EigenBasis;
import org.privface.privacy.PeepMechanism;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.SensitivityMode;
import org.privface.privacy.latent.KSame;
import org.privface.privacy.latent.LatentObfuscation;
import org.privface.privacy.rdp.RdpBasis;
import org.privface.privacy.rdp.RdpMechanism;
import org.privface.privacy.rdp.RdpMode;

/**
 * Re-identification risk of every image-level protection on the same data: the top-1 accuracy
 * of an eigenface nearest-neighbour recogniser trained on clean images, applied to protected test
 * faces. The DP mechanisms are swept over ε per face (Croft's latent obfuscation, PEEP l1-clip
 * decoded to an image, RDP strict); the k-Same family is swept over k. Lower is more private;
 * 1/people is chance.
 *
 * <pre>mvn -B -q -Preid-eval install -DskipTests</pre>
 */
public final class ReidentificationEvaluation {
    static final double[] EPSILONS = {1, 4, 16, 64, 256, 1024, 4096};
    static final int[] KS = {2, 3, 5, 10};
    static final int NC = 32;

    record Point(String method, String parameter, double value, double epsilonPerFace, double[] top1) {
        double mean() {
            double s = 0;
            for (double v : top1) {
                s += v / top1.length;
            }
            return s;
        }

        double sd() {
            double m = mean();
            double s = 0;
            for (double v : top1) {
                s += (v - m) * (v - m);
            }
            return top1.length > 1 ? Math.sqrt(s / (top1.length - 1)) : 0;
        }
    }

    /** 1-NN on eigenface features of the clean training faces. */
    record Recogniser(EigenBasis basis, double[][] gallery, int[] labels) {
        static Recogniser fit(double[][] train, int[] labels, int width, int height) {
            EigenBasis b = EigenBasis.fit(train, NC, width, height);
            double[][] g = new double[train.length][];
            for (int i = 0; i < train.length; i++) {
                g[i] = b.project(train[i]);
            }
            return new Recogniser(b, g, labels);
        }

        int predict(double[] image) {
            double[] f = basis.project(image);
            int best = -1;
            double bestD = Double.POSITIVE_INFINITY;
            for (int i = 0; i < gallery.length; i++) {
                double d = 0;
                for (int k = 0; k < f.length; k++) {
                    double t = f[k] - gallery[i][k];
                    d += t * t;
                }
                if (d < bestD) {
                    bestD = d;
                    best = labels[i];
                }
            }
            return best;
        }

        double top1(double[][] images, int[] truth) {
            int ok = 0;
            for (int i = 0; i < images.length; i++) {
                ok += predict(images[i]) == truth[i] ? 1 : 0;
            }
            return ok / (double) images.length;
        }
    }

    public static void main(String[] args) throws Exception {
        org.privface.agent.dataset.BadDataset.exitOnError(() -> run(args));
    }

    /** The command; a bad data-set folder ends it with a message naming the file (exit status 2), not a stack trace. */
    static void run(String[] args) throws Exception {
        Map<String, String> opt = EvalOptions.parse(Map.of("--datasets", FaceDatasets.root().map(Path::toString)
                .orElse("../shared/datasets"), "--out", "docs/results", "--seeds", "3", "--sets", "lfw5,orl",
                "--only", "reid,croft-paper"), args);
        List<String> only = java.util.Arrays.asList(opt.get("--only").split(","));
        System.setProperty("java.awt.headless", "true");
        OpenCv.load();
        Path out = Files.createDirectories(Path.of(opt.get("--out")));
        int seeds = Integer.parseInt(opt.get("--seeds"));
        for (String set : opt.get("--sets").split(",")) {
            Path dir = Path.of(opt.get("--datasets")).resolve(set);
            if (!Files.isDirectory(dir)) {
                System.err.println("skipping " + set + ": " + dir + " not found (set FACE_DATASETS or --datasets)");
                continue;
            }
            boolean orl = set.startsWith("orl");
            LabelledFaces peep = orl ? FaceDatasets.orl(dir) : FaceDatasets.lfw(dir);
            if (only.contains("reid")) {
                LabelledFaces rdp = orl ? FaceDatasets.orl(dir, FaceCrops.Shape.RDP) : FaceDatasets.lfw(dir, FaceCrops.Shape.RDP);
                run(set, peep, rdp, seeds, out);
            }
            if (only.contains("croft-paper")) {
                croftPaper(set, peep, seeds, out);
            }
        }
    }

    static void run(String set, LabelledFaces peep, LabelledFaces rdp, int seeds, Path out) throws IOException {
        int people = peep.names().size();
        Map<String, Point> points = new LinkedHashMap<>();
        Progress progress = new Progress(System.err, seeds * (1 + 3 * EPSILONS.length + 3 * KS.length));
        SecureLaplace laplace = new SecureLaplace();
        for (int s = 0; s < seeds; s++) {
            StratifiedSplit split = StratifiedSplit.of(peep.labels(), people, 0.7, Integer.MAX_VALUE, 1000 + s);
            double[][] train = StratifiedSplit.select(peep.faces(), split.train());
            double[][] test = StratifiedSplit.select(peep.faces(), split.test());
            int[] trainY = StratifiedSplit.select(peep.labels(), split.train());
            int[] testY = StratifiedSplit.select(peep.labels(), split.test());
            Recogniser rec = Recogniser.fit(train, trainY, FaceCrops.WIDTH, FaceCrops.HEIGHT);
            double[][] train64 = StratifiedSplit.select(rdp.faces(), split.train());
            double[][] test64 = StratifiedSplit.select(rdp.faces(), split.test());
            int side = FaceCrops.Shape.RDP.width();
            Recogniser rec64 = Recogniser.fit(train64, trainY, side, side);
            RdpBasis rdpBasis = RdpBasis.fit(train64, NC, side, side, 3);

            record(points, "clean", "none", 0, Double.POSITIVE_INFINITY, s, seeds, rec.top1(test, testY));
            progress.step(set + " seed " + s + " clean");
            for (double eps : EPSILONS) {
                LatentObfuscation croft = new LatentObfuscation(rec.basis(), eps, laplace);
                PeepMechanism l1 = new PeepMechanism(rec.basis(), SensitivityMode.L1_CLIP, eps, laplace);
                RdpMechanism strict = new RdpMechanism(rdpBasis, RdpMode.STRICT, eps, laplace);
                double[][] a = new double[test.length][];
                double[][] b = new double[test.length][];
                double[][] c = new double[test.length][];
                for (int i = 0; i < test.length; i++) {
                    a[i] = croft.decode(croft.obfuscate(test[i]));
                    b[i] = rec.basis().reconstruct(l1.perturb(test[i]).vector());
                    c[i] = strict.sanitize(test64[i], true).image();
                }
                record(points, "croft-latent", "epsilon", eps, eps, s, seeds, rec.top1(a, testY));
                progress.step(set + " seed " + s + " croft eps " + eps);
                record(points, "peep-l1-clip", "epsilon", eps, eps, s, seeds, rec.top1(b, testY));
                progress.step(set + " seed " + s + " peep eps " + eps);
                record(points, "rdp-strict", "epsilon", eps, eps, s, seeds, rec64.top1(c, testY));
                progress.step(set + " seed " + s + " rdp eps " + eps);
            }
            for (int k : KS) {
                for (KSame.Variant v : KSame.Variant.values()) {
                    KSame.Result r = KSame.apply(test, k, v, rec.basis());
                    String name = "k-same-" + v.name().toLowerCase(Locale.ROOT).replace('_', '-');
                    record(points, name, "k", k, Double.NaN, s, seeds, rec.top1(r.faces(), testY));
                    progress.step(set + " seed " + s + " " + name + " k " + k);
                }
            }
        }
        write(set, people, points.values(), out);
    }

    /** Croft et al.'s draws per identity and ε (Section 5.1). */
    static final int DRAWS = 10;

    /**
     * Croft et al.'s protocol (Section 5.1): <b>one face per identity</b> is protected, not every
     * image. The generator's "neutral" face of an identity is here the mean of that person's test
     * images (the eigenface model stands in for their GNN). DP: 10 draws per identity and ε, top-1
     * averaged over draws and identities. k-Same: the identities' faces are clustered once with
     * k-same-m's clustering (model coordinates) and each identity gets its cluster's mean, one output
     * per identity. The recogniser is trained on the clean 70 % split (their VGGFace stand-in).
     */
    static void croftPaper(String set, LabelledFaces data, int seeds, Path out) throws IOException {
        int people = data.names().size();
        Map<String, Point> points = new LinkedHashMap<>();
        SecureLaplace laplace = new SecureLaplace();
        for (int s = 0; s < seeds; s++) {
            StratifiedSplit split = StratifiedSplit.of(data.labels(), people, 0.7, Integer.MAX_VALUE, 1000 + s);
            double[][] train = StratifiedSplit.select(data.faces(), split.train());
            int[] trainY = StratifiedSplit.select(data.labels(), split.train());
            Recogniser rec = Recogniser.fit(train, trainY, FaceCrops.WIDTH, FaceCrops.HEIGHT);
            double[][] identity = new double[people][];
            int[] count = new int[people];
            for (int i : split.test()) {
                int y = data.labels()[i];
                if (identity[y] == null) {
                    identity[y] = new double[data.faces()[i].length];
                }
                for (int j = 0; j < identity[y].length; j++) {
                    identity[y][j] += data.faces()[i][j];
                }
                count[y]++;
            }
            for (int y = 0; y < people; y++) {
                for (int j = 0; j < identity[y].length; j++) {
                    identity[y][j] /= count[y];
                }
            }
            int[] ids = java.util.stream.IntStream.range(0, people).toArray();
            record(points, "clean identity face", "none", 0, Double.POSITIVE_INFINITY, s, seeds, rec.top1(identity, ids));
            for (double eps : EPSILONS) {
                LatentObfuscation croft = new LatentObfuscation(rec.basis(), eps, laplace);
                double hits = 0;
                for (int d = 0; d < DRAWS; d++) {
                    double[][] o = new double[people][];
                    for (int y = 0; y < people; y++) {
                        o[y] = croft.decode(croft.obfuscate(identity[y]));
                    }
                    hits += rec.top1(o, ids) / DRAWS;
                }
                record(points, "croft-latent-one-face-per-identity", "epsilon", eps, eps, s, seeds, hits);
            }
            for (int k : KS) {
                if (k > people) {
                    continue;
                }
                KSame.Result r = KSame.apply(identity, k, KSame.Variant.MODEL_LITE, rec.basis());
                record(points, "k-same-m-one-output-per-identity", "k", k, Double.NaN, s, seeds,
                        rec.top1(r.faces(), ids));
            }
            System.err.println(set + " croft-paper seed " + s + " done");
        }
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("reid-croft-paper-" + set + ".csv")))) {
            w.println("method,parameter,value,epsilon_per_face,top1_mean,top1_sd,nominal_k_same_bound,chance,identities,draws");
            for (Point p : points.values()) {
                w.printf(Locale.ROOT, "%s,%s,%s,%s,%.4f,%.4f,%s,%.4f,%d,%d%n", p.method(), p.parameter(), fmt(p.value()),
                        Double.isNaN(p.epsilonPerFace()) ? "not-dp" : fmt(p.epsilonPerFace()), p.mean(), p.sd(),
                        p.parameter().equals("k") ? String.format(Locale.ROOT, "%.4f", 1 / p.value()) : "",
                        1.0 / people, people, p.parameter().equals("epsilon") ? DRAWS : 1);
            }
        }
    }

    private static void record(Map<String, Point> points, String method, String param, double value, double eps, int seed,
                               int seeds, double top1) {
        Point p = points.computeIfAbsent(method + "/" + value, k -> new Point(method, param, value, eps, new double[seeds]));
        p.top1()[seed] = top1;
    }

    private static void write(String set, int people, Iterable<Point> points, Path out) throws IOException {
        Path csv = out.resolve("reid-" + set + ".csv");
        List<Point> all = new ArrayList<>();
        points.forEach(all::add);
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(csv))) {
            w.println("method,parameter,value,epsilon_per_face,top1_mean,top1_sd,chance");
            for (Point p : all) {
                w.printf(Locale.ROOT, "%s,%s,%s,%s,%.4f,%.4f,%.4f%n", p.method(), p.parameter(), fmt(p.value()),
                        Double.isNaN(p.epsilonPerFace()) ? "not-dp" : fmt(p.epsilonPerFace()), p.mean(), p.sd(), 1.0 / people);
            }
        }
        List<Charts.Series> byEps = new ArrayList<>();
        for (String m : List.of("croft-latent", "peep-l1-clip", "rdp-strict")) {
            byEps.add(series(m, all.stream().filter(p -> p.method().equals(m)).toList()));
        }
        double clean = all.stream().filter(p -> p.method().equals("clean")).findFirst().orElseThrow().mean();
        byEps.add(new Charts.Series("clean images", new double[] {EPSILONS[0], EPSILONS[EPSILONS.length - 1]},
                new double[] {clean, clean}, null, true, java.awt.Color.GRAY));
        byEps.add(new Charts.Series("chance", new double[] {EPSILONS[0], EPSILONS[EPSILONS.length - 1]},
                new double[] {1.0 / people, 1.0 / people}, null, true, java.awt.Color.BLACK));
        Charts.line(out.resolve("reid-epsilon-" + set + ".png"),
                set + ": re-identification by a clean-trained eigenface recogniser", "epsilon per face (log)", "top-1",
                true, Charts.YAxis.UNIT, Styler.LegendPosition.InsideNW, byEps);
        List<Charts.Series> byK = new ArrayList<>();
        for (String m : List.of("k-same-pixel", "k-same-eigen", "k-same-model-lite")) {
            byK.add(series(m, all.stream().filter(p -> p.method().equals(m)).toList()));
        }
        double[] ks = java.util.Arrays.stream(KS).asDoubleStream().toArray();
        byK.add(new Charts.Series("1/k", ks, java.util.Arrays.stream(ks).map(k -> 1 / k).toArray(), null, true,
                java.awt.Color.BLACK));
        Charts.line(out.resolve("reid-k-" + set + ".png"), set + ": re-identification after k-Same", "k", "top-1", false,
                Charts.YAxis.UNIT, Styler.LegendPosition.InsideNE, byK);
        System.out.println("wrote " + csv);
        for (Point p : all) {
            System.out.printf(Locale.ROOT, "%-18s %-7s %8s  top-1 %.3f ± %.3f%n", p.method(), p.parameter(), fmt(p.value()),
                    p.mean(), p.sd());
        }
    }

    private static Charts.Series series(String name, List<Point> pts) {
        return new Charts.Series(name, pts.stream().mapToDouble(Point::value).toArray(),
                pts.stream().mapToDouble(Point::mean).toArray(), pts.stream().mapToDouble(Point::sd).toArray());
    }

}
