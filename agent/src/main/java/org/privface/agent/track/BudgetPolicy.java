package org.privface.agent.track;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.privface.privacy.Privacy;

/**
 * How a track's ε budget per window is split into releases. Every policy is homogeneous (each release in a window
 * costs the same ε), limits releases per window, and spaces them a minimum number of track frames apart; the
 * ledger ({@link TrackBudget}) additionally never lets the composed total exceed the cap.
 *
 * <p>Config syntax: {@code once}, {@code max-k:k=3}, {@code max-k:k=3,every=5}, {@code every-n:n=10,epsilon=0.5}
 * (names case-insensitive, '_' accepted for '-'). {@link #spec()} writes the same syntax back.
 */
public sealed interface BudgetPolicy permits BudgetPolicy.Once, BudgetPolicy.MaxK, BudgetPolicy.EveryN {

    /** Short name used in grants and metrics: once, max-k, every-n. */
    String name();

    /** The ε each release costs under a track cap of {@code epsilonTrack}. */
    double epsilonPerRelease(double epsilonTrack);

    /** Most releases in one window; the cap may stop releases earlier. */
    int maxReleasesPerWindow();

    /** Minimum distance in track frames between two releases of the same track. */
    int minFrameSpacing();

    /** Rejects a track cap this policy cannot work under. */
    void checkFor(double epsilonTrack);

    /** Canonical config string; {@link #parse} of it gives an equal policy. */
    String spec();

    /** One release per track per window, at the full track ε. */
    record Once() implements BudgetPolicy {
        @Override
        public String name() {
            return "once";
        }

        @Override
        public double epsilonPerRelease(double epsilonTrack) {
            return epsilonTrack;
        }

        @Override
        public int maxReleasesPerWindow() {
            return 1;
        }

        @Override
        public int minFrameSpacing() {
            return 1;
        }

        @Override
        public void checkFor(double epsilonTrack) {
            Privacy.checkEpsilon(epsilonTrack);
        }

        @Override
        public String spec() {
            return "once";
        }
    }

    /** At most k releases per track per window, each ε_track / k, at least {@code every} track frames apart. */
    record MaxK(int k, int every) implements BudgetPolicy {
        public MaxK {
            if (k < 1) {
                throw new IllegalArgumentException("max-k: k must be >= 1, was " + k);
            }
            if (every < 1) {
                throw new IllegalArgumentException("max-k: every must be >= 1, was " + every);
            }
        }

        @Override
        public String name() {
            return "max-k";
        }

        @Override
        public double epsilonPerRelease(double epsilonTrack) {
            return epsilonTrack / k;
        }

        @Override
        public int maxReleasesPerWindow() {
            return k;
        }

        @Override
        public int minFrameSpacing() {
            return every;
        }

        @Override
        public void checkFor(double epsilonTrack) {
            Privacy.checkEpsilon(epsilonTrack);
            try {
                Privacy.checkEpsilon(epsilonPerRelease(epsilonTrack));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("max-k: ε_track " + epsilonTrack + " / k " + k
                        + " underflows to " + epsilonPerRelease(epsilonTrack), e);
            }
        }

        @Override
        public String spec() {
            return "max-k:k=" + k + ",every=" + every;
        }
    }

    /**
     * A release every n-th frame of the track, each at {@code epsilonRelease}, until the next one would take the
     * composed total past the track cap.
     */
    record EveryN(int n, double epsilonRelease) implements BudgetPolicy {
        public EveryN {
            if (n < 1) {
                throw new IllegalArgumentException("every-n: n must be >= 1, was " + n);
            }
            try {
                Privacy.checkEpsilon(epsilonRelease);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("every-n: " + e.getMessage(), e);
            }
        }

        @Override
        public String name() {
            return "every-n";
        }

        @Override
        public double epsilonPerRelease(double epsilonTrack) {
            return epsilonRelease;
        }

        @Override
        public int maxReleasesPerWindow() {
            return Integer.MAX_VALUE;
        }

        @Override
        public int minFrameSpacing() {
            return n;
        }

        @Override
        public void checkFor(double epsilonTrack) {
            Privacy.checkEpsilon(epsilonTrack);
            if (epsilonRelease > epsilonTrack) {
                throw new IllegalArgumentException("every-n: epsilon per release " + epsilonRelease
                        + " exceeds the track budget " + epsilonTrack + ", so nothing could ever be released");
            }
        }

        @Override
        public String spec() {
            return "every-n:n=" + n + ",epsilon=" + epsilonRelease;
        }
    }

    static BudgetPolicy once() {
        return new Once();
    }

    static BudgetPolicy maxK(int k) {
        return new MaxK(k, 1);
    }

    static BudgetPolicy maxK(int k, int every) {
        return new MaxK(k, every);
    }

    static BudgetPolicy everyN(int n, double epsilonRelease) {
        return new EveryN(n, epsilonRelease);
    }

    /** Parses {@code name[:key=value[,key=value]...]}; see the class comment. */
    static BudgetPolicy parse(String spec) {
        Objects.requireNonNull(spec, "budget policy");
        String s = spec.strip();
        int colon = s.indexOf(':');
        String name = (colon < 0 ? s : s.substring(0, colon)).strip().toLowerCase(Locale.ROOT).replace('_', '-');
        Map<String, String> params = new LinkedHashMap<>();
        if (colon >= 0) {
            for (String part : s.substring(colon + 1).split(",", -1)) {
                int eq = part.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException("budget policy '" + spec + "': malformed parameter '"
                            + part.strip() + "', expected key=value");
                }
                String key = part.substring(0, eq).strip().toLowerCase(Locale.ROOT);
                if (params.put(key, part.substring(eq + 1).strip()) != null) {
                    throw new IllegalArgumentException("budget policy '" + spec + "': parameter '" + key
                            + "' given twice");
                }
            }
        }
        switch (name) {
            case "once":
                allowOnly(spec, name, params, Set.of());
                return once();
            case "max-k":
                allowOnly(spec, name, params, Set.of("k", "every"));
                return maxK(intParam(spec, params, "k", null), intParam(spec, params, "every", 1));
            case "every-n":
                allowOnly(spec, name, params, Set.of("n", "epsilon"));
                return everyN(intParam(spec, params, "n", null), doubleParam(spec, params, "epsilon"));
            default:
                throw new IllegalArgumentException("unknown budget policy '" + spec
                        + "', expected once, max-k:k=K[,every=F] or every-n:n=N,epsilon=E");
        }
    }

    private static void allowOnly(String spec, String name, Map<String, String> params, Set<String> allowed) {
        for (String key : params.keySet()) {
            if (!allowed.contains(key)) {
                throw new IllegalArgumentException("budget policy '" + spec + "': " + name
                        + " takes no parameter '" + key + "'" + (allowed.isEmpty() ? "" : ", only " + allowed));
            }
        }
    }

    private static int intParam(String spec, Map<String, String> params, String key, Integer fallback) {
        String v = params.get(key);
        if (v == null) {
            if (fallback == null) {
                throw new IllegalArgumentException("budget policy '" + spec + "': missing parameter '" + key + "'");
            }
            return fallback;
        }
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("budget policy '" + spec + "': " + key + " must be an integer, was '"
                    + v + "'", e);
        }
    }

    private static double doubleParam(String spec, Map<String, String> params, String key) {
        String v = params.get(key);
        if (v == null) {
            throw new IllegalArgumentException("budget policy '" + spec + "': missing parameter '" + key + "'");
        }
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("budget policy '" + spec + "': " + key + " must be a number, was '"
                    + v + "'", e);
        }
    }
}
