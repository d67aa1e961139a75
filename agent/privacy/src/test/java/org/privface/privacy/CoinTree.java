package org.privface.privacy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * A sampler's exact output distribution, by running it on scripted random primitives
 * ({@link ExactCoins.Bits}: k raw bits, a uniform integer below n, a Bernoulli(num/den) coin) and
 * following every outcome of every primitive, depth first, each path replayed from the start.
 * Path weights are exact rationals. Paths lighter than a cutoff are not followed; their total
 * weight is reported as unexplored, so each outcome's probability is bracketed by
 * [explored, explored + unexplored].
 *
 * <p>A {@link Mutation} shifts one primitive's law (a coin's rate, one uniform value, a raw bit) to
 * show that the checks built on this tree fail for a sampler that is off by 0.1 %.
 */
public final class CoinTree {
    /** Exact non-negative rationals, reduced. */
    public record Q(BigInteger num, BigInteger den) implements Comparable<Q> {
        public static final Q ZERO = new Q(BigInteger.ZERO, BigInteger.ONE);
        public static final Q ONE = new Q(BigInteger.ONE, BigInteger.ONE);

        public static Q of(BigInteger num, BigInteger den) {
            BigInteger g = num.gcd(den);
            return g.signum() == 0 || g.equals(BigInteger.ONE) ? new Q(num, den) : new Q(num.divide(g), den.divide(g));
        }

        public static Q of(long num, long den) {
            return of(BigInteger.valueOf(num), BigInteger.valueOf(den));
        }

        public Q plus(Q o) {
            return of(num.multiply(o.den).add(o.num.multiply(den)), den.multiply(o.den));
        }

        public Q minus(Q o) {
            return of(num.multiply(o.den).subtract(o.num.multiply(den)), den.multiply(o.den));
        }

        public Q times(Q o) {
            return of(num.multiply(o.num), den.multiply(o.den));
        }

        public Q over(Q o) {
            return of(num.multiply(o.den), den.multiply(o.num));
        }

        public BigDecimal decimal() {
            return new BigDecimal(num).divide(new BigDecimal(den), new MathContext(40, RoundingMode.HALF_EVEN));
        }

        @Override
        public int compareTo(Q o) {
            return num.multiply(o.den).compareTo(o.num.multiply(den));
        }

        @Override
        public String toString() {
            return decimal().round(new MathContext(12)).toPlainString();
        }
    }

    /** How a mutant's primitive differs from the exact one; {@link #NONE} is the exact sampler. */
    public enum Mutation {
        NONE,
        /** Every Bernoulli(num/den) coin with 0 < num < den comes up true at 1.001 × its rate (capped at 1). */
        COIN_RATE,
        /** A uniform integer below n ≥ 2 is 0 with probability 1.001/n, the others sharing the rest. */
        UNIFORM_ZERO,
        /** A raw bit is 1 with probability 0.5005. */
        RAW_BIT
    }

    /** The outcome distribution: exact weights of the explored outcomes, and the mass left unexplored. */
    public record Result<T>(Map<T, Q> explored, Q unexplored, long paths) {
        public Q probability(T outcome) {
            return explored.getOrDefault(outcome, Q.ZERO);
        }

        public Q total() {
            Q t = Q.ZERO;
            for (Q q : explored.values()) {
                t = t.plus(q);
            }
            return t;
        }
    }

    private static final Q THOUSANDTH_MORE = Q.of(1001, 1000);
    private static final Map<Q, Q[]> EXP_NEG = new java.util.concurrent.ConcurrentHashMap<>();

    private CoinTree() {
    }

    /** Every path of the sampler heavier than the cutoff, the rest counted as unexplored. */
    public static <T> Result<T> enumerate(Function<ExactCoins.Bits, T> sampler, Q cutoff, Mutation mutation) {
        return enumerate(sampler, cutoff, mutation, false);
    }

    /**
     * @param rawBitsOnly script only {@link ExactCoins.Bits#bits}: uniforms and coins then run the
     *                    production code (rejection from raw bits), so the tree checks it too
     */
    public static <T> Result<T> enumerate(Function<ExactCoins.Bits, T> sampler, Q cutoff, Mutation mutation,
                                          boolean rawBitsOnly) {
        return enumerate(sampler, cutoff, mutation, rawBitsOnly, false);
    }

    /**
     * @param expCoins treat {@link ExactCoins.Bits#bernoulliExpAtMostOne} as one coin whose rate
     *                 e^{−γ} is bracketed in rationals [lo, hi]: true with weight lo, false with
     *                 1 − hi, and hi − lo counted as unexplored (checked on its own coins elsewhere).
     *                 Without it the tree splits on every coin inside, and the paths that give the
     *                 same result are never merged, so deep checks of the Laplace could not finish.
     */
    public static <T> Result<T> enumerate(Function<ExactCoins.Bits, T> sampler, Q cutoff, Mutation mutation,
                                          boolean rawBitsOnly, boolean expCoins) {
        Map<T, Q> out = new HashMap<>();
        Q unexplored = Q.ZERO;
        long paths = 0;
        Deque<Node> stack = new ArrayDeque<>();
        stack.push(new Node(new int[0], Q.ONE));
        while (!stack.isEmpty()) {
            Node n = stack.pop();
            Scripted s = new Scripted(n.choices, mutation, rawBitsOnly, expCoins);
            T outcome;
            try {
                outcome = sampler.apply(s);
            } catch (Branch b) {
                Q leak = Q.ONE;
                for (Q w : b.weights) {
                    leak = leak.minus(w);
                }
                unexplored = unexplored.plus(n.weight.times(leak));
                for (int i = 0; i < b.weights.length; i++) {
                    if (b.weights[i].num.signum() == 0) {
                        continue;
                    }
                    Q w = n.weight.times(b.weights[i]);
                    if (w.compareTo(cutoff) < 0) {
                        unexplored = unexplored.plus(w);
                        continue;
                    }
                    int[] c = Arrays.copyOf(n.choices, n.choices.length + 1);
                    c[n.choices.length] = b.values[i];
                    stack.push(new Node(c, w));
                }
                continue;
            }
            paths++;
            out.merge(outcome, n.weight, Q::plus);
        }
        return new Result<>(out, unexplored, paths);
    }

    private record Node(int[] choices, Q weight) {
    }

    /** Thrown where the script runs out: the primitive's outcomes and their weights. */
    private static final class Branch extends RuntimeException {
        final int[] values;
        final Q[] weights;

        Branch(int[] values, Q[] weights) {
            super(null, null, false, false);
            this.values = values;
            this.weights = weights;
        }
    }

    /** Replays the choices; past them, throws the next primitive's branches. */
    private static final class Scripted extends ExactCoins.Bits {
        private final int[] choices;
        private final Mutation mutation;
        private final boolean rawBitsOnly;
        private final boolean expCoins;
        private int position;

        Scripted(int[] choices, Mutation mutation, boolean rawBitsOnly, boolean expCoins) {
            this.choices = choices;
            this.mutation = mutation;
            this.rawBitsOnly = rawBitsOnly;
            this.expCoins = expCoins;
        }

        @Override
        public boolean bernoulliExpAtMostOne(long num, long den) {
            if (!expCoins) {
                return super.bernoulliExpAtMostOne(num, den);
            }
            Q[] rate = EXP_NEG.computeIfAbsent(Q.of(num, den), x -> dyadic(expNegBounds(x)));
            Q lo = rate[0];
            Q hi = rate[1];
            if (mutation == Mutation.COIN_RATE && num > 0) {
                lo = lo.times(THOUSANDTH_MORE);
                hi = hi.times(THOUSANDTH_MORE);
            }
            return next(new int[] {1, 0}, new Q[] {lo, Q.ONE.minus(hi)}) == 1;
        }

        private int next(int[] values, Q[] weights) {
            if (position < choices.length) {
                return choices[position++];
            }
            throw new Branch(values, weights);
        }

        @Override
        public long bits(int k) {
            if (k > 16) {
                throw new IllegalStateException("too many raw bits to enumerate: " + k);
            }
            int n = 1 << k;
            int[] values = new int[n];
            Q[] weights = new Q[n];
            for (int v = 0; v < n; v++) {
                values[v] = v;
                if (mutation == Mutation.RAW_BIT) {
                    Q w = Q.ONE;
                    for (int bit = 0; bit < k; bit++) {
                        w = w.times(((v >>> bit) & 1) == 1 ? Q.of(1001, 2000) : Q.of(999, 2000));
                    }
                    weights[v] = w;
                } else {
                    weights[v] = Q.of(1, n);
                }
            }
            return next(values, weights);
        }

        @Override
        public long uniform(long n) {
            if (rawBitsOnly) {
                return super.uniform(n);
            }
            if (n < 1) {
                throw new IllegalArgumentException("need n >= 1, was " + n);
            }
            if (n == 1) {
                return 0;
            }
            if (n > 1 << 16) {
                throw new IllegalStateException("too many uniform values to enumerate: " + n);
            }
            int[] values = new int[(int) n];
            Q[] weights = new Q[(int) n];
            Q zero = mutation == Mutation.UNIFORM_ZERO ? Q.of(1001, 1000 * n) : Q.of(1, n);
            Q other = mutation == Mutation.UNIFORM_ZERO ? Q.ONE.minus(zero).over(Q.of(n - 1, 1)) : Q.of(1, n);
            for (int v = 0; v < n; v++) {
                values[v] = v;
                weights[v] = v == 0 ? zero : other;
            }
            return next(values, weights);
        }

        @Override
        public boolean bernoulli(long num, long den) {
            if (rawBitsOnly) {
                return super.bernoulli(num, den);
            }
            return bernoulli(BigInteger.valueOf(num), BigInteger.valueOf(den));
        }

        @Override
        public boolean bernoulli(BigInteger num, BigInteger den) {
            if (rawBitsOnly) {
                return super.bernoulli(num, den);
            }
            if (num.signum() < 0 || num.compareTo(den) > 0) {
                throw new IllegalArgumentException("need 0 <= num <= den, was " + num + "/" + den);
            }
            Q p = Q.of(num, den);
            if (mutation == Mutation.COIN_RATE && num.signum() > 0 && num.compareTo(den) < 0) {
                p = p.times(THOUSANDTH_MORE);
                if (p.compareTo(Q.ONE) > 0) {
                    p = Q.ONE;
                }
            }
            return next(new int[] {1, 0}, new Q[] {p, Q.ONE.minus(p)}) == 1;
        }
    }

    /**
     * Null when the enumerated law matches a closed form on the integers [from, to]: for each k the
     * bracket [explored(k), explored(k) + unexplored] meets the closed form's bracket
     * {@code pmf.apply(k)} = [lo, hi], and the unexplored mass is at most 1e-5 of the smallest
     * checked probability, so an error of 0.1 % (or a hundred times less) cannot hide in it;
     * otherwise what failed.
     */
    public static String checkPmf(Result<Long> r, java.util.function.LongFunction<Q[]> pmf, long from, long to) {
        Q slack = r.unexplored();
        for (long k = from; k <= to; k++) {
            Q[] exact = pmf.apply(k);
            if (slack.compareTo(exact[0].times(Q.of(1, 100_000))) > 0) {
                return "too shallow: unexplored mass " + slack + " against P(" + k + ") = " + exact[0];
            }
            Q p = r.probability(k);
            if (p.compareTo(exact[1]) > 0 || p.plus(slack).compareTo(exact[0]) < 0) {
                return "P(" + k + ") in [" + p + ", + " + slack + "], exact " + exact[0] + " to " + exact[1];
            }
        }
        return null;
    }

    /** A bracket widened to multiples of 2^-100 (lo down, hi up): short numbers keep path weights cheap. */
    static Q[] dyadic(Q[] b) {
        BigInteger scale = BigInteger.ONE.shiftLeft(100);
        BigInteger lo = b[0].num().multiply(scale).divide(b[0].den());
        BigInteger[] hi = b[1].num().multiply(scale).divideAndRemainder(b[1].den());
        return new Q[] {Q.of(lo, scale), Q.of(hi[1].signum() == 0 ? hi[0] : hi[0].add(BigInteger.ONE), scale)};
    }

    /** e^-x bracketed: the reciprocal of {@link #expBounds}. */
    public static Q[] expNegBounds(Q x) {
        Q[] b = expBounds(x, (int) (2 * x.decimal().doubleValue()) + 60);
        return new Q[] {Q.ONE.over(b[1]), Q.ONE.over(b[0])};
    }

    /**
     * e^x for a rational x ≥ 0 bracketed: [Σ_{j<N} x^j/j!, that + 2·x^N/N!] with N ≥ 2x + 2, so the
     * tail is at most twice its first term. Exact rationals throughout.
     */
    public static Q[] expBounds(Q x, int terms) {
        if (terms < 2 * x.decimal().doubleValue() + 2) {
            throw new IllegalArgumentException("need more terms for x = " + x);
        }
        Q sum = Q.ZERO;
        Q term = Q.ONE;
        for (int j = 0; j < terms; j++) {
            sum = sum.plus(term);
            term = term.times(x).over(Q.of(j + 1, 1));
        }
        return new Q[] {sum, sum.plus(term).plus(term)};
    }

    /** The double as the exact rational it is. */
    public static Q exact(double d) {
        BigDecimal b = new BigDecimal(d);
        if (b.signum() < 0) {
            throw new IllegalArgumentException("need d >= 0, was " + d);
        }
        return b.scale() <= 0 ? Q.of(b.toBigIntegerExact(), BigInteger.ONE)
                : Q.of(b.unscaledValue(), BigInteger.TEN.pow(b.scale()));
    }
}
