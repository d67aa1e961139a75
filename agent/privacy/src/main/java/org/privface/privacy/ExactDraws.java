package org.privface.privacy;

import java.security.SecureRandom;
import java.util.Objects;

/**
 * The two exact draws randomized response needs. {@link ExactCoins.Bits} is one (uniform integers
 * by rejection from raw bits, so each probability is an exact ratio); tests script a {@code Bits}
 * to walk every outcome ({@code CoinTree}).
 */
public interface ExactDraws {
    /** true with probability num/den exactly, 0 ≤ num ≤ den. */
    boolean bernoulli(long num, long den);

    /** Uniform on {0, …, n − 1} exactly, n ≥ 1. */
    long uniform(long n);

    /** Draws from a secure generator (thread-safe: one lock around the bit buffer). */
    static ExactDraws secure(SecureRandom random) {
        ExactCoins.Bits bits = new ExactCoins.Bits(Objects.requireNonNull(random, "random"), 64);
        return new ExactDraws() {
            @Override
            public synchronized boolean bernoulli(long num, long den) {
                return bits.bernoulli(num, den);
            }

            @Override
            public synchronized long uniform(long n) {
                return bits.uniform(n);
            }
        };
    }

    /** Draws from a fresh {@link Drbg}: what the gateway runs. */
    static ExactDraws secure() {
        return secure(Drbg.create());
    }
}
