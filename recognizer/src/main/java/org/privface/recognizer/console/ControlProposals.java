package org.privface.recognizer.console;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.security.PrivateKey;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.micronaut.context.env.Environment;
import io.micronaut.serde.ObjectMapper;
import io.micronaut.serde.annotation.Serdeable;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.Topics;

/**
 * Writes an operator's proposed ε to the site's compacted control topic, keyed by the site and
 * signed ({@link SignedControl}) with the console's operator key, the logged-in operator's name
 * inside the signature. Gateways that list the key's public half obey it; the gateway decides:
 * it applies, clamps to its floor, or refuses, and says which in its status report. Each proposal
 * is kept here (and appended to {@code recognizer.console.audit-file}) with its offset, which is
 * how its outcome is found in the gateways' reports.
 *
 * <p>On a secured cluster the writer is the {@code operator} principal: {@code
 * recognizer.console.kafka.*} overrides {@code kafka.*} for this one producer (its SASL login),
 * so the recognizer's own principal never needs write access to control topics.
 */
@Singleton
public class ControlProposals implements AutoCloseable {
    /** Largest ε an operator may propose; the gateway's floor is usually far lower. */
    static final double MAX_EPSILON = 1e6;
    private static final int KEPT = 1000;

    @Serdeable
    public record Proposal(Instant at, String operator, String site, double epsilon, long offset, String keyId) {
    }

    /** The console holds no signing key, so nothing it wrote would be obeyed. */
    public static final class NotConfigured extends IllegalStateException {
        NotConfigured(String message) {
            super(message);
        }
    }

    private final KafkaProducer<String, String> producer;
    private final ObjectMapper json;
    private final ConsoleSettings settings;
    private final Deque<Proposal> recent = new ArrayDeque<>();
    private final PrivateKey signingKey;
    /** The last issued-at used; each record's is later, as the gateways' per-key counter needs. */
    private long lastIssuedAt;

    public ControlProposals(Environment env, ConsoleSettings settings, ObjectMapper json) {
        this.settings = settings;
        this.json = json;
        Map<String, Object> merged = new HashMap<>(env.getProperties("kafka"));
        merged.putAll(env.getProperties("recognizer.console.kafka"));
        Properties p = KafkaClientProperties.of(merged).producer();
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 5_000);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "privface-console");
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
        this.signingKey = signingKey(settings);
    }

    private static PrivateKey signingKey(ConsoleSettings settings) {
        SignedControl.checkName("recognizer.console.signing-key-id", settings.getSigningKeyId());
        String b64 = settings.getSigningKey();
        if ((b64 == null || b64.isBlank()) && settings.getSigningKeyFile() != null) {
            if (!Files.exists(settings.getSigningKeyFile())) {
                return null; // an optional Secret that was not created: proposals say so
            }
            try {
                b64 = Files.readString(settings.getSigningKeyFile(), StandardCharsets.US_ASCII);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read recognizer.console.signing-key-file", e);
            }
        }
        if (b64 == null || b64.isBlank()) {
            return null;
        }
        try {
            return SignedControl.privateKey(b64);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("recognizer.console.signing-key: " + e.getMessage(), e);
        }
    }

    /** Later than any issued-at this console used before, and never behind the clock. */
    private synchronized long nextIssuedAt() {
        lastIssuedAt = Math.max(System.currentTimeMillis(), lastIssuedAt + 1);
        return lastIssuedAt;
    }

    /** Checks, like the gateway will, before anything is written: a clear error beats a rejected record. */
    static void check(String site, double epsilon) {
        Topics.control(site); // throws on a malformed site name
        if (!Double.isFinite(epsilon) || epsilon <= 0 || epsilon > MAX_EPSILON) {
            throw new IllegalArgumentException("epsilon must be a finite number in (0, " + (long) MAX_EPSILON
                    + "], not " + epsilon);
        }
    }

    public Proposal propose(String operator, String site, double epsilon) {
        check(site, epsilon);
        if (signingKey == null) {
            throw new NotConfigured("the console has no operator signing key (recognizer.console.signing-key-file), and"
                    + " gateways refuse unsigned control records");
        }
        Map<String, Object> change = new LinkedHashMap<>();
        change.put("epsilon", epsilon);
        ProducerRecord<String, String> rec;
        try {
            rec = new ProducerRecord<>(Topics.control(site), site, json.writeValueAsString(change));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // The value goes out as these UTF-8 bytes (StringSerializer), exactly what is signed.
        SignedControl.sign(signingKey, settings.getSigningKeyId(), site, operator, nextIssuedAt(),
                rec.value().getBytes(StandardCharsets.UTF_8)).addTo(rec.headers());
        RecordMetadata md;
        try {
            md = producer.send(rec).get(15, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while writing to " + rec.topic());
        } catch (ExecutionException | TimeoutException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            throw new IllegalStateException("the broker did not take the change on " + rec.topic() + ": " + c.getMessage());
        }
        Proposal p = new Proposal(Instant.now(), operator, site, epsilon, md.offset(), settings.getSigningKeyId());
        keep(p);
        return p;
    }

    private synchronized void keep(Proposal p) {
        if (settings.getAuditFile() != null) {
            try {
                if (settings.getAuditFile().getParent() != null) {
                    Files.createDirectories(settings.getAuditFile().getParent());
                }
                Files.writeString(settings.getAuditFile(), json.writeValueAsString(p) + "\n", StandardCharsets.UTF_8,
                        StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot append to " + settings.getAuditFile(), e);
            }
        }
        recent.addFirst(p);
        while (recent.size() > KEPT) {
            recent.removeLast();
        }
    }

    /** Newest first. */
    public synchronized List<Proposal> recent() {
        return new ArrayList<>(recent);
    }

    @PreDestroy
    @Override
    public void close() {
        producer.close(java.time.Duration.ofSeconds(2));
    }
}
