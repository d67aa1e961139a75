package org.privface.evaluation.papers;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.knowm.xchart.style.Styler;
import org.privface.evaluation.Charts;
import org.privface.evaluation.Figures;
import org.privface.privacy.Drbg;
import org.privface.privacy.aggregate.KNormGradient;
import org.privface.privacy.aggregate.Sphere;

/**
 * Soto, Bharath, Reimherr, Slavković, Figure 1 (left): the Fréchet mean of n points on the unit
 * sphere S², released at ε = 1 by (i) KNG on the sphere, (ii) the Riemannian Laplace of Reimherr,
 * Bharath and Soto (2021), (iii) the Euclidean Laplace in R³ and (iv) the same projected back onto the
 * sphere; utility is the mean Euclidean distance to the Fréchet mean. The paper's data generation is in
 * its supplement, which is not available: here the points are uniform (by area) on the geodesic ball
 * of radius r = π/8 about the north pole.
 */
final class KngSphereFigure {
    /** The supplement's radius is not available; two values either side of where KNG overtakes the projected Laplace. */
    static final double[] RADII = {Math.PI / 16, Math.PI / 8};
    static final double EPSILON = 1;
    static final int[] NS = {10, 20, 50, 100, 200, 500};

    private KngSphereFigure() {
    }

    static void run(int reps, Path out) throws IOException {
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("kng-sphere-figure1.csv")))) {
            csv.println("method,n,epsilon,r,sensitivity,distance_mean,distance_se,reps");
            for (double r : RADII) {
                run(r, reps, csv, out.resolve("kng-sphere-figure1-r" + (int) Math.round(Math.PI / r) + ".png"));
            }
        }
    }

    static void run(double R, int reps, PrintWriter csv, Path png) throws IOException {
        SecureRandom random = Drbg.create(); // test data and the figure's reference baselines
        KNormGradient kng = new KNormGradient();
        double[] pole = {0, 0, 1};
        String[] methods = {"KNG on the sphere", "Laplace on the sphere", "Euclidean Laplace in R3", "Euclidean Laplace projected"};
        double[][] mean = new double[methods.length][NS.length];
        double[][] se = new double[methods.length][NS.length];
        {
            for (int a = 0; a < NS.length; a++) {
                int n = NS[a];
                double[][] dist = new double[methods.length][reps];
                double deltaKng = KNormGradient.sphereSensitivity(n, R);
                double deltaLap = KNormGradient.riemannianLaplaceSensitivity(n, R);
                // The paper's "Euclidean rate" 2r/n; the Fréchet mean on S² can move further (by Δ_Lap), so
                // this baseline is under-noised, as printed.
                double deltaEuc = 2 * R / n;
                for (int rep = 0; rep < reps; rep++) {
                    double[][] data = new double[n][];
                    for (int i = 0; i < n; i++) {
                        double rho = Math.acos(1 - random.nextDouble() * (1 - Math.cos(R)));
                        double phi = 2 * Math.PI * random.nextDouble();
                        data[i] = Sphere.exp(pole, new double[] {rho * Math.cos(phi), rho * Math.sin(phi), 0});
                    }
                    double[] fm = Sphere.frechetMean(data, pole, 1000, 1e-12);
                    double[] k = kng.releaseSphereMean(data, pole, R, EPSILON);
                    double[] l = riemannianLaplace(fm, 2 * deltaLap / EPSILON, random);
                    double[] e = kng.release(fm, deltaEuc, EPSILON);
                    dist[0][rep] = euclid(fm, k);
                    dist[1][rep] = euclid(fm, l);
                    dist[2][rep] = euclid(fm, e);
                    dist[3][rep] = euclid(fm, Sphere.normalize(e));
                }
                double[] deltas = {deltaKng, deltaLap, deltaEuc, deltaEuc};
                for (int m = 0; m < methods.length; m++) {
                    mean[m][a] = Figures.mean(dist[m]);
                    se[m][a] = Figures.sd(dist[m]) / Math.sqrt(reps);
                    csv.printf(Locale.ROOT, "%s,%d,%s,%.6f,%.6g,%.6g,%.3g,%d%n", methods[m], n, Figures.fmt(EPSILON), R,
                            deltas[m], mean[m][a], se[m][a], reps);
                }
                System.err.printf(Locale.ROOT, "kng figure 1: n=%d done%n", n);
            }
        }
        List<Charts.Series> series = new ArrayList<>();
        double[] xs = java.util.Arrays.stream(NS).asDoubleStream().toArray();
        for (int m = 0; m < methods.length; m++) {
            double[] err = se[m].clone();
            for (int a = 0; a < err.length; a++) {
                err[a] *= 2;
            }
            series.add(new Charts.Series(methods[m], xs, mean[m], err));
        }
        Charts.line(png, "Soto et al. Figure 1 (left): Frechet mean on S^2, eps = 1, r = pi/" + Math.round(Math.PI / R),
                "n (log)", "mean Euclidean distance to the Frechet mean (+/- 2 SE)", true, Charts.YAxis.LOG,
                Styler.LegendPosition.InsideNE, series);
    }

    /**
     * Density ∝ exp(−ρ(x, m)/σ) on S²: in geodesic polar coordinates about m the volume is sin ρ dρ dφ,
     * so ρ is drawn from Gamma(2, σ) (density ∝ ρe^{−ρ/σ}) and kept with probability sin ρ/ρ (ρ &lt; π).
     */
    static double[] riemannianLaplace(double[] m, double sigma, SecureRandom random) {
        double rho;
        do {
            rho = -sigma * (Math.log(1 - random.nextDouble()) + Math.log(1 - random.nextDouble()));
        } while (!(rho < Math.PI) || random.nextDouble() >= Math.sin(rho) / rho);
        double[] v = Sphere.tangent(m, new double[] {random.nextGaussian(), random.nextGaussian(), random.nextGaussian()});
        double nv = Math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (int j = 0; j < 3; j++) {
            v[j] *= rho / nv;
        }
        return Sphere.exp(m, v);
    }

    static double euclid(double[] a, double[] b) {
        double s = 0;
        for (int j = 0; j < a.length; j++) {
            s += (a[j] - b[j]) * (a[j] - b[j]);
        }
        return Math.sqrt(s);
    }
}
