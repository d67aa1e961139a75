package org.privface.wire.erasure;

import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.Topics;

/**
 * The records of a site's erasure topic ({@link Topics#erasure}), which is also the erasure audit
 * trail: the operator's signed command to forget one person, and each component's report that it
 * has. Both are keyed by the person's pseudonym ({@link PersonKeys}) and hold nothing else about
 * the person: no label, no face, no vector.
 *
 * <p>A value is UTF-8 lines {@code name=value}, in the order written here; values are
 * {@code [A-Za-z0-9._:@-]}. A command is {@code action=erase}, {@code person}, {@code request}
 * (a UUID), signed in the domain {@link SignedControl#ERASURE_DOMAIN} exactly like a control
 * record (the four headers of docs/agent.md, "Signed control records"), so neither signature
 * passes for the other. A report is {@code action=completed}, {@code person}, {@code request},
 * {@code component} ({@code gateway:<id>} or {@code recognizer:<instance>}), {@code at}
 * (epoch milliseconds), then the component's own counts; it is not signed: the broker's ACLs
 * say who may write the topic (docs/operations.md, "Forgetting a person").
 */
public final class Erasures {
    private static final Pattern VALUE = Pattern.compile("[A-Za-z0-9._:@-]{1,128}");
    private static final Pattern NAME = Pattern.compile("[a-zA-Z][a-zA-Z0-9.]{0,63}");
    /** Largest erasure record read. */
    public static final int MAX_BYTES = 2048;

    private Erasures() {
    }

    /** An operator's instruction: forget {@code person} at {@code site}. */
    public record Command(String site, String person, String request, SignedControl.Envelope envelope) {
    }

    /** A component's report that it has forgotten the person of {@code request}. */
    public record Report(String person, String request, String component, Instant at, Map<String, String> counts) {
    }

    /** The body a command signs. */
    public static byte[] commandBody(String person, String request) {
        return lines(Map.of("action", "erase", "person", PersonKeys.checkPseudonym(person), "request", check(request)),
                "action", "person", "request");
    }

    /** A signed command, ready to send. */
    public static ProducerRecord<String, byte[]> command(PrivateKey key, String keyId, String site, String operator,
                                                         long issuedAt, String person, String request) {
        byte[] body = commandBody(person, request);
        SignedControl.Envelope e = SignedControl.sign(SignedControl.ERASURE_DOMAIN, key, keyId, site, operator, issuedAt, body);
        ProducerRecord<String, byte[]> r = new ProducerRecord<>(Topics.erasure(site), person, body);
        e.addTo(r.headers());
        return r;
    }

    public static String newRequestId() {
        return UUID.randomUUID().toString();
    }

    /** A completion report, ready to send. */
    public static ProducerRecord<String, byte[]> report(String site, Report r) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("action", "completed");
        m.put("person", PersonKeys.checkPseudonym(r.person()));
        m.put("request", check(r.request()));
        m.put("component", check(r.component()));
        m.put("at", Long.toString(r.at().toEpochMilli()));
        r.counts().forEach((k, v) -> {
            if (!NAME.matcher(k).matches() || m.containsKey(k)) {
                throw new IllegalArgumentException("report count name " + k);
            }
            m.put(k, check(v));
        });
        return new ProducerRecord<>(Topics.erasure(site), r.person(), lines(m, m.keySet().toArray(String[]::new)));
    }

    /**
     * Reads a command: its fields and its (unverified) envelope; see {@link SignedControl#verify}
     * with {@link SignedControl#ERASURE_DOMAIN} over {@code record.value()}.
     *
     * @throws IllegalArgumentException when the record is not a well-formed command for its topic's site
     */
    public static Command readCommand(ConsumerRecord<String, byte[]> record) {
        Map<String, String> m = parse(record.value());
        if (!"erase".equals(m.get("action")) || m.size() != 3) {
            throw new IllegalArgumentException("not an erasure command");
        }
        String person = PersonKeys.checkPseudonym(m.get("person"));
        if (!person.equals(record.key())) {
            throw new IllegalArgumentException("a command's key must be its person");
        }
        return new Command(Topics.siteOf(record.topic()), person, check(m.get("request")),
                SignedControl.Envelope.of(record.headers()));
    }

    /** Whether a record on the erasure topic is a command (else a report, or nothing of ours). */
    public static boolean isCommand(byte[] value) {
        return value != null && value.length <= MAX_BYTES && new String(value, StandardCharsets.UTF_8).startsWith("action=erase\n");
    }

    /** Reads a report. */
    public static Report readReport(byte[] value) {
        Map<String, String> m = parse(value);
        if (!"completed".equals(m.get("action"))) {
            throw new IllegalArgumentException("not an erasure report");
        }
        Map<String, String> counts = new LinkedHashMap<>(m);
        for (String k : new String[] {"action", "person", "request", "component", "at"}) {
            counts.remove(k);
        }
        return new Report(PersonKeys.checkPseudonym(m.get("person")), check(m.get("request")), check(m.get("component")),
                Instant.ofEpochMilli(Long.parseLong(m.get("at"))), counts);
    }

    private static Map<String, String> parse(byte[] value) {
        if (value == null || value.length > MAX_BYTES) {
            throw new IllegalArgumentException("an erasure record is 1 to " + MAX_BYTES + " bytes");
        }
        Map<String, String> m = new LinkedHashMap<>();
        String text = new String(value, StandardCharsets.UTF_8);
        if (!text.endsWith("\n")) {
            throw new IllegalArgumentException("an erasure record ends with a newline");
        }
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq < 1 || m.put(line.substring(0, eq), check(line.substring(eq + 1))) != null) {
                throw new IllegalArgumentException("malformed or repeated line in an erasure record");
            }
        }
        return m;
    }

    private static byte[] lines(Map<String, String> m, String... order) {
        StringBuilder b = new StringBuilder();
        for (String k : order) {
            b.append(k).append('=').append(m.get(k)).append('\n');
        }
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static String check(String v) {
        if (v == null || !VALUE.matcher(v).matches()) {
            throw new IllegalArgumentException("erasure record values are 1-128 of A-Z a-z 0-9 . _ : @ -, not '" + v + "'");
        }
        return v;
    }
}
