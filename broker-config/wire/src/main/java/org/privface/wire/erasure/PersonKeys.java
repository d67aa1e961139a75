package org.privface.wire.erasure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Optional;
import java.util.regex.Pattern;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.privface.wire.topics.Topics;

/**
 * The keys of enrollment records: a per-person pseudonym first, so that every record of one person
 * shares a key prefix and can be found, tombstoned and compacted away, while the key itself names
 * nobody.
 *
 * <p>pseudonym = {@code "p"} + the first 32 hex digits of HMAC-SHA256(site secret,
 * {@code "privface-person-v1\n" + site + "\n" + label}); record key = pseudonym + {@code "."} +
 * image tag + {@code "."} + release index, with image tag = the first 16 hex digits of
 * HMAC-SHA256(site secret, {@code "privface-image-v1\n" + sha256 of the image file}).
 *
 * <p>Why keyed and not a plain hash: a tombstone's key and the erasure audit trail outlive the
 * records they erase. An unkeyed hash of site and label could be reversed by hashing guessed names;
 * keyed with a secret that only the site's gateways and its operators hold, the pseudonym left
 * behind says nothing about whom it was. The key is deterministic, so a gateway can recompute every
 * key it ever wrote from its enrollment ledger (image hash, number of releases) and a re-release of
 * an image in a new form replaces the old form's record of the same index under compaction.
 */
public final class PersonKeys {
    /** What a pseudonym looks like: never a label, never a camera id of the usual kind. */
    public static final Pattern PSEUDONYM = Pattern.compile("p[0-9a-f]{32}");
    private static final Pattern KEY = Pattern.compile("(p[0-9a-f]{32})\\.[0-9a-f]{16}\\.[0-9]{1,9}");
    private static final int SECRET_BYTES = 32;

    private final byte[] secret;

    private PersonKeys(byte[] secret) {
        if (secret.length < 16) {
            throw new IllegalArgumentException("a site's pseudonym secret needs at least 16 bytes, had " + secret.length);
        }
        this.secret = secret.clone();
    }

    /** From the secret's bytes (the file holds their base64). */
    public static PersonKeys of(byte[] secret) {
        return new PersonKeys(secret);
    }

    /** Reads the site's secret: one line of base64, as {@link #writeNew} writes it. */
    public static PersonKeys load(Path file) throws IOException {
        try {
            return new PersonKeys(Base64.getDecoder().decode(Files.readString(file, StandardCharsets.US_ASCII).strip()));
        } catch (IllegalArgumentException e) {
            throw new IOException(file + " is not a pseudonym secret (one line of base64, at least 16 bytes)", e);
        }
    }

    /** Writes a new random secret to {@code file}, owner-only, never over an existing file. */
    public static PersonKeys writeNew(Path file) throws IOException {
        byte[] b = new byte[SECRET_BYTES];
        new SecureRandom().nextBytes(b);
        if (file.toAbsolutePath().getParent() != null) {
            Files.createDirectories(file.toAbsolutePath().getParent());
        }
        if (Files.exists(file)) {
            throw new FileAlreadyExistsException(file + " exists; a pseudonym secret is never overwritten");
        }
        Files.createFile(file);
        try {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: the operator protects the file
        }
        Files.writeString(file, Base64.getEncoder().encodeToString(b) + "\n", StandardCharsets.US_ASCII,
                StandardOpenOption.WRITE);
        return new PersonKeys(b);
    }

    /** The file's secret, or a new one written there when there is no file yet. */
    public static PersonKeys loadOrCreate(Path file) throws IOException {
        return Files.exists(file) ? load(file) : writeNew(file);
    }

    /** The person's pseudonym at a site. */
    public String pseudonym(String site, String label) {
        Topics.checkSite(site);
        if (label == null || label.isEmpty() || label.indexOf('\n') >= 0) {
            throw new IllegalArgumentException("a label is one non-empty line");
        }
        return "p" + hex(mac("privface-person-v1\n" + site + "\n" + label), 16);
    }

    /** The tag of one enrollment image, from the SHA-256 of its file. */
    public String imageTag(String sha256) {
        return hex(mac("privface-image-v1\n" + sha256), 8);
    }

    /**
     * The tag of the {@code form}-th form an image is released in (0: the first or only form; 1: the
     * answer's templates when a site releases both, #38), so two forms never share a record key and
     * compaction keeps both.
     */
    public String imageTag(String sha256, int form) {
        return form == 0 ? imageTag(sha256) : hex(mac("privface-image-v1\n" + sha256 + "\nform " + form), 8);
    }

    /** How many forms an image can be released in ({@link #imageTag(String, int)}): tombstones cover each. */
    public static final int FORMS = 2;

    /** The key of an enrollment record: the {@code index}-th release of an image of a person. */
    public static String recordKey(String pseudonym, String imageTag, int index) {
        String k = pseudonym + "." + imageTag + "." + index;
        if (!KEY.matcher(k).matches() || index < 1) {
            throw new IllegalArgumentException("not an enrollment record key: " + k);
        }
        return k;
    }

    /** The pseudonym an enrollment record key starts with; empty for any other key (older records'). */
    public static Optional<String> pseudonymOf(String key) {
        if (key == null) {
            return Optional.empty();
        }
        var m = KEY.matcher(key);
        return m.matches() ? Optional.of(m.group(1)) : Optional.empty();
    }

    public static String checkPseudonym(String p) {
        if (p == null || !PSEUDONYM.matcher(p).matches()) {
            throw new IllegalArgumentException("a pseudonym is p and 32 hex digits, not '" + p + "'");
        }
        return p;
    }

    private byte[] mac(String message) {
        try {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(new SecretKeySpec(secret, "HmacSHA256"));
            return m.doFinal(message.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK lacks HmacSHA256", e);
        }
    }

    private static String hex(byte[] b, int bytes) {
        return HexFormat.of().formatHex(b, 0, bytes);
    }
}
