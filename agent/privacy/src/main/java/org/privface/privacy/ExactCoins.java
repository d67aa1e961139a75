package org.privface.privacy;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.math.BigInteger;
import java.nio.ByteOrder;
import java.security.SecureRandom;

/**
 * Exact coins and the exact discrete Laplace, shared by {@link SecureLaplace}, the discrete
 * Gaussian ({@link org.privface.privacy.gdp.SecureGaussian}) and the K-norm radius
 * ({@link org.privface.privacy.aggregate.KNormGradient}).
 *
 * <p>Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020),
 * Algorithms 1 and 2. Every coin compares a uniform integer, drawn by rejection from raw bits, with
 * an integer numerator, so each probability is met exactly, not to floating-point accuracy.
 * Written by hand because no library available here samples these exactly (Google's
 * differential-privacy library cannot be obtained).
 */
public final class ExactCoins {
    private ExactCoins() {
    }

    /** What {@link #laplaceRound} returns for a rejected round. */
    public static final long REJECTED = Long.MIN_VALUE;

    /** Y with P(y) ∝ exp(−|y|/t) on the integers, t ≥ 1 (CKS Algorithm 2 with s = 1). */
    public static long discreteLaplace(long t, Bits bits) {
        if (t < 1) {
            throw new IllegalArgumentException("the scale in steps must be at least 1, was " + t);
        }
        while (true) {
            long y = laplaceRound(t, bits);
            if (y != REJECTED) {
                return y;
            }
        }
    }

    /**
     * One round of {@link #discreteLaplace}: ±(U + tV) or {@link #REJECTED}. Rounds draw fresh coins,
     * so the sampler's output has exactly the round's law conditioned on not being rejected; tests
     * enumerate one round, where the paths stay few, instead of the loop. A non-rejected round is
     * k with probability (1 − e^-1)/(2t)·e^{−|k|/t}: U = |k| mod t, V = |k| div t, one sign bit.
     */
    public static long laplaceRound(long t, Bits bits) {
        long magnitude = geometricMagnitude(t, bits);
        if (magnitude < 0) {
            return REJECTED;
        }
        // One fair sign bit, 1 for negative, used once: (1, 0) is rejected (sign > magnitude only there),
        // since −0 and +0 would otherwise both map to 0, doubling its weight.
        long sign = bits.bits(1);
        if (sign > magnitude) {
            return REJECTED;
        }
        return (1 - 2 * sign) * magnitude;
    }

    /** X ≥ 0 with P(x) = (1 − e^{−1/t})·e^{−x/t}, exactly: the magnitude of {@link #discreteLaplace} without the sign. */
    public static long geometric(long t, Bits bits) {
        if (t < 1) {
            throw new IllegalArgumentException("the scale in steps must be at least 1, was " + t);
        }
        while (true) {
            long magnitude = geometricMagnitude(t, bits);
            if (magnitude >= 0) {
                return magnitude;
            }
        }
    }

    /**
     * One round of CKS Algorithm 2's magnitude: U uniform on {0..t−1} kept with probability
     * e^{−U/t}, then V ~ Geometric(1 − e^{−1}); returns U + t·V, or −1 when U was rejected.
     */
    private static long geometricMagnitude(long t, Bits bits) {
        long u = bits.uniform(t);
        if (!bernoulliExpAtMostOne(u, t, bits)) {
            return -1;
        }
        long v = 0;
        while (bernoulliExpAtMostOne(1, 1, bits)) {
            v++;
        }
        return Math.addExact(u, Math.multiplyExact(t, v));
    }

    /**
     * Bernoulli(exp(−num/den)) for 0 ≤ num ≤ den (CKS Algorithm 1): K counts successive
     * Bernoulli(γ/K) successes; P(K odd) = Σ (−γ)^k/k! = e^-γ.
     */
    public static boolean bernoulliExpAtMostOne(long num, long den, Bits bits) {
        return bits.bernoulliExpAtMostOne(num, den);
    }

    /** Bernoulli(exp(−num/den)) for any num ≥ 0: one e^-1 coin per whole unit of γ, then one for the remainder. */
    public static boolean bernoulliExp(long num, long den, Bits bits) {
        for (long whole = num / den; whole > 0; whole--) {
            if (!bernoulliExpAtMostOne(1, 1, bits)) {
                return false;
            }
        }
        return bernoulliExpAtMostOne(num % den, den, bits);
    }

    /**
     * Uniform bits from one bulk draw of the secure generator (refilled in bulk when used up): a
     * lock and a DRBG call per coin would cost more than the sampling itself. Bit i of the stream
     * is bit (i mod 8) of byte i/8 of what the generator returns, lowest first.
     *
     * <p>Open to subclasses so that tests can script every primitive ({@link #bits},
     * {@link #uniform(long)}, {@link #bernoulli}) and enumerate a sampler's paths exactly. Its
     * uniform and coin are the {@link ExactDraws} randomized response needs, so one scripted source
     * walks every sampler of the library. Not thread-safe; {@link ExactDraws#secure} locks one.
     */
    public static class Bits implements ExactDraws {
        private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

        private final SecureRandom random;
        private final byte[] buffer;
        private int position;
        private long word;
        private int available;
        private long wordsBefore;

        /** Fetches max(64, bytes) bytes now, as many again each time they run out. */
        public Bits(SecureRandom random, int bytes) {
            this.random = random;
            this.buffer = new byte[Math.max(64, (bytes + 7) & ~7)];
            random.nextBytes(buffer);
        }

        /** For a scripted source that overrides every primitive; it has no generator behind it. */
        protected Bits() {
            this.random = null;
            this.buffer = new byte[8];
        }

        private long nextWord() {
            if (position == buffer.length) {
                random.nextBytes(buffer);
                wordsBefore += buffer.length / 8;
                position = 0;
            }
            long w = (long) LONGS.get(buffer, position);
            position += 8;
            return w;
        }

        /** How many bits the samplers have consumed so far (for tests that enumerate bit strings, and cost counts). */
        public long used() {
            return (wordsBefore + position / 8) * 64 - available;
        }

        /**
         * k uniform bits, 1 ≤ k ≤ 63, in the low bits of the result. The masks −1 >>> (64 − j) keep j ≥ 1
         * bits (all 64 at j = 0, which never occurs): a word refilled before it is used up would show.
         */
        public long bits(int k) {
            if (k <= available) {
                long r = word & (-1L >>> (64 - k));
                word >>>= k;
                available -= k;
                return r;
            }
            // Use up what is left of the current word, then the rest from a fresh one.
            long r = word;
            int have = available;
            int need = k - have;
            word = nextWord();
            r |= (word & (-1L >>> (64 - need))) << have;
            word >>>= need;
            available = 64 - need;
            return r;
        }

        /** Uniform on {0, …, n − 1}, n ≥ 1, exactly: the fewest bits that cover n − 1, redrawn when ≥ n. */
        @Override
        public long uniform(long n) {
            if (n < 1) {
                throw new IllegalArgumentException("need n >= 1, was " + n);
            }
            if (n == 1) {
                return 0;
            }
            int k = 64 - Long.numberOfLeadingZeros(n - 1);
            while (true) {
                long r = bits(k);
                if (r < n) {
                    return r;
                }
            }
        }

        /**
         * Uniform on {0, …, n − 1}, n ≥ 1, exactly: the fewest bits that cover n − 1, in chunks of 62
         * lowest first, redrawn when ≥ n (the same bits as {@link #uniform(long)} where n fits a long).
         */
        public BigInteger uniform(BigInteger n) {
            if (n.signum() < 1) {
                throw new IllegalArgumentException("need n >= 1, was " + n);
            }
            int k = n.subtract(BigInteger.ONE).bitLength();
            while (true) {
                BigInteger r = BigInteger.ZERO;
                for (int have = 0; have < k; have += 62) {
                    r = r.or(BigInteger.valueOf(bits(Math.min(62, k - have))).shiftLeft(have));
                }
                if (r.compareTo(n) < 0) {
                    return r;
                }
            }
        }

        /** Bernoulli(num/den) for 0 ≤ num ≤ den. */
        @Override
        public boolean bernoulli(long num, long den) {
            return uniform(den) < num;
        }

        /**
         * Bernoulli(exp(−num/den)) for 0 ≤ num ≤ den, CKS Algorithm 1 on {@link #bernoulli} coins
         * (see {@link ExactCoins#bernoulliExpAtMostOne}); a primitive here so that a test can check
         * it once and then treat it as one coin.
         */
        public boolean bernoulliExpAtMostOne(long num, long den) {
            long k = 1;
            while (bernoulli(num, Math.multiplyExact(den, k))) {
                k++;
            }
            return (k & 1) == 1;
        }

        /** Bernoulli(num/den) for 0 ≤ num ≤ den, big integers. */
        public boolean bernoulli(BigInteger num, BigInteger den) {
            return uniform(den).compareTo(num) < 0;
        }
    }
}
