package org.privface.agent.control;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

import io.micronaut.serde.ObjectMapper;
import io.micronaut.serde.annotation.Serdeable;
import org.apache.kafka.common.header.Headers;
import org.privface.agent.AgentSettings;
import org.privface.wire.control.SignedControl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides whether a control record may reach the policy: it must be signed (Ed25519, see
 * {@link SignedControl}) for this site by a key from the gateway's own configuration, be issued
 * after the last record accepted from that key, and be neither stale nor from the future. The last
 * issued-at per key and the last accepted signature are kept in {@code control-counters.json} in
 * the data dir, written and forced to disk before the change is applied, so a restart forgets no
 * counter.
 *
 * <p>At start the gateway replays its compacted control topic. There, records no later than a
 * key's counter are history this gateway has already judged: they are passed over in silence,
 * except the last accepted record itself, which is applied once more, so a restart keeps the
 * site's latest instruction. After the replay, any record that does not advance its key's
 * counter is refused as a replay.
 */
public final class ControlSignatures {
    private static final Logger LOG = LoggerFactory.getLogger(ControlSignatures.class);
    static final String STATE_FILE = "control-counters.json";

    public enum Kind {
        /** Signed, fresh and newer than anything from its key: apply it. */
        APPLY,
        /** The last accepted record, met again while replaying the topic at start: apply it again. */
        REAPPLY,
        /** Already judged before this start (replayed history): change nothing, audit nothing. */
        SKIP,
        /** Unsigned, unknown key, bad signature, replayed, stale or from the future: audit and ignore. */
        REFUSE
    }

    /** The verdict on one record; {@code envelope} is null when the record carried no readable signature. */
    public record Verdict(Kind kind, SignedControl.Envelope envelope, String reason) {
    }

    @Serdeable
    record State(Map<String, Long> lastIssuedAt, String lastSignature) {
    }

    private final String site;
    private final Map<String, PublicKey> keys;
    private final Duration maxAge;
    private final Duration maxSkew;
    private final Clock clock;
    private final Path stateFile;
    private final ObjectMapper json;
    private final Map<String, Long> lastIssuedAt = new LinkedHashMap<>();
    private byte[] lastSignature;
    private boolean reapplied;

    public ControlSignatures(String site, Map<String, PublicKey> keys, Duration maxAge, Duration maxSkew, Clock clock,
                             Path dataDir, ObjectMapper json) {
        if (maxAge.isNegative() || maxAge.isZero() || maxSkew.isNegative()) {
            throw new IllegalArgumentException("agent.control.max-record-age must be positive and max-clock-skew not negative");
        }
        this.site = site;
        this.keys = Map.copyOf(keys);
        this.maxAge = maxAge;
        this.maxSkew = maxSkew;
        this.clock = clock;
        this.stateFile = dataDir.resolve(STATE_FILE);
        this.json = json;
        if (Files.exists(stateFile)) {
            try {
                State s = json.readValue(Files.readAllBytes(stateFile), State.class);
                if (s.lastIssuedAt() != null) {
                    lastIssuedAt.putAll(s.lastIssuedAt());
                }
                lastSignature = s.lastSignature() == null ? null : Base64.getDecoder().decode(s.lastSignature());
            } catch (IOException | RuntimeException e) {
                // Starting without the counters would reopen every replay: refuse to start instead.
                throw new IllegalStateException("cannot read " + stateFile + " (delete it only if replays of old signed"
                        + " control records are acceptable): " + e.getMessage(), e);
            }
        }
        if (keys.isEmpty()) {
            LOG.warn("no operator keys configured (agent.control.operator-keys): every control-topic record is refused");
        }
    }

    /** From {@code agent.control.*}: the keys listed inline and in the keys file, the bounds, the data dir. */
    public static ControlSignatures of(AgentSettings settings, ObjectMapper json) {
        AgentSettings.Control c = settings.getControl();
        return new ControlSignatures(settings.getSiteId(), trustedKeys(c), c.getMaxRecordAge(), c.getMaxClockSkew(),
                Clock.systemUTC(), settings.getDataDir(), json);
    }

    /** The operator keys of the gateway's configuration; they also sign erasure commands (docs/operations.md). */
    public static Map<String, PublicKey> trustedKeys(AgentSettings.Control c) {
        Map<String, String> encoded = new LinkedHashMap<>(c.getOperatorKeys());
        Path file = c.getKeysFile();
        if (file != null && Files.exists(file)) {
            try {
                for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                    String l = line.strip();
                    if (l.isEmpty() || l.startsWith("#")) {
                        continue;
                    }
                    int colon = l.indexOf(':');
                    if (colon < 1) {
                        throw new IllegalArgumentException("agent.control.keys-file " + file + ": a line is not key-id: base64");
                    }
                    encoded.put(l.substring(0, colon).strip(), l.substring(colon + 1).strip());
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read agent.control.keys-file " + file, e);
            }
        } else if (file != null) {
            LOG.warn("agent.control.keys-file {} does not exist: no keys from it", file);
        }
        Map<String, PublicKey> keys = new LinkedHashMap<>();
        encoded.forEach((id, b64) -> {
            SignedControl.checkName("agent.control.operator-keys key id", id);
            try {
                keys.put(id, SignedControl.publicKey(b64));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("operator key " + id + ": " + e.getMessage(), e);
            }
        });
        return keys;
    }

    /**
     * Judges a record of this site's control topic.
     *
     * @param replaying whether the record was on the topic before this gateway started reading it
     */
    public synchronized Verdict check(Headers headers, byte[] body, boolean replaying) {
        SignedControl.Envelope e;
        try {
            e = SignedControl.Envelope.of(headers);
        } catch (IllegalArgumentException ex) {
            return new Verdict(Kind.REFUSE, null, ex.getMessage());
        }
        PublicKey key = keys.get(e.keyId());
        if (key == null) {
            return new Verdict(Kind.REFUSE, e, "unknown key " + e.keyId() + ": not among this gateway's operator keys");
        }
        if (!SignedControl.verify(key, site, e, body)) {
            return new Verdict(Kind.REFUSE, e, "bad signature for key " + e.keyId()
                    + ": the record was altered, signed for another site, or not signed with that key");
        }
        Long last = lastIssuedAt.get(e.keyId());
        if (last != null && e.issuedAt() <= last) {
            if (replaying && !reapplied && Arrays.equals(e.signature(), lastSignature)) {
                reapplied = true;
                return new Verdict(Kind.REAPPLY, e, "");
            }
            if (replaying) {
                return new Verdict(Kind.SKIP, e, "");
            }
            return new Verdict(Kind.REFUSE, e, "replayed: issued at " + Instant.ofEpochMilli(e.issuedAt())
                    + ", not after " + Instant.ofEpochMilli(last) + ", the last accepted from key " + e.keyId());
        }
        Instant now = clock.instant();
        Instant issued = Instant.ofEpochMilli(e.issuedAt());
        if (issued.isAfter(now.plus(maxSkew))) {
            return new Verdict(Kind.REFUSE, e, "issued at " + issued + ", more than " + maxSkew + " ahead of the gateway's clock");
        }
        if (issued.isBefore(now.minus(maxAge))) {
            return new Verdict(Kind.REFUSE, e, "stale: issued at " + issued + ", more than " + maxAge + " ago");
        }
        return new Verdict(Kind.APPLY, e, "");
    }

    /**
     * Records an {@link Kind#APPLY} verdict's key counter and signature on disk; call before applying the change.
     *
     * @throws UncheckedIOException when they cannot be written; nothing is recorded, and the record may be judged again
     */
    public synchronized void accepted(Verdict v) {
        if (v.kind() != Kind.APPLY) {
            return;
        }
        Map<String, Long> next = new LinkedHashMap<>(lastIssuedAt);
        next.put(v.envelope().keyId(), v.envelope().issuedAt());
        // On disk first: a counter that could not be written is not advanced, so the record can be retried.
        persist(next, v.envelope().signature());
        lastIssuedAt.putAll(next);
        lastSignature = v.envelope().signature();
        // The record applied in this run is the one a restart applies again; none before it.
        reapplied = true;
    }

    private void persist(Map<String, Long> counters, byte[] signature) {
        Path tmp = stateFile.resolveSibling(STATE_FILE + ".tmp");
        try {
            Files.createDirectories(stateFile.getParent());
            byte[] b = json.writeValueAsBytes(new State(counters, Base64.getEncoder().encodeToString(signature)));
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer buf = ByteBuffer.wrap(b);
                while (buf.hasRemaining()) { // a filling disk may take part of a write
                    ch.write(buf);
                }
                ch.force(true);
            }
            Files.move(tmp, stateFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + stateFile, e);
        }
    }

    public int keyCount() {
        return keys.size();
    }
}
