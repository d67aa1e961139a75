package org.privface.privacy.gdp;

import java.util.Map;
import java.util.TreeMap;

import org.privface.privacy.Privacy;

/**
 * The privacy ledger of one track (or one person) whose releases mix pure-ε Laplace mechanisms
 * (PEEP, RDP) and μ-GDP Gaussian ones. Gaussian releases compose exactly in μ (√Σμ²); the two
 * parts are joined by the conservative rule of {@link MuGdp#combinedEpsilon}. Thread-safe.
 */
public final class GaussianAccountant {
    private double epsilonLaplace;
    private int laplaceReleases;
    private double sumMuSquared;
    /** μ → number of Gaussian releases at that μ: what {@link #epsilonBasicSum} needs, in little memory. */
    private final Map<Double, Integer> gaussianByMu = new TreeMap<>();
    private int gaussianReleases;

    /** Records one ε-DP (Laplace) release. */
    public synchronized void addLaplace(double epsilon) {
        Privacy.checkEpsilon(epsilon);
        epsilonLaplace += epsilon;
        laplaceReleases++;
    }

    /** Records one μ-GDP (Gaussian) release. */
    public synchronized void addGaussian(double mu) {
        Privacy.checkMu(mu);
        sumMuSquared += mu * mu;
        gaussianByMu.merge(mu, 1, Integer::sum);
        gaussianReleases++;
    }

    /** √(Σ μ_i²) over the Gaussian releases: the exact GDP composition; 0 when there were none. */
    public synchronized double muTotal() {
        return Math.sqrt(sumMuSquared);
    }

    /** Σ ε over the Laplace releases. */
    public synchronized double epsilonLaplace() {
        return epsilonLaplace;
    }

    public synchronized int laplaceReleases() {
        return laplaceReleases;
    }

    public synchronized int gaussianReleases() {
        return gaussianReleases;
    }

    /** Both totals at one instant. */
    public synchronized MuGdp.Mixed snapshot() {
        return new MuGdp.Mixed(epsilonLaplace, Math.sqrt(sumMuSquared));
    }

    /**
     * The ledger's ε at δ: Σ ε_laplace + {@link MuGdp#epsilonFor}(μ_total, δ). Conservative only in
     * how the pure part is joined (see {@link MuGdp#combinedEpsilon}); the Gaussian part is tight.
     */
    public synchronized double epsilon(double delta) {
        return MuGdp.combinedEpsilon(epsilonLaplace, Math.sqrt(sumMuSquared), delta);
    }

    /**
     * What the same ledger costs without GDP composition, for comparison: each of the n Gaussian
     * releases is converted on its own to (ε_i, δ/n)-DP with ε_i = epsilonFor(μ_i, δ/n), and
     * everything is summed by basic composition, Σ ε_laplace + Σ ε_i at total δ. Splitting δ evenly
     * is the usual choice (and the best one for equal μ_i); the advanced composition theorem would
     * do better than this sum, GDP composition better still, and exactly.
     */
    public synchronized double epsilonBasicSum(double delta) {
        Privacy.checkDelta(delta);
        double total = epsilonLaplace;
        if (gaussianReleases == 0) {
            return total;
        }
        double perRelease = delta / gaussianReleases;
        for (Map.Entry<Double, Integer> e : gaussianByMu.entrySet()) {
            total += e.getValue() * MuGdp.epsilonFor(e.getKey(), perRelease);
        }
        return total;
    }
}
