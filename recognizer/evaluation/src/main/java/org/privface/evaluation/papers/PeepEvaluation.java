package org.privface.evaluation.papers;

import static org.privface.evaluation.Figures.fmt;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.opencv.core.Core;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.Size;
import org.opencv.imgcodecs.Imgcodecs;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.image.OpenCv;
import org.privface.evaluation.Charts;
import org.privface.evaluation.EvalOptions;
import org.privface.evaluation.Metrics;
import org.privface.evaluation.Progress;
import org.privface.evaluation.Ssim;
import org.privface.evaluation.StratifiedSplit;
import org.privface.privacy.EigenBasis;
import org.privface.privacy.PeepMechanism;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.SeededRandom;
import org.privface.privacy.SensitivityMode;
import org.privface.recognizer.model.MlpModel;
import org.privface.recognizer.model.MlpOptions;
import org.privface.recognizer.model.MlpTrainer;

/**
 * Reproduces the PEEP paper's evaluation (Chamikara et al. 2020, Section 5) with the agent's own
 * PEEP code and the recognizer's own MLP: Figure 7 (F1 against ε), Figure 9 (images per person),
 * Figure 10 (number of eigenfaces) and the reconstruction attack of Section 5.5, on lfw5 and ORL.
 * Writes CSV and PNG into docs/results/. Each point: stratified 70/30 split, basis fitted on the
 * training part only, one perturbed release per image, mean ± sd over seeds.
 */
public final class PeepEvaluation {
    static final double[] EPSILONS = {0.5, 1, 2, 3, 4, 5, 6, 7, 8};
    static final double[] SWEEP_EPSILONS = {1, 8};
    /** Per-face ε for the per-face modes: the paper's grid's low end, then paper-pca's per-face range. */
    static final double[] PER_FACE_EPSILONS = {1, 8, 64, 128, 256, 512, 1024};

    private final LabelledFaces data;
    private final String name;
    private final Path out;
    private final int seeds;
    private final MlpOptions mlp;
    private final Progress progress;

    PeepEvaluation(LabelledFaces data, String name, Path out, int seeds, MlpOptions mlp, Progress progress) {
        this.data = data;
        this.name = name;
        this.out = out;
        this.seeds = seeds;
        this.mlp = mlp;
        this.progress = progress;
    }

    /** One configuration's scores over all seeds. */
    record Point(String mode, double epsilonPerCoordinate, double epsilonPerFace, int nc, int perPerson,
                 double precision, double recall, double f1, double f1Sd) {
    }

    public static void main(String[] args) throws Exception {
        org.privface.agent.dataset.BadDataset.exitOnError(() -> run(args));
    }

    /** The command; a bad data-set folder ends it with a message naming the file (exit status 2), not a stack trace. */
    static void run(String[] args) throws Exception {
        Map<String, String> opt = EvalOptions.parse(Map.of("--datasets", FaceDatasets.root().map(Path::toString)
                .orElse("../shared/datasets"), "--out", "docs/results", "--seeds", "5", "--mlp", "small",
                "--only", "fig7,fig9,fig10,attack", "--sets", "lfw5,orl", "--paper-mode", "paper-pixel"), args);
        OpenCv.load();
        Path datasets = Path.of(opt.get("--datasets"));
        Path out = Files.createDirectories(Path.of(opt.get("--out")));
        int seeds = Integer.parseInt(opt.get("--seeds"));
        MlpOptions mlp = "peep-paper".equals(opt.get("--mlp")) ? MlpOptions.peepPaper() : MlpOptions.small();
        List<String> only = Arrays.asList(opt.get("--only").split(","));
        SensitivityMode paperMode = SensitivityMode.fromWireName(opt.get("--paper-mode"));
        for (String set : opt.get("--sets").split(",")) {
            Path dir = datasets.resolve(set);
            if (!Files.isDirectory(dir)) {
                System.err.println("skipping " + set + ": " + dir + " not found (set FACE_DATASETS)");
                continue;
            }
            LabelledFaces data = set.startsWith("orl") ? FaceDatasets.orl(dir) : FaceDatasets.lfw(dir);
            int nc = Math.min(128, (int) (data.size() * 0.7) - 1);
            int runs = 0;
            if (only.contains("fig7")) {
                runs += (1 + 2 * EPSILONS.length + 2 * PER_FACE_EPSILONS.length) * seeds;
            }
            if (only.contains("paper-table")) {
                runs += 3 * seeds;
            }
            if (only.contains("fig9")) {
                runs += perPersonSweep(set).length * (SWEEP_EPSILONS.length + 1) * seeds;
            }
            if (only.contains("fig10")) {
                runs += ncSweep(data).length * (SWEEP_EPSILONS.length + 1) * seeds;
            }
            System.err.printf("%s: %d faces of %d people, %d MLP trainings (%s)%n", set, data.size(),
                    data.names().size(), runs, opt.get("--mlp"));
            PeepEvaluation eval = new PeepEvaluation(data, set, out, seeds, mlp, new Progress(System.err, Math.max(1, runs)));
            if (only.contains("fig7")) {
                eval.figure7(nc);
            }
            if (only.contains("fig9")) {
                eval.figure9(nc, paperMode, perPersonSweep(set));
            }
            if (only.contains("fig10")) {
                eval.figure10(paperMode, ncSweep(data));
            }
            if (only.contains("attack")) {
                eval.reconstructionAttack(nc);
            }
            if (only.contains("paper-table")) {
                eval.paperTable(nc, opt.get("--mlp"));
            }
            if (only.contains("train-time")) {
                eval.trainingTime(nc);
            }
        }
    }

    static int[] perPersonSweep(String set) {
        return set.startsWith("orl") ? new int[] {2, 3, 4, 5, 7} : new int[] {10, 20, 40, 60, 76};
    }

    static int[] ncSweep(LabelledFaces data) {
        int max = (int) (data.size() * 0.7) - 1;
        return Arrays.stream(new int[] {8, 16, 32, 64, 128, 256}).filter(n -> n <= max).toArray();
    }

    void figure7(int nc) throws IOException {
        List<Point> points = new ArrayList<>();
        points.add(run(null, Double.POSITIVE_INFINITY, nc, -1));
        for (SensitivityMode mode : List.of(SensitivityMode.PAPER_PCA, SensitivityMode.PAPER_PIXEL)) {
            for (double eps : EPSILONS) {
                points.add(run(mode, eps, nc, -1));
            }
        }
        // The per-face modes across the per-face ε that the paper modes really spend.
        for (SensitivityMode mode : List.of(SensitivityMode.VECTOR, SensitivityMode.L1_CLIP)) {
            for (double eps : PER_FACE_EPSILONS) {
                points.add(run(mode, eps, nc, -1));
            }
        }
        writeCsv(out.resolve("peep-" + name + ".csv"), points, false);
        List<Charts.Series> paperAxis = new ArrayList<>();
        List<Charts.Series> perFace = new ArrayList<>();
        for (String mode : List.of("paper-pca", "paper-pixel", "vector", "l1-clip")) {
            List<Point> ps = points.stream().filter(p -> p.mode().equals(mode)).toList();
            String label = mode + (mode.startsWith("paper") ? " (per-face eps = " + (mode.equals("paper-pca") ? nc
                    : FaceCrops.WIDTH * FaceCrops.HEIGHT) + " x eps)" : " (eps per face)");
            List<Point> grid = ps.stream().filter(p -> configured(p) <= 8).toList();
            paperAxis.add(series(label, grid, false));
            perFace.add(series(mode, ps, true));
        }
        Point none = points.get(0);
        paperAxis.add(new Charts.Series("without privacy", new double[] {0.5, 8}, new double[] {none.f1(), none.f1()}, null));
        Charts.line(out.resolve("peep-" + name + ".png"), "PEEP on " + name + " (Figure 7): weighted F1 vs configured epsilon, nc="
                + nc, "epsilon as configured (per coordinate for paper modes, per face otherwise)", "weighted F1", false, paperAxis);
        Charts.line(out.resolve("peep-" + name + "-per-face.png"), "PEEP on " + name + ": weighted F1 vs honest per-face epsilon",
                "epsilon per face (log)", "weighted F1", true, perFace);
    }

    /**
     * The two values the paper states in its text (Section 1: F1 85 % without privacy, 79 % at ε = 8;
     * Figure 7's own points are only in the image), beside ours for both readings of where the noise goes.
     * A short run: 3 configurations, so the paper's MLP ({@code --mlp peep-paper}) fits in minutes.
     */
    void paperTable(int nc, String mlpName) throws IOException {
        Point none = run(null, Double.POSITIVE_INFINITY, nc, -1);
        Point pca = run(SensitivityMode.PAPER_PCA, 8, nc, -1);
        Point pixel = run(SensitivityMode.PAPER_PIXEL, 8, nc, -1);
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("peep-" + name + "-paper-table-" + mlpName + ".csv")))) {
            w.println("setting,mode,paper_f1,our_f1,our_f1_sd,difference,seed_count,mlp,epsilon_per_face");
            for (Object[] row : new Object[][] {{"without privacy", none, 0.85}, {"eps=8 (Section 4.3: noise on PCA indices)", pca, 0.79},
                    {"eps=8 (Section 5.5: noise on pixels)", pixel, 0.79}}) {
                Point p = (Point) row[1];
                double paper = (Double) row[2];
                w.printf(Locale.ROOT, "%s,%s,%.2f,%.4f,%.4f,%+.4f,%d,%s,%s%n", row[0], p.mode(), paper, p.f1(), p.f1Sd(),
                        p.f1() - paper, seeds, mlpName, fmt(p.epsilonPerFace()));
            }
        }
    }

    void figure9(int nc, SensitivityMode mode, int[] perPerson) throws IOException {
        List<Point> points = new ArrayList<>();
        List<Charts.Series> series = new ArrayList<>();
        for (double eps : concat(SWEEP_EPSILONS, Double.POSITIVE_INFINITY)) {
            List<Point> line = new ArrayList<>();
            for (int k : perPerson) {
                Point p = run(Double.isInfinite(eps) ? null : mode, eps, Math.min(nc, k * data.names().size() - 1), k);
                points.add(p);
                line.add(p);
            }
            series.add(new Charts.Series(Double.isInfinite(eps) ? "without privacy" : mode.wireName() + " eps=" + fmt(eps),
                    line.stream().mapToDouble(Point::perPerson).toArray(), line.stream().mapToDouble(Point::f1).toArray(),
                    line.stream().mapToDouble(Point::f1Sd).toArray()));
        }
        writeCsv(out.resolve("peep-" + name + "-images-per-person.csv"), points, true);
        Charts.line(out.resolve("peep-" + name + "-images-per-person.png"), "PEEP on " + name
                + " (Figure 9): training images per person", "training images per person", "weighted F1", false, series);
    }

    void figure10(SensitivityMode mode, int[] ncs) throws IOException {
        List<Point> points = new ArrayList<>();
        List<Charts.Series> series = new ArrayList<>();
        for (double eps : concat(SWEEP_EPSILONS, Double.POSITIVE_INFINITY)) {
            List<Point> line = new ArrayList<>();
            for (int nc : ncs) {
                Point p = run(Double.isInfinite(eps) ? null : mode, eps, nc, -1);
                points.add(p);
                line.add(p);
            }
            series.add(new Charts.Series(Double.isInfinite(eps) ? "without privacy" : mode.wireName() + " eps=" + fmt(eps),
                    line.stream().mapToDouble(Point::nc).toArray(), line.stream().mapToDouble(Point::f1).toArray(),
                    line.stream().mapToDouble(Point::f1Sd).toArray()));
        }
        // Section 5.5's pixel reading keeps the historical file names; the other reading gets its own.
        String suffix = mode == SensitivityMode.PAPER_PIXEL ? "" : "-" + mode.wireName();
        writeCsv(out.resolve("peep-" + name + "-nc" + suffix + ".csv"), points, true);
        Charts.line(out.resolve("peep-" + name + "-nc" + suffix + ".png"), "PEEP on " + name + " (Figure 10): number of eigenfaces",
                "nc (log)", "weighted F1", true, series);
    }

    /**
     * Section 5.5: an attacker who knows the basis reconstructs μ + Uᵀc′ from a released vector.
     * Rows: original, then ε = ∞, 8, 4, 0.5 in paper-pixel mode (the paper's setting) and in
     * vector mode at the same per-face ε as paper-pca would spend.
     */
    void reconstructionAttack(int nc) throws IOException {
        StratifiedSplit split = StratifiedSplit.of(data.labels(), data.names().size(), 0.7, -1, 1);
        EigenBasis basis = EigenBasis.fit(StratifiedSplit.select(data.faces(), split.train()), nc, FaceCrops.WIDTH, FaceCrops.HEIGHT);
        int shown = 6;
        int[] faces = Arrays.copyOf(split.test(), shown);
        double[] eps = {Double.POSITIVE_INFINITY, 8, 4, 0.5};
        List<Mat> rows = new ArrayList<>();
        List<String> csv = new ArrayList<>();
        csv.add("mode,epsilon_per_coordinate,epsilon_per_face,ssim_mean,ssim_min,ssim_max");
        rows.add(row(Arrays.stream(faces).mapToObj(i -> data.faces()[i]).toList()));
        SecureLaplace lap = new SecureLaplace();
        for (SensitivityMode mode : List.of(SensitivityMode.PAPER_PIXEL, SensitivityMode.VECTOR)) {
            for (double e : eps) {
                List<double[]> recon = new ArrayList<>();
                double epsConfigured = mode == SensitivityMode.VECTOR ? e * nc : e;
                double perFace = Double.NaN;
                for (int i : faces) {
                    double[] coords;
                    if (Double.isInfinite(e)) {
                        coords = basis.project(data.faces()[i]);
                        perFace = Double.POSITIVE_INFINITY;
                    } else {
                        PeepMechanism peep = new PeepMechanism(basis, mode, epsConfigured, lap);
                        coords = unscale(basis, peep.perturb(data.faces()[i]).vector());
                        perFace = peep.epsilonPerFace();
                    }
                    recon.add(clamp01(basis.reconstruct(coords)));
                }
                double[] ssim = new double[faces.length];
                for (int j = 0; j < faces.length; j++) {
                    ssim[j] = Ssim.of(data.faces()[faces[j]], recon.get(j), FaceCrops.WIDTH, FaceCrops.HEIGHT);
                }
                csv.add(String.format(Locale.ROOT, "%s,%s,%s,%.4f,%.4f,%.4f", mode.wireName(), fmt(epsConfigured),
                        fmt(perFace), Arrays.stream(ssim).average().orElse(0), Arrays.stream(ssim).min().orElse(0),
                        Arrays.stream(ssim).max().orElse(0)));
                rows.add(row(recon));
            }
        }
        Files.write(out.resolve("peep-" + name + "-reconstruction.csv"), csv);
        Mat grid = new Mat();
        Core.vconcat(rows, grid);
        Mat big = new Mat();
        Imgproc.resize(grid, big, new Size(grid.cols() * 2, grid.rows() * 2), 0, 0, Imgproc.INTER_NEAREST);
        Imgcodecs.imwrite(out.resolve("peep-" + name + "-reconstruction.png").toString(), big);
    }

    /** Wall time to train each MLP architecture once on this dataset's 70% split (clean projections). */
    void trainingTime(int nc) {
        StratifiedSplit split = StratifiedSplit.of(data.labels(), data.names().size(), 0.7, -1, 1);
        EigenBasis basis = EigenBasis.fit(StratifiedSplit.select(data.faces(), split.train()), nc, FaceCrops.WIDTH, FaceCrops.HEIGHT);
        float[][] x = release(basis, null, split.train());
        int[] y = Arrays.stream(split.train()).map(i -> data.labels()[i]).toArray();
        for (String arch : List.of("small", "peep-paper")) {
            MlpOptions o = arch.equals("small") ? MlpOptions.small() : MlpOptions.peepPaper();
            long t0 = System.nanoTime();
            try (MlpModel m = new MlpTrainer().train(x, y, data.names().size(), o)) {
                System.err.printf(Locale.ROOT, "%s: training %s on %d x %d: %.1f s (%d epochs)%n", name, arch, x.length,
                        nc, (System.nanoTime() - t0) / 1e9, o.epochs());
            }
        }
    }

    /** Inverts the [0,1] scaling of a released vector with the basis' fixed bounds (post-processing). */
    static double[] unscale(EigenBasis basis, double[] scaled) {
        double[] c = new double[scaled.length];
        for (int k = 0; k < c.length; k++) {
            c[k] = basis.lower(k) + scaled[k] * (basis.upper(k) - basis.lower(k));
        }
        return c;
    }

    private static double[] clamp01(double[] x) {
        return Arrays.stream(x).map(v -> Math.max(0, Math.min(1, v))).toArray();
    }

    private static Mat row(List<double[]> faces) {
        List<Mat> tiles = new ArrayList<>();
        for (double[] f : faces) {
            Mat m = new Mat(FaceCrops.HEIGHT, FaceCrops.WIDTH, CvType.CV_64FC1);
            m.put(0, 0, f);
            Mat u8 = new Mat();
            m.convertTo(u8, CvType.CV_8UC1, 255);
            tiles.add(u8);
        }
        Mat row = new Mat();
        Core.hconcat(tiles, row);
        return row;
    }

    /** Mean and sd over seeds of one configuration; mode null means without privacy. */
    Point run(SensitivityMode mode, double epsilon, int nc, int perPerson) {
        int classes = data.names().size();
        double[] p = new double[seeds];
        double[] r = new double[seeds];
        double[] f = new double[seeds];
        double epsFace = Double.POSITIVE_INFINITY;
        double epsCoord = Double.POSITIVE_INFINITY;
        for (int s = 0; s < seeds; s++) {
            StratifiedSplit split = StratifiedSplit.of(data.labels(), classes, 0.7, perPerson, 1000L + s);
            EigenBasis basis = EigenBasis.fit(StratifiedSplit.select(data.faces(), split.train()), nc, FaceCrops.WIDTH, FaceCrops.HEIGHT);
            PeepMechanism peep = mode == null ? null : new PeepMechanism(basis, mode, epsilon, laplace(s));
            float[][] xtr = release(basis, peep, split.train());
            float[][] xte = release(basis, peep, split.test());
            int[] ytr = Arrays.stream(split.train()).map(i -> data.labels()[i]).toArray();
            int[] yte = Arrays.stream(split.test()).map(i -> data.labels()[i]).toArray();
            try (MlpModel model = new MlpTrainer().train(xtr, ytr, classes, mlp.withSeed(s + 1))) {
                Metrics m = Metrics.weighted(yte, model.predict(xte), classes);
                p[s] = m.precision();
                r[s] = m.recall();
                f[s] = m.f1();
            }
            if (peep != null) {
                epsFace = peep.epsilonPerFace();
                epsCoord = peep.epsilonPerCoordinate();
            }
            progress.step(name + " " + (mode == null ? "none" : mode.wireName()) + " eps=" + fmt(epsilon) + " nc=" + nc
                    + (perPerson > 0 ? " k=" + perPerson : ""));
        }
        return new Point(mode == null ? "none" : mode.wireName(), epsCoord, epsFace, nc, perPerson, mean(p), mean(r),
                mean(f), sd(f));
    }

    private float[][] release(EigenBasis basis, PeepMechanism peep, int[] idx) {
        float[][] x = new float[idx.length][];
        for (int i = 0; i < idx.length; i++) {
            double[] face = data.faces()[idx[i]];
            double[] v = peep == null ? basis.clampAndScale(basis.project(face)) : peep.perturb(face).vector();
            x[i] = new float[v.length];
            for (int k = 0; k < v.length; k++) {
                x[i][k] = (float) v[k];
            }
        }
        return x;
    }

    /** A reproducible stream per seed, so a rerun gives the same CSV; production uses a DRBG. */
    private static SecureLaplace laplace(int seed) {
        return new SecureLaplace(SeededRandom.of(0x5eedL + seed));
    }

    private static double configured(Point p) {
        return p.mode().startsWith("paper") ? p.epsilonPerCoordinate() : p.epsilonPerFace();
    }

    private static Charts.Series series(String label, List<Point> ps, boolean perFaceAxis) {
        return new Charts.Series(label,
                ps.stream().mapToDouble(p -> perFaceAxis ? p.epsilonPerFace() : configured(p)).toArray(),
                ps.stream().mapToDouble(Point::f1).toArray(), ps.stream().mapToDouble(Point::f1Sd).toArray());
    }

    private void writeCsv(Path file, List<Point> points, boolean sweep) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file))) {
            w.println("mode,epsilon_per_coordinate,epsilon_per_face,seed_count,precision_mean,recall_mean,f1_mean,f1_sd"
                    + (sweep ? ",nc,images_per_person" : ""));
            for (Point p : points) {
                w.printf(Locale.ROOT, "%s,%s,%s,%d,%.4f,%.4f,%.4f,%.4f%s%n", p.mode(), fmt(p.epsilonPerCoordinate()),
                        fmt(p.epsilonPerFace()), seeds, p.precision(), p.recall(), p.f1(), p.f1Sd(),
                        sweep ? "," + p.nc() + "," + (p.perPerson() > 0 ? p.perPerson() : "") : "");
            }
        }
    }

    private static double[] concat(double[] a, double b) {
        double[] out = Arrays.copyOf(a, a.length + 1);
        out[a.length] = b;
        return out;
    }

    private static double mean(double[] a) {
        return Arrays.stream(a).average().orElse(Double.NaN);
    }

    private static double sd(double[] a) {
        double m = mean(a);
        return a.length < 2 ? 0 : Math.sqrt(Arrays.stream(a).map(x -> (x - m) * (x - m)).sum() / (a.length - 1));
    }
}
