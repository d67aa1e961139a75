package org.privface.recognizer.console;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;

import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * Operator passwords as {@code pbkdf2-sha256$<iterations>$<salt>$<hash>} (Base64), with the
 * JDK's PBKDF2; only the hash is ever configured. {@code main} prints the hash of a password
 * read from standard input, for {@code recognizer.console.operators.<name>}.
 */
public final class PasswordHash {
    private static final String SCHEME = "pbkdf2-sha256";
    /** OWASP's 2023 figure for PBKDF2-HMAC-SHA256. */
    static final int ITERATIONS = 600_000;
    private static final int SALT_BYTES = 16;
    private static final int HASH_BITS = 256;

    private PasswordHash() {
    }

    public static String hash(char[] password) {
        byte[] salt = new byte[SALT_BYTES];
        new SecureRandom().nextBytes(salt);
        return format(ITERATIONS, salt, derive(password, salt, ITERATIONS));
    }

    /** Constant-time check of a password against a stored hash; a malformed hash matches nothing. */
    public static boolean verify(char[] password, String stored) {
        String[] p = stored == null ? new String[0] : stored.split("\\$");
        if (p.length != 4 || !p[0].equals(SCHEME)) {
            return false;
        }
        try {
            int iterations = Integer.parseInt(p[1]);
            byte[] salt = Base64.getDecoder().decode(p[2]);
            byte[] expected = Base64.getDecoder().decode(p[3]);
            if (iterations < 1 || iterations > 10_000_000 || expected.length * 8 != HASH_BITS) {
                return false;
            }
            return MessageDigest.isEqual(expected, derive(password, salt, iterations));
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** True for a string in this class' format, so a misconfigured operator fails at start. */
    public static boolean wellFormed(String stored) {
        String[] p = stored == null ? new String[0] : stored.split("\\$");
        try {
            return p.length == 4 && p[0].equals(SCHEME) && Integer.parseInt(p[1]) > 0
                    && Base64.getDecoder().decode(p[3]).length * 8 == HASH_BITS && Base64.getDecoder().decode(p[2]).length > 0;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    static String format(int iterations, byte[] salt, byte[] hash) {
        return SCHEME + "$" + iterations + "$" + Base64.getEncoder().encodeToString(salt) + "$"
                + Base64.getEncoder().encodeToString(hash);
    }

    private static byte[] derive(char[] password, byte[] salt, int iterations) {
        PBEKeySpec spec = new PBEKeySpec(password, salt, iterations, HASH_BITS);
        try {
            return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("PBKDF2WithHmacSHA256 is missing from this JDK", e);
        } finally {
            spec.clearPassword();
        }
    }

    public static void main(String[] args) throws java.io.IOException {
        String line = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        if (line == null || line.isEmpty()) {
            System.err.println("usage: echo -n 'password' | java ... " + PasswordHash.class.getName());
            System.exit(2);
        }
        System.out.println(hash(line.toCharArray()));
    }
}
