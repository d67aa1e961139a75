package org.privface.agent.control;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;

import org.privface.privacy.ExactCoins;

/**
 * Counts a status report publishes whose exact value would tell the cloud about linking and
 * withholding decisions (faces detected and withheld, appearances linked): each is published as a
 * running total of noisy increments, and each increment is released once.
 *
 * <p>Time is cut into windows of fixed length aligned to the epoch (data-independent). The first
 * report in a new window releases, for every counter, what it grew by since the last release plus
 * exact discrete Laplace noise P(k) ∝ exp(−|k|/t) ({@link ExactCoins#discreteLaplace}); every
 * report until the next window repeats the same totals. An event (one face, one appearance) adds
 * at most 1 to a counter and falls in exactly one release, so each counter is ε = 1/t
 * differentially private per event over the gateway's whole run, and the totals are sums of those
 * releases (post-processing). Counters are independent releases: an event that moves two counters
 * costs 2ε. The exact values stay in the gateway's local report ({@link GatewayState#localReport}).
 * Thread-safe.
 */
public final class StatusCounts {
    /** Releases once a minute: the noise of a day's totals is a sum of 1440 draws. */
    public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(1);
    /** t = 1: ε = 1 per event per counter. */
    public static final long DEFAULT_SCALE = 1;

    private final Duration window;
    private final long scale;
    private final SecureRandom random;
    private final Map<String, LongSupplier> exact = new LinkedHashMap<>();
    private final Map<String, Long> releasedExact = new LinkedHashMap<>();
    private final Map<String, Long> published = new LinkedHashMap<>();
    private long lastWindow = Long.MIN_VALUE;

    public StatusCounts() {
        this(DEFAULT_WINDOW, DEFAULT_SCALE, org.privface.privacy.embedding.EmbeddingMechanism.drbg());
    }

    public StatusCounts(Duration window, long scale, SecureRandom random) {
        if (window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("window must be positive, was " + window);
        }
        if (scale < 1) {
            throw new IllegalArgumentException("scale must be at least 1, was " + scale);
        }
        this.window = window;
        this.scale = scale;
        this.random = Objects.requireNonNull(random, "random");
    }

    /** Adds a counter, read from its exact running total; it publishes 0 until its first release. */
    public synchronized StatusCounts count(String name, LongSupplier exactTotal) {
        exact.put(name, exactTotal);
        releasedExact.put(name, 0L);
        published.put(name, 0L);
        return this;
    }

    /** ε per event per counter: 1/t. */
    public double epsilon() {
        return 1.0 / scale;
    }

    public Duration window() {
        return window;
    }

    /** The published totals at {@code now}: releases what a new window's first call must, then repeats. */
    public synchronized Map<String, Long> published(Instant now) {
        long w = Math.floorDiv(now.toEpochMilli(), window.toMillis());
        if (w != lastWindow) {
            lastWindow = w;
            ExactCoins.Bits bits = new ExactCoins.Bits(random, 32 * exact.size());
            for (var e : exact.entrySet()) {
                long total = e.getValue().getAsLong();
                long grew = total - releasedExact.get(e.getKey());
                releasedExact.put(e.getKey(), total);
                published.merge(e.getKey(), grew + ExactCoins.discreteLaplace(scale, bits), Long::sum);
            }
        }
        return new LinkedHashMap<>(published);
    }

    /** The published totals with how they were noised, as a report section lists them. */
    public Map<String, Object> section(Instant now) {
        Map<String, Object> m = new LinkedHashMap<>(published(now));
        m.put("noise", Map.of("epsilonPerEvent", epsilon(), "window", window.toString(),
                "mechanism", "discrete Laplace, each increment released once"));
        return m;
    }

}
