package org.privface.wire.control;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.SignatureException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.regex.Pattern;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.privface.wire.topics.Topics;

/**
 * The signed form of a record on a site's control topic, shared by the console that signs and
 * the gateway that checks (docs/agent.md, "Signed control records", is the specification).
 *
 * <p>The record's value is the change as JSON, exactly as signed; four headers carry the rest.
 * The Ed25519 signature covers the UTF-8 bytes of
 * {@code "privface-control-v1\n" + site + "\n" + keyId + "\n" + operator + "\n" + issuedAt + "\n"}
 * followed by the value's bytes, where {@code issuedAt} is the decimal count of milliseconds
 * since the Unix epoch. Names cannot hold a newline, so no two field lists give the same message.
 * Ed25519 and its key encodings (X.509 for public, PKCS#8 for private keys) come from the JDK.
 */
public final class SignedControl {
    /** Name under which the gateway lists the public key that checks the signature. */
    public static final String KEY_HEADER = "privface.key";
    /** The operator who proposed the change, as the signer vouches for it. */
    public static final String OPERATOR_HEADER = "privface.operator";
    /** Milliseconds since the epoch, decimal; it is also the key's counter (strictly increasing). */
    public static final String ISSUED_AT_HEADER = "privface.issued-at";
    /** The 64-byte Ed25519 signature, standard base64 with padding (88 characters). */
    public static final String SIGNATURE_HEADER = "privface.signature";
    public static final String ALGORITHM = "Ed25519";
    static final String DOMAIN = "privface-control-v1";
    /**
     * The domain of a signed gallery model (privface.&lt;site&gt;.gallery): the same message layout
     * with this first line, so no gallery signature is ever a valid control signature or back.
     */
    public static final String GALLERY_DOMAIN = "privface-gallery-v1";
    /** The domain of a signed erasure command (privface.&lt;site&gt;.erasure); same layout, its own first line. */
    public static final String ERASURE_DOMAIN = "privface-erasure-v1";
    static final int SIGNATURE_BYTES = 64;
    /** Key ids and operator names: the console's operator alphabet, never a newline. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._@-]{1,64}");

    private SignedControl() {
    }

    /** What travels in the headers of one signed record. */
    public record Envelope(String keyId, String operator, long issuedAt, byte[] signature) {
        public Envelope {
            checkName("key id", keyId);
            checkName("operator", operator);
            if (issuedAt < 0) {
                throw new IllegalArgumentException("issued-at must not be negative: " + issuedAt);
            }
            if (signature.length != SIGNATURE_BYTES) {
                throw new IllegalArgumentException("an Ed25519 signature has " + SIGNATURE_BYTES + " bytes, not " + signature.length);
            }
            signature = signature.clone();
        }

        @Override
        public byte[] signature() {
            return signature.clone();
        }

        /** Writes the four headers, replacing any of the same names. */
        public void addTo(Headers h) {
            for (String n : new String[] {KEY_HEADER, OPERATOR_HEADER, ISSUED_AT_HEADER, SIGNATURE_HEADER}) {
                h.remove(n);
            }
            h.add(KEY_HEADER, keyId.getBytes(StandardCharsets.UTF_8));
            h.add(OPERATOR_HEADER, operator.getBytes(StandardCharsets.UTF_8));
            h.add(ISSUED_AT_HEADER, Long.toString(issuedAt).getBytes(StandardCharsets.UTF_8));
            h.add(SIGNATURE_HEADER, Base64.getEncoder().encode(signature));
        }

        /**
         * Reads the headers of a record; the reason, if they are missing or malformed, is the
         * exception's message. Nothing here says the signature is good: see {@link #verify}.
         */
        public static Envelope of(Headers h) {
            String key = header(h, KEY_HEADER);
            String sig = header(h, SIGNATURE_HEADER);
            String at = header(h, ISSUED_AT_HEADER);
            String operator = header(h, OPERATOR_HEADER);
            if (key == null || sig == null || at == null || operator == null) {
                throw new IllegalArgumentException("unsigned: the record lacks the " + (key == null ? KEY_HEADER
                        : sig == null ? SIGNATURE_HEADER : at == null ? ISSUED_AT_HEADER : OPERATOR_HEADER) + " header");
            }
            long issuedAt;
            try {
                issuedAt = Long.parseLong(at);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(ISSUED_AT_HEADER + " is not a count of milliseconds");
            }
            byte[] s;
            try {
                s = Base64.getDecoder().decode(sig);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(SIGNATURE_HEADER + " is not base64");
            }
            return new Envelope(key, operator, issuedAt, s);
        }

        private static String header(Headers h, String name) {
            Header last = h.lastHeader(name);
            return last == null || last.value() == null ? null : new String(last.value(), StandardCharsets.UTF_8);
        }
    }

    /** The exact bytes the signature covers. */
    public static byte[] message(String site, String keyId, String operator, long issuedAt, byte[] body) {
        return message(DOMAIN, site, keyId, operator, issuedAt, body);
    }

    /** The bytes a signature in {@code domain} ({@link #GALLERY_DOMAIN} or the control domain) covers. */
    public static byte[] message(String domain, String site, String keyId, String operator, long issuedAt, byte[] body) {
        if (!DOMAIN.equals(domain) && !GALLERY_DOMAIN.equals(domain) && !ERASURE_DOMAIN.equals(domain)) {
            throw new IllegalArgumentException("unknown signature domain " + domain);
        }
        Topics.control(site); // a site name is checked where topic names are made
        checkName("key id", keyId);
        checkName("operator", operator);
        ByteArrayOutputStream out = new ByteArrayOutputStream(128 + body.length);
        out.writeBytes((domain + "\n" + site + "\n" + keyId + "\n" + operator + "\n" + issuedAt + "\n")
                .getBytes(StandardCharsets.UTF_8));
        out.writeBytes(body);
        return out.toByteArray();
    }

    public static Envelope sign(PrivateKey key, String keyId, String site, String operator, long issuedAt, byte[] body) {
        return sign(DOMAIN, key, keyId, site, operator, issuedAt, body);
    }

    /** Signs in {@code domain}; a gallery's signer name stands in the operator header. */
    public static Envelope sign(String domain, PrivateKey key, String keyId, String site, String operator, long issuedAt,
                                byte[] body) {
        try {
            Signature s = Signature.getInstance(ALGORITHM);
            s.initSign(key);
            s.update(message(domain, site, keyId, operator, issuedAt, body));
            return new Envelope(keyId, operator, issuedAt, s.sign());
        } catch (InvalidKeyException e) {
            throw new IllegalArgumentException("not an Ed25519 private key: " + e.getMessage(), e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK cannot sign with " + ALGORITHM, e);
        }
    }

    /** Whether {@code e}'s signature over {@code body}, for {@code site}, was made with the key matching {@code key}. */
    public static boolean verify(PublicKey key, String site, Envelope e, byte[] body) {
        return verify(DOMAIN, key, site, e, body);
    }

    /** As {@link #verify(PublicKey, String, Envelope, byte[])}, in {@code domain}. */
    public static boolean verify(String domain, PublicKey key, String site, Envelope e, byte[] body) {
        try {
            Signature s = Signature.getInstance(ALGORITHM);
            s.initVerify(key);
            s.update(message(domain, site, e.keyId(), e.operator(), e.issuedAt(), body));
            return s.verify(e.signature());
        } catch (SignatureException | InvalidKeyException ex) {
            return false;
        } catch (GeneralSecurityException ex) {
            throw new IllegalStateException("this JDK cannot verify " + ALGORITHM, ex);
        }
    }

    /** A public key from the base64 of its X.509 encoding (what {@link #main} prints). */
    public static PublicKey publicKey(String base64) {
        try {
            return KeyFactory.getInstance(ALGORITHM).generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(base64.strip())));
        } catch (IllegalArgumentException | GeneralSecurityException e) {
            throw new IllegalArgumentException("not the base64 of an X.509-encoded Ed25519 public key", e);
        }
    }

    /** A private key from the base64 of its PKCS#8 encoding (the file {@link #main} writes). */
    public static PrivateKey privateKey(String base64) {
        try {
            return KeyFactory.getInstance(ALGORITHM).generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(base64.strip())));
        } catch (IllegalArgumentException | GeneralSecurityException e) {
            throw new IllegalArgumentException("not the base64 of a PKCS#8-encoded Ed25519 private key", e);
        }
    }

    public static KeyPair generate() {
        try {
            return KeyPairGenerator.getInstance(ALGORITHM).generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK has no " + ALGORITHM, e);
        }
    }

    public static String base64(java.security.Key key) {
        return Base64.getEncoder().encodeToString(key.getEncoded());
    }

    /**
     * Writes a new private key to {@code file} (owner-only, never over an existing file) and
     * returns the line that tells gateways to trust its public half under {@code keyId}.
     */
    public static String writeNewKey(String keyId, Path file) throws IOException {
        checkName("key id", keyId);
        KeyPair kp = generate();
        if (file.toAbsolutePath().getParent() != null) {
            Files.createDirectories(file.toAbsolutePath().getParent());
        }
        if (Files.exists(file)) {
            throw new FileAlreadyExistsException(file + " exists; a signing key is never overwritten");
        }
        Files.createFile(file);
        try {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: the operator protects the file
        }
        Files.writeString(file, base64(kp.getPrivate()) + "\n", StandardCharsets.US_ASCII, StandardOpenOption.WRITE);
        return keyId + ": " + base64(kp.getPublic());
    }

    /**
     * {@code java -cp face-wire.jar org.privface.wire.control.SignedControl <key-id> <private-key-file>}:
     * makes an operator signing key. The file goes to the console
     * ({@code recognizer.console.signing-key-file}); the printed line goes to every gateway that
     * should obey it ({@code agent.control.keys-file}, or
     * {@code agent.control.operator-keys.<key-id>}).
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: SignedControl <key-id> <private-key-file>");
            System.exit(2);
        }
        String line = writeNewKey(args[0], Path.of(args[1]));
        System.err.println("private key written to " + args[1] + " (give it to the console only)");
        System.out.println(line);
    }

    /** Throws unless {@code s} is a valid key id or operator name. */
    public static void checkName(String what, String s) {
        if (s == null || !NAME.matcher(s).matches()) {
            throw new IllegalArgumentException(what + " must be 1-64 of A-Z a-z 0-9 . _ @ -, not '" + s + "'");
        }
    }
}
