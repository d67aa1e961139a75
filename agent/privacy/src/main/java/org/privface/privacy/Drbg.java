package org.privface.privacy;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;

/**
 * The one place the library gets its randomness: the JDK's NIST SP 800-90A DRBG, seeded by the
 * operating system. Every sampler's no-argument constructor draws from a fresh one. A seeded
 * generator exists only in the test sources ({@code SeededRandom}, shipped in this module's
 * test-jar), as Google's differential-privacy library keeps its seeded noise to its tests.
 */
public final class Drbg {
    private Drbg() {
    }

    /** A new DRBG instance; the platform's default {@link SecureRandom} where DRBG is missing. */
    public static SecureRandom create() {
        try {
            return SecureRandom.getInstance("DRBG");
        } catch (NoSuchAlgorithmException e) {
            return new SecureRandom();
        }
    }
}
