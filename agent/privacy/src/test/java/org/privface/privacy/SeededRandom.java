package org.privface.privacy;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;

/**
 * The one seeded generator, test-only: statistical tests and the evaluations (through this
 * module's test-jar) reproduce with it; production code gets its randomness from {@link Drbg}.
 */
public final class SeededRandom {
    private SeededRandom() {
    }

    /** SHA1PRNG seeded before its first use is deterministic. */
    public static SecureRandom of(long seed) {
        SecureRandom r = sha1prng();
        r.setSeed(seed);
        return r;
    }

    /** The same, seeded with bytes (a key such as "set/family/ε/seed"). */
    public static SecureRandom of(byte[] seed) {
        SecureRandom r = sha1prng();
        r.setSeed(seed);
        return r;
    }

    private static SecureRandom sha1prng() {
        try {
            return SecureRandom.getInstance("SHA1PRNG");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
