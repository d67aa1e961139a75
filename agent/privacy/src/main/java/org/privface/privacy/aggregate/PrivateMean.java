package org.privface.privacy.aggregate;

import org.privface.privacy.gdp.SecureGaussian;

import java.security.SecureRandom;

import org.privface.privacy.Privacy;

/**
 * Central-DP mean of one site's vectors (Gaussian mechanism, μ-GDP): the gateway is the trusted
 * curator of its own site's faces and releases only this aggregate.
 *
 * <p>Neighbouring data sets replace one record; n is public. Each vector v is clipped about a
 * public centre c: x = min(1, τ/‖v − c‖)·(v − c), so ‖x‖ ≤ τ.
 *
 * <p>Proof sketch. Replacing v by v' moves (1/n)Σx by ‖x − x'‖/n ≤ 2τ/n = Δ. The noise is added on
 * a power-of-two grid ({@link SecureGaussian}), whose rounding can add √d·g to the distance,
 * so σ = (Δ + √d·g)/μ, g ≈ (Δ/μ)·2^-20. A Gaussian of scale σ on a statistic of L2 sensitivity
 * σμ is μ-GDP (Dong, Roth and Su 2022, Thm 2.7); adding the public c afterwards is post-processing.
 */
public final class PrivateMean {
    private final SecureGaussian gaussian;

    /** Noise from the JDK's DRBG. */
    public PrivateMean() {
        this.gaussian = new SecureGaussian();
    }

    /** For statistical tests that need a reproducible stream; production uses the default. */
    public PrivateMean(SecureRandom random) {
        this.gaussian = new SecureGaussian(random);
    }

    /**
     * What a site may publish: {@code mean = centre + offset}, where {@code offset} is the noisy
     * mean of the clipped offsets (every entry a multiple of the noise grid).
     */
    public record Release(double[] mean, double[] offset, double[] centre, int n, double tau, double mu, double sigma) {
        public Release {
            mean = mean.clone();
            offset = offset.clone();
            centre = centre.clone();
        }

        @Override
        public double[] mean() {
            return mean.clone();
        }

        @Override
        public double[] offset() {
            return offset.clone();
        }

        @Override
        public double[] centre() {
            return centre.clone();
        }
    }

    /** L2 sensitivity of the mean of n vectors clipped to norm τ, replace-one: 2τ/n. */
    public static double sensitivity(int n, double tau) {
        if (n < 1) {
            throw new IllegalArgumentException("need at least one record, was " + n);
        }
        return 2 * Privacy.checkRadius(tau) / n;
    }

    /** The clipped offset min(1, τ/‖v − c‖)·(v − c); a new array. */
    public static double[] clip(double[] v, double[] centre, double tau) {
        Privacy.checkRadius(tau);
        if (v.length != centre.length) {
            throw new IllegalArgumentException("vector of length " + v.length + ", centre of length " + centre.length);
        }
        double[] x = new double[v.length];
        double norm2 = 0;
        for (int j = 0; j < v.length; j++) {
            x[j] = v[j] - centre[j];
            norm2 += x[j] * x[j];
        }
        if (!Double.isFinite(norm2)) {
            throw new IllegalArgumentException("vector is not finite");
        }
        double norm = Math.sqrt(norm2);
        if (norm > tau) {
            double f = tau / norm;
            for (int j = 0; j < x.length; j++) {
                x[j] *= f;
            }
        }
        return x;
    }

    /** Clipped offsets of every record about the centre, one per row. */
    static double[][] clipAll(double[][] data, double[] centre, double tau) {
        if (data.length < 1) {
            throw new IllegalArgumentException("need at least one record");
        }
        double[][] x = new double[data.length][];
        for (int i = 0; i < data.length; i++) {
            x[i] = clip(data[i], centre, tau);
        }
        return x;
    }

    /** The mean of the vectors clipped to radius τ about the centre, released μ-GDP. */
    public Release release(double[][] data, double[] centre, double tau, double mu) {
        Privacy.checkMu(mu);
        double[][] x = clipAll(data, centre, tau);
        int n = x.length;
        int d = centre.length;
        double[] m = new double[d];
        for (double[] xi : x) {
            for (int j = 0; j < d; j++) {
                m[j] += xi[j];
            }
        }
        for (int j = 0; j < d; j++) {
            m[j] /= n;
        }
        double delta = sensitivity(n, tau);
        double sigma = sigma(delta, mu, d);
        double[] offset = gaussian.addNoise(m, filled(d, sigma));
        double[] mean = new double[d];
        for (int j = 0; j < d; j++) {
            mean[j] = centre[j] + offset[j];
        }
        return new Release(mean, offset, centre, n, tau, mu, SecureGaussian.effectiveSigma(sigma));
    }

    /** The same release about the origin. */
    public Release release(double[][] data, double tau, double mu) {
        if (data.length < 1) {
            throw new IllegalArgumentException("need at least one record");
        }
        return release(data, new double[data[0].length], tau, mu);
    }

    /**
     * σ for μ-GDP at L2 sensitivity Δ over d coordinates: the grid's rounding may add up to
     * {@link SecureGaussian#roundingMu} to μ, so the noise is calibrated to what is left.
     */
    static double sigma(double l2Sensitivity, double mu, int d) {
        double left = mu - SecureGaussian.roundingMu(d);
        if (!(left > 0)) {
            throw new IllegalArgumentException("mu " + mu + " is below the grid's own " + SecureGaussian.roundingMu(d));
        }
        return l2Sensitivity / left;
    }

    static double[] filled(int n, double v) {
        double[] a = new double[n];
        java.util.Arrays.fill(a, v);
        return a;
    }
}
