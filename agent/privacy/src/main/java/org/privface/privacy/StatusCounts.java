package org.privface.privacy;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;


/**
 * Counts a status report publishes whose exact value would tell the cloud about faces and about
 * linking and withholding decisions. Each is counted in <b>units</b> (a person where the gateway
 * links, a track where it does not), and a unit adds at most 1 to each counter per cap period
 * (one UTC day by default, aligned to the epoch, so no boundary depends on a face): a person in
 * view for ten minutes, or back twenty times, counts once a day. That caps what one person can
 * move, whatever the frames.
 *
 * <p>Each counter is published as a running total of noisy increments: the first report in a new
 * release window (a minute, aligned to the epoch) releases what it grew by since the last release
 * plus exact discrete Laplace noise P(k) ∝ exp(−|k|/t) ({@link ExactCoins#discreteLaplace}), and
 * every report until the next window repeats the same totals. A unit's whole contribution in a cap
 * period is at most 1 per counter, spread over that period's releases, so the releases of one
 * period are (counters / t)-DP per unit; a window of any length up to a day meets at most two
 * periods. The exact values stay in the gateway's authenticated local report. Thread-safe.
 */
public final class StatusCounts {
    /** Releases once a minute: the noise of a day's totals is a sum of 1440 draws. */
    public static final Duration DEFAULT_RELEASE_EVERY = Duration.ofMinutes(1);
    /** A unit counts at most once per counter per UTC day. */
    public static final Duration DEFAULT_CAP_PERIOD = Duration.ofDays(1);
    /** t = 1: ε = 1 per unit per counter per cap period. */
    public static final long DEFAULT_SCALE = 1;

    private final Duration releaseEvery;
    private final Duration capPeriod;
    private final long scale;
    private final String unit;
    private final SecureRandom random;
    private final Map<String, Long> exact = new LinkedHashMap<>();
    private final Map<String, Long> releasedExact = new LinkedHashMap<>();
    private final Map<String, Long> published = new LinkedHashMap<>();
    /** Units already counted in the current cap period, per counter. */
    private final Map<String, Set<String>> counted = new HashMap<>();
    private long capWindow = Long.MIN_VALUE;
    private long lastRelease = Long.MIN_VALUE;

    /** Counts of {@code unit}s ("person" or "track"), at the defaults. */
    public StatusCounts(String unit) {
        this(unit, DEFAULT_RELEASE_EVERY, DEFAULT_CAP_PERIOD, DEFAULT_SCALE,
                Drbg.create());
    }

    public StatusCounts(String unit, Duration releaseEvery, Duration capPeriod, long scale, SecureRandom random) {
        if (releaseEvery.isNegative() || releaseEvery.isZero() || capPeriod.compareTo(releaseEvery) < 0) {
            throw new IllegalArgumentException("release window must be positive and at most the cap period, were "
                    + releaseEvery + " and " + capPeriod);
        }
        if (scale < 1) {
            throw new IllegalArgumentException("scale must be at least 1, was " + scale);
        }
        this.unit = Objects.requireNonNull(unit, "unit");
        this.releaseEvery = releaseEvery;
        this.capPeriod = capPeriod;
        this.scale = scale;
        this.random = Objects.requireNonNull(random, "random");
    }

    /** Adds a counter; it publishes 0 until its first release. */
    public synchronized StatusCounts counter(String name) {
        exact.put(name, 0L);
        releasedExact.put(name, 0L);
        published.put(name, 0L);
        counted.put(name, new HashSet<>());
        return this;
    }

    /**
     * Counts {@code unitId} on {@code counter} at {@code now}, unless it was counted there already in
     * this cap period.
     *
     * @return whether it counted
     */
    public synchronized boolean add(String counter, String unitId, Instant now) {
        Objects.requireNonNull(unitId, "unitId");
        Set<String> seen = counted.get(counter);
        if (seen == null) {
            throw new IllegalArgumentException("no counter " + counter);
        }
        roll(now);
        if (!seen.add(unitId)) {
            return false;
        }
        exact.merge(counter, 1L, Long::sum);
        return true;
    }

    /** The exact totals: for the authenticated local report only. */
    public synchronized Map<String, Long> exact() {
        return new LinkedHashMap<>(exact);
    }

    private void roll(Instant now) {
        long w = Math.floorDiv(now.toEpochMilli(), capPeriod.toMillis());
        // Forward only: a wall clock stepped back must not reopen a period and count its units again.
        if (w > capWindow) {
            capWindow = w;
            counted.values().forEach(Set::clear);
        }
    }

    /** ε per unit per counter per cap period: 1/t. */
    public double epsilonPerCount() {
        return 1.0 / scale;
    }

    /** ε per unit per cap period, all counters together: each unit moves each counter at most once. */
    public double epsilonPerUnitPerPeriod() {
        return exact.size() * epsilonPerCount();
    }

    /** ε per unit over any span up to one cap period long: it meets at most two periods. */
    public double epsilonPerUnitPerSpan() {
        return 2 * epsilonPerUnitPerPeriod();
    }

    public Duration releaseEvery() {
        return releaseEvery;
    }

    public Duration capPeriod() {
        return capPeriod;
    }

    /** The published totals at {@code now}: releases what a new window's first call must, then repeats. */
    public synchronized Map<String, Long> published(Instant now) {
        long w = Math.floorDiv(now.toEpochMilli(), releaseEvery.toMillis());
        if (w != lastRelease) {
            lastRelease = w;
            ExactCoins.Bits bits = new ExactCoins.Bits(random, 32 * exact.size());
            for (var e : exact.entrySet()) {
                long total = e.getValue();
                long grew = total - releasedExact.get(e.getKey());
                releasedExact.put(e.getKey(), total);
                published.merge(e.getKey(), grew + ExactCoins.discreteLaplace(scale, bits), Long::sum);
            }
        }
        return new LinkedHashMap<>(published);
    }

    /** The published totals with how they were counted and noised, and what they cost a person. */
    public Map<String, Object> section(Instant now) {
        Map<String, Object> m = new LinkedHashMap<>(published(now));
        Map<String, Object> noise = new LinkedHashMap<>();
        noise.put("unit", unit);
        noise.put("perUnitAtMostOncePer", capPeriod.toString());
        noise.put("epsilonPerCount", epsilonPerCount());
        // Any 24 hours meets ceil(day / period) + 1 aligned periods; any policy window up to a period, two.
        noise.put("epsilonPerUnitPerDay", epsilonPerUnitPerPeriod()
                * (Math.ceil((double) Duration.ofDays(1).toMillis() / capPeriod.toMillis()) + 1));
        noise.put("epsilonPerUnitPerWindow", epsilonPerUnitPerSpan());
        noise.put("window", releaseEvery.toString());
        noise.put("mechanism", "discrete Laplace, each increment released once");
        m.put("noise", noise);
        return m;
    }
}
