package org.privface.wire.control;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.util.Base64;

import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SignedControlTest {
    private static final byte[] BODY = "{\"epsilon\":8.0}".getBytes(StandardCharsets.UTF_8);

    /**
     * The worked example in docs/agent.md ("Signed control records"): a fixed key, and the
     * signature Ed25519 (deterministic) must give. A third-party signer can check itself on it.
     */
    static final String EXAMPLE_PRIVATE = "MC4CAQAwBQYDK2VwBCIEIH1JZ4MDAbrF3cqrhSc31+PvF1Ht2R8dkeg9eogj3XLV";
    static final String EXAMPLE_PUBLIC = "MCowBQYDK2VwAyEA0+RIC3ZRT4h6AUV66hM61b1NHuuLBPWmsb6tsNo1yJc=";
    static final String EXAMPLE_SIGNATURE =
            "D9RXjP66rDTMep3quuaVikcNjyXdRjDQQRSZA7U45Y+/s14V2jqlcBej+oPWSJ2wNiJCz287WfQcOrUTV8/ZDw==";

    @Test
    void theSignedMessageIsTheDocumentedByteString() {
        byte[] m = SignedControl.message("north", "console", "alice", 1764072000000L, BODY);
        assertEquals("privface-control-v1\nnorth\nconsole\nalice\n1764072000000\n{\"epsilon\":8.0}",
                new String(m, StandardCharsets.UTF_8));
    }

    @Test
    void theWorkedExampleVerifies() {
        PrivateKey priv = SignedControl.privateKey(EXAMPLE_PRIVATE);
        PublicKey pub = SignedControl.publicKey(EXAMPLE_PUBLIC);
        SignedControl.Envelope e = SignedControl.sign(priv, "console", "north", "alice", 1764072000000L, BODY);
        assertEquals(EXAMPLE_SIGNATURE, Base64.getEncoder().encodeToString(e.signature()));
        assertTrue(SignedControl.verify(pub, "north", e, BODY));
    }

    @Test
    void anyChangeToWhatWasSignedBreaksTheSignature() {
        KeyPair kp = SignedControl.generate();
        SignedControl.Envelope e = SignedControl.sign(kp.getPrivate(), "console", "north", "alice", 1000L, BODY);
        assertTrue(SignedControl.verify(kp.getPublic(), "north", e, BODY));
        assertFalse(SignedControl.verify(kp.getPublic(), "south", e, BODY), "another site");
        assertFalse(SignedControl.verify(kp.getPublic(), "north", e, "{\"epsilon\":80.0}".getBytes(StandardCharsets.UTF_8)), "body");
        assertFalse(SignedControl.verify(kp.getPublic(), "north",
                new SignedControl.Envelope("console", "mallory", 1000L, e.signature()), BODY), "operator");
        assertFalse(SignedControl.verify(kp.getPublic(), "north",
                new SignedControl.Envelope("console", "alice", 1001L, e.signature()), BODY), "issued-at");
        assertFalse(SignedControl.verify(kp.getPublic(), "north",
                new SignedControl.Envelope("backup", "alice", 1000L, e.signature()), BODY), "key id");
        assertFalse(SignedControl.verify(SignedControl.generate().getPublic(), "north", e, BODY), "another key");
        byte[] flipped = e.signature();
        flipped[10] ^= 1;
        assertFalse(SignedControl.verify(kp.getPublic(), "north", new SignedControl.Envelope("console", "alice", 1000L, flipped), BODY));
    }

    @Test
    void headersCarryTheEnvelopeAndMissingOnesSayWhichIsMissing() {
        KeyPair kp = SignedControl.generate();
        SignedControl.Envelope e = SignedControl.sign(kp.getPrivate(), "console", "north", "alice", 42L, BODY);
        RecordHeaders h = new RecordHeaders();
        e.addTo(h);
        SignedControl.Envelope back = SignedControl.Envelope.of(h);
        assertEquals("console", back.keyId());
        assertEquals("alice", back.operator());
        assertEquals(42L, back.issuedAt());
        assertArrayEquals(e.signature(), back.signature());
        assertEquals(88, h.lastHeader(SignedControl.SIGNATURE_HEADER).value().length);

        RecordHeaders unsigned = new RecordHeaders();
        unsigned.add(SignedControl.OPERATOR_HEADER, "eve".getBytes(StandardCharsets.UTF_8));
        var ex = assertThrows(IllegalArgumentException.class, () -> SignedControl.Envelope.of(unsigned));
        assertTrue(ex.getMessage().startsWith("unsigned"), ex.getMessage());
        h.remove(SignedControl.SIGNATURE_HEADER);
        h.add(SignedControl.SIGNATURE_HEADER, "AAAA".getBytes(StandardCharsets.UTF_8));
        assertThrows(IllegalArgumentException.class, () -> SignedControl.Envelope.of(h), "a signature of 3 bytes");
        assertThrows(IllegalArgumentException.class, () -> SignedControl.message("north", "con\nsole", "alice", 1, BODY));
        assertThrows(IllegalArgumentException.class, () -> SignedControl.message("no\nrth", "console", "alice", 1, BODY));
    }

    @Test
    void theKeyToolWritesAnOwnerOnlyKeyThatSignsForThePrintedPublicKey(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("keys/console.key");
        String line = SignedControl.writeNewKey("console", file);
        assertTrue(line.startsWith("console: "), line);
        PublicKey pub = SignedControl.publicKey(line.substring("console: ".length()));
        PrivateKey priv = SignedControl.privateKey(Files.readString(file));
        SignedControl.Envelope e = SignedControl.sign(priv, "console", "north", "alice", 7L, BODY);
        assertTrue(SignedControl.verify(pub, "north", e, BODY));
        if (Files.getFileStore(file).supportsFileAttributeView("posix")) {
            assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        }
        assertThrows(FileAlreadyExistsException.class, () -> SignedControl.writeNewKey("console", file));
        assertThrows(IllegalArgumentException.class, () -> SignedControl.publicKey("bm90IGEga2V5"));
    }
}
