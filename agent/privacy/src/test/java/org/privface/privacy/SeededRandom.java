package org.privface.privacy;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;

/** Seeded generators so statistical tests reproduce; production code keeps the OS-seeded DRBG. */
public final class SeededRandom {
    private SeededRandom() {
    }

    /** SHA1PRNG seeded before its first use is deterministic. */
    public static SecureRandom of(long seed) {
        try {
            SecureRandom r = SecureRandom.getInstance("SHA1PRNG");
            r.setSeed(seed);
            return r;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
