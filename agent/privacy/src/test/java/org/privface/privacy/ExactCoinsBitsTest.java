package org.privface.privacy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.privface.privacy.ExactCoins.Bits;

/**
 * {@link Bits}' contract with its generator, checked against the bytes the generator handed out:
 * bit i of the stream is bit (i mod 8) of byte i/8; k bits are the next k, lowest first; uniforms
 * take the first draw of the fewest bits that is below n; bytes are fetched in bulk of
 * max(64, bytes rounded up to 8), and only when the ones before are used up. The exact tests
 * (CoinTree) enumerate draws as bit strings, so they rest on this mapping.
 */
class ExactCoinsBitsTest {
    /** Reads the recorded stream bit by bit, as the contract says Bits must. */
    static final class Reference {
        private final RecordingRandom source;
        long position;

        Reference(RecordingRandom source) {
            this.source = source;
        }

        long bits(int k) {
            byte[] b = source.served();
            long r = 0;
            for (int j = 0; j < k; j++, position++) {
                r |= (long) ((b[(int) (position / 8)] >> (position % 8)) & 1) << j;
            }
            return r;
        }

        BigInteger uniform(BigInteger n) {
            int k = n.subtract(BigInteger.ONE).bitLength();
            while (true) {
                BigInteger r = BigInteger.ZERO;
                for (int j = 0; j < k; j++) {
                    r = r.or(BigInteger.valueOf(bits(1)).shiftLeft(j));
                }
                if (r.compareTo(n) < 0) {
                    return r;
                }
            }
        }
    }

    @Test
    void bitsAreTheGeneratorsBytesLowestBitFirst() {
        RecordingRandom g = new RecordingRandom(3);
        Bits bits = new Bits(g, 64);
        Reference ref = new Reference(g);
        // 32 then 32 ends a word exactly; 63 then 1 too; the rest walks every k across word and buffer ends.
        List<Integer> ks = new ArrayList<>(List.of(32, 32, 63, 1, 1, 63, 5, 59, 17));
        for (int i = 0; i < 400; i++) {
            ks.add(1 + (i * 37) % 63);
        }
        long used = 0;
        for (int k : ks) {
            long got = bits.bits(k);
            used += k;
            assertEquals(ref.bits(k), got, "bits(" + k + ") at bit " + (used - k));
            assertEquals(used, bits.used(), "bits used");
        }
    }

    @Test
    void uniformsTakeTheFirstDrawOfTheFewestBitsBelowN() {
        RecordingRandom g = new RecordingRandom(4);
        Bits bits = new Bits(g, 64);
        Reference ref = new Reference(g);
        long[] sizes = {1, 2, 3, 5, 7, 8, 100, (1L << 62) + 1, Long.MAX_VALUE};
        for (int round = 0; round < 40; round++) {
            for (long n : sizes) {
                long got = bits.uniform(n); // first: the reference reads only bytes already fetched
                assertEquals(ref.uniform(BigInteger.valueOf(n)).longValueExact(), got, "uniform(" + n + ")");
                long num = n / 2;
                boolean coin = bits.bernoulli(num, n);
                assertEquals(ref.uniform(BigInteger.valueOf(n)).longValueExact() < num, coin, "bernoulli(" + num + "/" + n + ")");
            }
        }
        assertEquals(ref.position, bits.used());
        assertThrows(IllegalArgumentException.class, () -> bits.uniform(0));
        assertThrows(IllegalArgumentException.class, () -> bits.uniform(BigInteger.ZERO));
    }

    @Test
    void bigUniformsAndCoinsFollowTheSameStream() {
        RecordingRandom g = new RecordingRandom(5);
        Bits bits = new Bits(g, 64);
        Reference ref = new Reference(g);
        BigInteger[] sizes = {BigInteger.ONE, BigInteger.valueOf(5), BigInteger.ONE.shiftLeft(62), BigInteger.ONE.shiftLeft(62).add(BigInteger.ONE),
            BigInteger.ONE.shiftLeft(100).add(BigInteger.valueOf(3)), BigInteger.ONE.shiftLeft(124), BigInteger.valueOf(3).shiftLeft(123)};
        for (int round = 0; round < 40; round++) {
            for (BigInteger n : sizes) {
                BigInteger got = bits.uniform(n); // first: the reference reads only bytes already fetched
                assertEquals(ref.uniform(n), got, "uniform(" + n + ")");
                BigInteger num = n.shiftRight(1);
                boolean coin = bits.bernoulli(num, n);
                assertEquals(ref.uniform(n).compareTo(num) < 0, coin, "bernoulli(" + num + "/" + n + ")");
            }
        }
        assertEquals(ref.position, bits.used());
    }

    /** Fetches are max(64, bytes rounded up to 8) long, and the next one comes only once the last byte is used. */
    @Test
    void bytesAreFetchedInBulkAndOnlyWhenUsedUp() {
        int[][] sizes = {{1, 64}, {64, 64}, {65, 72}, {72, 72}, {200, 200}, {203, 208}};
        for (int[] s : sizes) {
            RecordingRandom g = new RecordingRandom(6);
            Bits bits = new Bits(g, s[0]);
            assertEquals(List.of(s[1]), g.fetches(), s[0] + " bytes asked");
            for (int i = 0; i < s[1] / 4; i++) {
                bits.bits(32);
            }
            assertEquals(List.of(s[1]), g.fetches(), "all " + s[1] + " bytes used, none more fetched");
            bits.bits(1);
            assertEquals(List.of(s[1], s[1]), g.fetches(), "one more bit");
            assertEquals(s[1] * 8L + 1, bits.used());
        }
    }
}
