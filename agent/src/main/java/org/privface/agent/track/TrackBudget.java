package org.privface.agent.track;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.privface.privacy.Privacy;
import org.privface.privacy.SpentEpsilon;
import org.privface.privacy.gdp.MuGdp;

/**
 * The per-track privacy ledger: decides whether a detection may be released and at what ε.
 *
 * <p>Guarantee: ε_track per appearance per window. A track's window starts at its first grant; once the window has
 * elapsed the track gets a fresh allowance. A person who leaves and comes back is a new track with a new
 * allowance: per-track accounting cannot link appearances (that would need recognition, which is what we protect
 * against), so this is a limit of the design, not a bug.
 *
 * <p>Spending is recorded when a grant is made, before the noise is drawn, so a crash can only under-release.
 * Composition is basic (plain sum of pure ε-DP releases) and lives in {@link #compose} alone. When the ledger is
 * full, tracks whose window has elapsed are dropped (they would get a fresh allowance anyway); if none has, a new
 * track is refused rather than evicting live state, which would reset someone's budget. Thread-safe.
 */
public final class TrackBudget {

    public static final int DEFAULT_MAX_TRACKS = 4096;

    /**
     * One permitted release.
     *
     * @param epsilonForThisRelease the share of the cap asked for: the ε the mechanism is calibrated
     *                              to; the window is charged what that mechanism states ({@link #charging})
     * @param releaseIndex         1-based index of this release within the track's window
     * @param epsilonSpentInWindow composed ε of the window, this release included
     * @param epsilonBudget        the track cap ε_track
     */
    public record Grant(String trackId, double epsilonForThisRelease, int releaseIndex, double epsilonSpentInWindow,
                        double epsilonBudget, Instant windowStart, String policy, double muForThisRelease) {
    }

    /**
     * How a track's releases compose. PURE_EPSILON: pure ε-DP releases, summed. GAUSSIAN_DP:
     * μ-GDP releases, composed as √(Σμ²) (Dong, Roth, Su), with ε stated at a fixed δ; the ledger
     * then counts μ², which composes by plain addition, so the same cap logic serves both.
     */
    public enum Accounting { PURE_EPSILON, GAUSSIAN_DP }

    /** Counters since start; one ledger has one policy, so these are that policy's counters. */
    public record Stats(String policy, long grants, long refusals, long refusedForCapacity, double epsilonSpent,
                        int tracksHeld) {
    }

    private static final class Account {
        Instant windowStart;
        int releases;
        double spent;
        boolean everGranted;
        long lastGrantFrame;
    }

    private final BudgetPolicy policy;
    private final double epsilonTrack;
    private final Accounting accounting;
    private final double delta;
    /** The ledger's units: ε for PURE_EPSILON, μ² for GAUSSIAN_DP. */
    private final double capUnits;
    private final double unitsPerRelease;
    /** ε charged for one release; for GAUSSIAN_DP a bisection, so computed once here, not per grant. */
    private final double epsilonPerRelease;
    /** The share of the cap one release asks for: the ε its mechanism is calibrated to (≥ the charge). */
    private final double epsilonAskedPerRelease;
    private final Duration window;
    private final int maxTracks;
    private final Map<String, Account> accounts = new HashMap<>();
    private long grants;
    private long refusals;
    private long refusedForCapacity;
    private double epsilonSpent;

    public TrackBudget(BudgetPolicy policy, double epsilonTrack, Duration window) {
        this(policy, epsilonTrack, window, DEFAULT_MAX_TRACKS);
    }

    public TrackBudget(BudgetPolicy policy, double epsilonTrack, Duration window, int maxTracks) {
        this(policy, epsilonTrack, window, maxTracks, Accounting.PURE_EPSILON, 0);
    }

    /**
     * @param delta the δ at which a GAUSSIAN_DP track's ε is stated; ignored for PURE_EPSILON
     */
    public TrackBudget(BudgetPolicy policy, double epsilonTrack, Duration window, int maxTracks, Accounting accounting,
                       double delta) {
        this(policy, epsilonTrack, window, maxTracks, accounting, delta, Double.NaN);
    }

    /**
     * The same ledger, each grant charged the ε the release's mechanism states (its exact spend
     * rounded up, {@link org.privface.privacy.SpentEpsilon}) instead of the share asked for: the
     * stated ε may be a little below the share (HammingCap's p is an integer ratio), never above.
     * PURE_EPSILON only; a GAUSSIAN_DP ledger charges μ², which its mechanism states as asked.
     */
    public TrackBudget charging(double statedEpsilonPerRelease) {
        if (accounting != Accounting.PURE_EPSILON) {
            throw new IllegalStateException("only a pure-ε ledger charges a stated ε per release");
        }
        SpentEpsilon.checkWithin(Privacy.checkEpsilon(statedEpsilonPerRelease), unitsPerRelease);
        return new TrackBudget(policy, epsilonTrack, window, maxTracks, accounting, delta, statedEpsilonPerRelease);
    }

    private TrackBudget(BudgetPolicy policy, double epsilonTrack, Duration window, int maxTracks, Accounting accounting,
                        double delta, double stated) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.epsilonTrack = Privacy.checkEpsilon(epsilonTrack);
        policy.checkFor(epsilonTrack);
        this.accounting = Objects.requireNonNull(accounting, "accounting");
        this.delta = accounting == Accounting.GAUSSIAN_DP ? Privacy.checkDelta(delta) : 0;
        if (accounting == Accounting.PURE_EPSILON) {
            capUnits = epsilonTrack;
            unitsPerRelease = Double.isNaN(stated) ? policy.epsilonPerRelease(epsilonTrack) : stated;
        } else {
            double muTrack = MuGdp.muFor(epsilonTrack, delta);
            capUnits = muTrack * muTrack;
            // every-n fixes ε per release; the others split the cap, which in μ² units splits μ as 1/√k.
            double mu = policy instanceof BudgetPolicy.EveryN e ? MuGdp.muFor(e.epsilonRelease(), delta) : Double.NaN;
            unitsPerRelease = Double.isNaN(mu) ? policy.epsilonPerRelease(capUnits) : mu * mu;
        }
        this.epsilonPerRelease = epsilonOf(unitsPerRelease);
        this.epsilonAskedPerRelease = accounting == Accounting.PURE_EPSILON ? policy.epsilonPerRelease(epsilonTrack)
                : epsilonPerRelease;
        Objects.requireNonNull(window, "window");
        if (window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("budget window must be positive, was " + window);
        }
        if (maxTracks < 1) {
            throw new IllegalArgumentException("maxTracks must be >= 1, was " + maxTracks);
        }
        this.window = window;
        this.maxTracks = maxTracks;
    }

    /**
     * Composed ε of a window after one more release: basic composition, the plain sum. The single place to swap
     * in a tighter accountant.
     */
    public static double compose(double epsilonSpentSoFar, double epsilonNext) {
        return epsilonSpentSoFar + epsilonNext;
    }

    /**
     * Asks to release the detection of {@code trackId} seen in its {@code frameIndexInTrack}-th frame (as
     * {@link IouTracker.Tracked#framesSeen()}). A grant is recorded as spent before it is returned.
     */
    public synchronized Optional<Grant> request(String trackId, long frameIndexInTrack, Instant now) {
        Objects.requireNonNull(trackId, "trackId");
        Objects.requireNonNull(now, "now");
        if (frameIndexInTrack < 0) {
            throw new IllegalArgumentException("frameIndexInTrack must be >= 0, was " + frameIndexInTrack);
        }
        Account a = accounts.get(trackId);
        if (a == null) {
            if (accounts.size() >= maxTracks) {
                accounts.values().removeIf(x -> windowElapsed(x, now));
            }
            if (accounts.size() >= maxTracks) {
                refusals++;
                refusedForCapacity++;
                return Optional.empty();
            }
            a = new Account();
        } else if (windowElapsed(a, now)) {
            a.windowStart = null;
            a.releases = 0;
            a.spent = 0;
        }

        // Spacing carries across windows: it is a rate per track, not part of the allowance.
        boolean spaced = !a.everGranted || frameIndexInTrack - a.lastGrantFrame >= policy.minFrameSpacing();
        double composed = compose(a.spent, unitsPerRelease);
        int index = a.releases + 1;
        if (!spaced || index > policy.maxReleasesPerWindow() || composed > capUnits + roundingSlack(index)) {
            refusals++;
            return Optional.empty();
        }

        if (a.windowStart == null) {
            a.windowStart = now;
        }
        a.releases = index;
        a.spent = composed;
        a.everGranted = true;
        a.lastGrantFrame = frameIndexInTrack;
        accounts.putIfAbsent(trackId, a);
        grants++;
        epsilonSpent += epsilonPerRelease;
        double spentInWindow = accounting == Accounting.PURE_EPSILON ? composed
                : Math.min(epsilonOf(composed), epsilonTrack);
        return Optional.of(new Grant(trackId, epsilonAskedPerRelease, index, spentInWindow,
                epsilonTrack, a.windowStart, policy.name(),
                accounting == Accounting.GAUSSIAN_DP ? Math.sqrt(unitsPerRelease) : Double.NaN));
    }

    /**
     * Whether {@link #request} would grant now, spending nothing: lets the person ledger's refusal be
     * told apart from the track's own (a track its own budget refuses is held by nothing else).
     */
    public synchronized boolean wouldGrant(String trackId, long frameIndexInTrack, Instant now) {
        Account a = accounts.get(trackId);
        if (a == null) {
            return accounts.size() < maxTracks || accounts.values().stream().anyMatch(x -> windowElapsed(x, now));
        }
        boolean fresh = windowElapsed(a, now);
        boolean spaced = !a.everGranted || frameIndexInTrack - a.lastGrantFrame >= policy.minFrameSpacing();
        int index = fresh ? 1 : a.releases + 1;
        double composed = compose(fresh ? 0 : a.spent, unitsPerRelease);
        return spaced && index <= policy.maxReleasesPerWindow() && composed <= capUnits + roundingSlack(index);
    }

    /** Drops an ended track. Only for tracks that will never be requested again (the tracker's ids are unique). */
    public synchronized void forget(String trackId) {
        accounts.remove(trackId);
    }

    public synchronized Stats stats() {
        return new Stats(policy.name(), grants, refusals, refusedForCapacity, epsilonSpent, accounts.size());
    }

    public BudgetPolicy policy() {
        return policy;
    }

    public double epsilonTrack() {
        return epsilonTrack;
    }

    public Duration window() {
        return window;
    }

    /** The cap in ledger units (ε, or μ² for GAUSSIAN_DP): what a ledger above the track's charges against. */
    public double capUnits() {
        return capUnits;
    }

    /** The ledger units one grant spends. */
    public double unitsPerRelease() {
        return unitsPerRelease;
    }

    /** ε of an amount of ledger units: itself, or the ε at δ of μ = √units, at most the cap. */
    public double epsilonOfUnits(double units) {
        return accounting == Accounting.PURE_EPSILON ? units : Math.min(epsilonOf(units), epsilonTrack);
    }

    /** Two ulps of the cap per release: the rounding a sum of k equal shares may carry past the cap. */
    public double roundingSlackFor(int releases) {
        return roundingSlack(releases);
    }

    /** ε of an amount of ledger units: itself, or the ε at δ of μ = √units. */
    private double epsilonOf(double units) {
        return accounting == Accounting.PURE_EPSILON ? units : MuGdp.epsilonFor(Math.sqrt(units), delta);
    }

    public Accounting accounting() {
        return accounting;
    }

    private boolean windowElapsed(Account a, Instant now) {
        return a.windowStart != null && Duration.between(a.windowStart, now).compareTo(window) >= 0;
    }

    /**
     * Floating-point sums of k shares of ε/k can land a few ulps above ε; without this the k-th share of max-k
     * would be refused. Two ulps of the cap per release bounds that rounding and nothing more.
     */
    private double roundingSlack(int releases) {
        return 2.0 * releases * Math.ulp(capUnits);
    }
}
