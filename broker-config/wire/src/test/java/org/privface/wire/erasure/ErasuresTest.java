package org.privface.wire.erasure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.wire.control.SignedControl;

class ErasuresTest {
    @Test
    void pseudonymsAreKeyedPerSiteAndLabelAndNameNobody(@TempDir Path dir) throws Exception {
        PersonKeys k = PersonKeys.writeNew(dir.resolve("secret"));
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(dir.resolve("secret"))));
        PersonKeys same = PersonKeys.load(dir.resolve("secret"));
        PersonKeys other = PersonKeys.writeNew(dir.resolve("other"));
        String p = k.pseudonym("north", "alice");
        assertTrue(PersonKeys.PSEUDONYM.matcher(p).matches(), p);
        assertEquals(p, same.pseudonym("north", "alice"), "the gateways of a site share the secret, so the key");
        assertNotEquals(p, k.pseudonym("south", "alice"));
        assertNotEquals(p, k.pseudonym("north", "bob"));
        assertNotEquals(p, other.pseudonym("north", "alice"), "without the secret the pseudonym cannot be recomputed");
        assertFalse(p.contains("alice"));
        String key = PersonKeys.recordKey(p, k.imageTag("ab".repeat(32)), 3);
        assertEquals(Optional.of(p), PersonKeys.pseudonymOf(key));
        assertEquals(Optional.empty(), PersonKeys.pseudonymOf("enrollment"), "older records' key");
        assertThrows(java.nio.file.FileAlreadyExistsException.class, () -> PersonKeys.writeNew(dir.resolve("secret")));
    }

    @Test
    void aCommandIsSignedInItsOwnDomainAndAReportHoldsNoLabel() {
        var kp = SignedControl.generate();
        String person = PersonKeys.of(new byte[32]).pseudonym("north", "alice");
        ProducerRecord<String, byte[]> cmd = Erasures.command(kp.getPrivate(), "ops-1", "north", "dana", 1000, person, "req-1");
        assertEquals("privface.north.erasure", cmd.topic());
        assertEquals(person, cmd.key());
        ConsumerRecord<String, byte[]> in = consumed(cmd);
        assertTrue(Erasures.isCommand(in.value()));
        Erasures.Command c = Erasures.readCommand(in);
        assertEquals(person, c.person());
        assertEquals("north", c.site());
        assertTrue(SignedControl.verify(SignedControl.ERASURE_DOMAIN, kp.getPublic(), "north", c.envelope(), in.value()));
        assertFalse(SignedControl.verify(kp.getPublic(), "north", c.envelope(), in.value()), "no control signature");
        assertFalse(SignedControl.verify(SignedControl.ERASURE_DOMAIN, kp.getPublic(), "south", c.envelope(), in.value()));

        ProducerRecord<String, byte[]> rep = Erasures.report("north", new Erasures.Report(person, "req-1", "gateway:g1",
                Instant.ofEpochMilli(5), Map.of("images", "3")));
        assertFalse(Erasures.isCommand(rep.value()));
        Erasures.Report r = Erasures.readReport(rep.value());
        assertEquals("gateway:g1", r.component());
        assertEquals(Map.of("images", "3"), r.counts());
        assertFalse(new String(rep.value(), StandardCharsets.UTF_8).contains("alice"));
        assertThrows(IllegalArgumentException.class, () -> Erasures.command(kp.getPrivate(), "ops-1", "north", "dana", 1,
                "alice", "req-2"), "a label is not a pseudonym");
    }

    private static ConsumerRecord<String, byte[]> consumed(ProducerRecord<String, byte[]> p) {
        return new ConsumerRecord<>(p.topic(), 0, 0, 0, TimestampType.CREATE_TIME, 0, 0, p.key(), p.value(),
                new RecordHeaders(p.headers().toArray()), Optional.empty());
    }
}
