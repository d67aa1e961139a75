package org.privface.evaluation.papers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
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
import org.privface.privacy.aggregate.KNormGradient;
import org.privface.privacy.aggregate.PrivateBasis;
import org.privface.privacy.aggregate.PrivateCovariance;
import org.privface.privacy.aggregate.PrivateMean;
import org.privface.privacy.aggregate.Sphere;
import org.privface.privacy.gdp.MuGdp;

/**
 * Central-DP site aggregates (issue 9 part 3) on the same faces as PEEP and RDP: a gateway, as
 * trusted curator of its site's training faces, publishes
 * <ul>
 *   <li>its mean face, by the Gaussian mechanism (ε at δ = 1e-5) or the K-norm gradient mechanism (pure ε);</li>
 *   <li>its eigenbasis from a private mean and second moment (μ-GDP), scored by the subspace it
 *       recovers and by the reconstruction error of held-out faces;</li>
 *   <li>the Fréchet mean of its L2-normalised eigen-features on the unit sphere, by KNG.</li>
 * </ul>
 * Faces are downsampled to 24×32 so a d×d second moment stays small. Clip radii are public
 * constants, never read from the faces. {@code --only} picks parts: {@code aggregates} (the above),
 * {@code soto-table1} ({@link SotoGdpTable}) and {@code kng-fig1} ({@link KngSphereFigure}), the
 * papers' own experiments (issue 21).
 *
 * <pre>mvn -B -q -Paggregate-eval install -DskipTests</pre>
 */
public final class AggregateEvaluation {
    static final FaceCrops.Shape SHAPE = new FaceCrops.Shape(24, 32);
    static final double[] EPSILONS = {0.1, 0.3, 1, 3, 10, 30};
    static final double[] MUS = {0.5, 1, 2, 4, 8, 16, 64};
    static final int NC = 16;
    /** Public clip radius about the grey face 0.5: a fraction of the largest possible norm 0.5·√d. */
    static final double TAU_FRACTION = 0.3;
    /** Geodesic radius for the sphere mean: within the π/4 that KNG's sensitivity needs. */
    static final double SPHERE_RADIUS = Math.PI / 8;
    static final double DELTA = 1e-5;

    public static void main(String[] args) throws Exception {
        org.privface.agent.dataset.BadDataset.exitOnError(() -> run(args));
    }

    /** The command; a bad data-set folder ends it with a message naming the file (exit status 2), not a stack trace. */
    static void run(String[] args) throws Exception {
        Map<String, String> opt = EvalOptions.parse(Map.of("--datasets", FaceDatasets.root().map(Path::toString)
                .orElse("../shared/datasets"), "--out", "docs/results", "--reps", "5", "--sets", "lfw5,orl",
                "--only", "aggregates,soto-table1,kng-fig1"), args);
        List<String> only = Arrays.asList(opt.get("--only").split(","));
        System.setProperty("java.awt.headless", "true");
        OpenCv.load();
        Path out = Files.createDirectories(Path.of(opt.get("--out")));
        int reps = Integer.parseInt(opt.get("--reps"));
        for (String set : opt.get("--sets").split(",")) {
            Path dir = Path.of(opt.get("--datasets")).resolve(set);
            if (!Files.isDirectory(dir)) {
                System.err.println("skipping " + set + ": " + dir + " not found (set FACE_DATASETS or --datasets)");
                continue;
            }
            if (only.contains("aggregates")) {
                LabelledFaces data = set.startsWith("orl") ? FaceDatasets.orl(dir, SHAPE) : FaceDatasets.lfw(dir, SHAPE);
                run(set, data, reps, out);
            }
            if (only.contains("soto-table1")) {
                // Soto et al.'s Table 1 on all of the set's faces at the paper-era 47x62 crop.
                SotoGdpTable.run(set, set.startsWith("orl") ? FaceDatasets.orl(dir) : FaceDatasets.lfw(dir), 20, out);
            }
        }
        if (only.contains("kng-fig1")) {
            KngSphereFigure.run(200, out);
        }
    }

    static void run(String set, LabelledFaces data, int reps, Path out) throws IOException {
        StratifiedSplit split = StratifiedSplit.of(data.labels(), data.names().size(), 0.7, Integer.MAX_VALUE, 7);
        double[][] site = StratifiedSplit.select(data.faces(), split.train());
        double[][] heldOut = StratifiedSplit.select(data.faces(), split.test());
        int d = SHAPE.pixels();
        int n = site.length;
        double[] centre = new double[d];
        Arrays.fill(centre, 0.5);
        double tau = TAU_FRACTION * 0.5 * Math.sqrt(d);
        double[] trueMean = clippedMean(site, centre, tau);
        double scale = norm(minus(trueMean, centre));
        Progress progress = new Progress(System.err, reps * (EPSILONS.length * 3 + MUS.length));
        List<String> rows = new ArrayList<>();
        rows.add("statistic,mechanism,epsilon,delta,mu,error_mean,error_sd,n,d");

        // 1. Private mean face: Gaussian (ε at δ) against K-norm gradient (pure ε); error relative to ‖m − c‖.
        PrivateMean gaussian = new PrivateMean();
        KNormGradient kng = new KNormGradient();
        double[][] meanErr = new double[2][EPSILONS.length];
        double[][] meanSd = new double[2][EPSILONS.length];
        for (int e = 0; e < EPSILONS.length; e++) {
            double eps = EPSILONS[e];
            double mu = MuGdp.muFor(eps, DELTA);
            double[] g = new double[reps];
            double[] k = new double[reps];
            for (int r = 0; r < reps; r++) {
                g[r] = norm(minus(gaussian.release(site, centre, tau, mu).mean(), trueMean)) / scale;
                progress.step(set + " mean gaussian eps " + eps);
                k[r] = norm(minus(kng.releaseMean(site, centre, tau, eps), trueMean)) / scale;
                progress.step(set + " mean kng eps " + eps);
            }
            meanErr[0][e] = mean(g);
            meanSd[0][e] = sd(g);
            meanErr[1][e] = mean(k);
            meanSd[1][e] = sd(k);
            rows.add(row("mean-face", "gaussian", eps, DELTA, mu, g, n, d));
            rows.add(row("mean-face", "kng-euclidean", eps, 0, Double.NaN, k, n, d));
        }

        // 2. Private eigenbasis against the clean one fitted on the same (clipped) faces.
        EigenBasis clean = EigenBasis.fit(site, NC, SHAPE.width(), SHAPE.height());
        double cleanRecon = reconstructionError(heldOut, clean.mean(), components(clean));
        PrivateCovariance cov = new PrivateCovariance();
        double[] overlap = new double[MUS.length];
        double[] overlapSd = new double[MUS.length];
        double[] recon = new double[MUS.length];
        for (int m = 0; m < MUS.length; m++) {
            double mu = MUS[m];
            // Split μ evenly between the mean and the second moment: √(μ_m² + μ_S²) = μ.
            double part = mu / Math.sqrt(2);
            double[] o = new double[reps];
            double[] rec = new double[reps];
            for (int r = 0; r < reps; r++) {
                PrivateMean.Release mr = gaussian.release(site, centre, tau, part);
                PrivateCovariance.Release cr = cov.release(site, centre, tau, part);
                PrivateBasis pb = PrivateBasis.fit(mr, cr, NC);
                double[][] comps = new double[NC][];
                for (int k2 = 0; k2 < NC; k2++) {
                    comps[k2] = pb.component(k2);
                }
                o[r] = subspaceOverlap(comps, components(clean));
                rec[r] = reconstructionError(heldOut, pb.mean(), comps) / cleanRecon;
                progress.step(set + " basis mu " + mu);
            }
            overlap[m] = mean(o);
            overlapSd[m] = sd(o);
            recon[m] = mean(rec);
            rows.add(row("basis-overlap", "gaussian-mean+cov", MuGdp.epsilonFor(mu, DELTA), DELTA, mu, o, n, d));
            rows.add(row("basis-reconstruction-ratio", "gaussian-mean+cov", MuGdp.epsilonFor(mu, DELTA), DELTA, mu, rec, n, d));
        }

        // 3. Fréchet mean of L2-normalised eigen-features on the sphere, by KNG (MH sampler, approximate).
        double[] pole = new double[NC];
        pole[0] = 1; // public centre: the first eigen-axis
        double[][] points = new double[site.length][];
        for (int i = 0; i < site.length; i++) {
            points[i] = Sphere.clipToBall(pole, Sphere.normalize(plusFirst(clean.project(site[i]))), SPHERE_RADIUS);
        }
        double[] frechet = Sphere.frechetMean(points, pole, 200, 1e-12);
        double[] sphereErr = new double[EPSILONS.length];
        double[] sphereSd = new double[EPSILONS.length];
        for (int e = 0; e < EPSILONS.length; e++) {
            double eps = EPSILONS[e];
            double[] g = new double[reps];
            for (int r = 0; r < reps; r++) {
                g[r] = Sphere.distance(kng.releaseSphereMean(points, pole, SPHERE_RADIUS, eps), frechet);
                progress.step(set + " sphere kng eps " + eps);
            }
            sphereErr[e] = mean(g);
            sphereSd[e] = sd(g);
            rows.add(row("sphere-frechet-mean", "kng-sphere", eps, 0, Double.NaN, g, n, NC));
        }

        Path csv = out.resolve("aggregates-" + set + ".csv");
        Files.write(csv, rows);
        Charts.line(out.resolve("aggregates-mean-" + set + ".png"),
                set + ": private mean face (n = " + n + ", d = " + d + "), error / ||mean - 0.5||", "epsilon (log)",
                "relative L2 error (log)", true, Charts.YAxis.LOG, Styler.LegendPosition.InsideNE, List.of(
                        new Charts.Series("Gaussian, delta 1e-5", EPSILONS, meanErr[0], meanSd[0]),
                        new Charts.Series("K-norm gradient (pure epsilon)", EPSILONS, meanErr[1], meanSd[1]),
                        new Charts.Series("KNG on the sphere: geodesic error of the feature mean (rad)", EPSILONS,
                                sphereErr, sphereSd)));
        Charts.line(out.resolve("aggregates-basis-" + set + ".png"),
                set + ": private eigenbasis (" + NC + " components) from a mu-GDP mean and second moment", "mu (log)",
                "overlap with the clean subspace", true, Charts.YAxis.UNIT, Styler.LegendPosition.InsideSE, List.of(
                        new Charts.Series("subspace overlap ||U'^T U||^2 / nc", MUS, overlap, overlapSd)));
        System.out.println("wrote " + csv);
        rows.forEach(System.out::println);
        System.out.printf(Locale.ROOT, "basis reconstruction error ratio (private / clean) by mu %s: %s%n",
                Arrays.toString(MUS), Arrays.toString(recon));
    }

    /** The eigen-features shifted one unit along the first axis, so normalising keeps them near the pole. */
    private static double[] plusFirst(double[] c) {
        double[] v = c.clone();
        double s = 0;
        for (double x : c) {
            s += x * x;
        }
        v[0] += Math.sqrt(s) * 2;
        return v;
    }

    private static double[][] components(EigenBasis b) {
        double[][] u = new double[b.dimension()][];
        for (int k = 0; k < u.length; k++) {
            u[k] = b.component(k);
        }
        return u;
    }

    /** ‖U′ᵀU‖_F² / nc: 1 when the two subspaces coincide, about nc/d at random. */
    static double subspaceOverlap(double[][] a, double[][] b) {
        double s = 0;
        for (double[] x : a) {
            for (double[] y : b) {
                double dot = 0;
                for (int j = 0; j < x.length; j++) {
                    dot += x[j] * y[j];
                }
                s += dot * dot;
            }
        }
        return s / a.length;
    }

    static double reconstructionError(double[][] faces, double[] mean, double[][] comps) {
        double total = 0;
        for (double[] f : faces) {
            double[] x = minus(f, mean);
            double[] r = x.clone();
            for (double[] u : comps) {
                double dot = 0;
                for (int j = 0; j < x.length; j++) {
                    dot += x[j] * u[j];
                }
                for (int j = 0; j < x.length; j++) {
                    r[j] -= dot * u[j];
                }
            }
            total += norm(r) * norm(r);
        }
        return total / faces.length;
    }

    private static double[] clippedMean(double[][] data, double[] centre, double tau) {
        double[] m = centre.clone();
        for (double[] v : data) {
            double[] x = PrivateMean.clip(v, centre, tau);
            for (int j = 0; j < m.length; j++) {
                m[j] += x[j] / data.length;
            }
        }
        return m;
    }

    private static String row(String stat, String mech, double eps, double delta, double mu, double[] v, int n, int d) {
        return String.format(Locale.ROOT, "%s,%s,%.4g,%s,%s,%.6g,%.6g,%d,%d", stat, mech, eps, delta == 0 ? "0" : "1e-5",
                Double.isNaN(mu) ? "" : String.format(Locale.ROOT, "%.4g", mu), mean(v), sd(v), n, d);
    }

    private static double[] minus(double[] a, double[] b) {
        double[] c = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            c[i] = a[i] - b[i];
        }
        return c;
    }

    private static double norm(double[] a) {
        double s = 0;
        for (double x : a) {
            s += x * x;
        }
        return Math.sqrt(s);
    }

    private static double mean(double[] v) {
        return Arrays.stream(v).average().orElse(Double.NaN);
    }

    private static double sd(double[] v) {
        double m = mean(v);
        return v.length < 2 ? 0 : Math.sqrt(Arrays.stream(v).map(x -> (x - m) * (x - m)).sum() / (v.length - 1));
    }

}
