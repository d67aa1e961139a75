package org.privface.recognizer.status;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import io.micronaut.core.type.Argument;
import io.micronaut.serde.ObjectMapper;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.privface.recognizer.polling.PollingWorker;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.topics.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows every site's compacted status topic, where each gateway reports the policy it applies,
 * its floor, its cameras, its budget counters and its latest policy changes (never face data),
 * and keeps each gateway's latest report and the one before, for rates. A package of its own,
 * beneath the gallery service (which calibrates at the ε the gateways report) and the console.
 */
@Singleton
public class StatusReader extends PollingWorker {
    private static final Logger LOG = LoggerFactory.getLogger(StatusReader.class);
    /** A report is a few kilobytes; anything far larger is not a gateway's. */
    static final int MAX_REPORT_BYTES = 256 * 1024;

    /** One gateway's report as received, and when it was received. */
    public record Report(Instant receivedAt, Map<String, Object> body) {
    }

    /** The latest report of a gateway and the one before it (null until there are two). */
    public record Latest(Report current, Report previous) {
    }

    private final KafkaClientProperties kafka;
    private final ObjectMapper json;
    private final Map<String, Map<String, Latest>> bySite = new ConcurrentHashMap<>();

    public StatusReader(KafkaClientProperties kafka, ObjectMapper json) {
        super("status-reader");
        this.kafka = kafka;
        this.json = json;
    }

    /** Site → gateway → its latest reports, sorted by name. */
    public Map<String, Map<String, Latest>> gateways() {
        Map<String, Map<String, Latest>> copy = new TreeMap<>();
        bySite.forEach((site, g) -> copy.put(site, new TreeMap<>(g)));
        return copy;
    }

    @Override
    protected void runLoop() throws InterruptedException {
        readEverything(kafka, Topics.ALL_STATUS, "privface-recognizer-status", "status", this::accept);
    }

    void accept(ConsumerRecord<String, byte[]> rec) {
        String site = Topics.siteOf(rec.topic());
        if (rec.key() == null || rec.value() == null || rec.value().length > MAX_REPORT_BYTES) {
            return; // a tombstone, or not a gateway's report
        }
        Map<String, Object> body;
        try {
            body = json.readValue(rec.value(), Argument.mapOf(String.class, Object.class));
        } catch (Exception e) {
            LOG.warn("unreadable status report from {} on {}: {}", rec.key(), rec.topic(), e.getClass().getSimpleName());
            return;
        }
        if (body == null || !site.equals(body.get("site"))) {
            LOG.warn("status report on {} names site {}; ignored", rec.topic(), body == null ? null : body.get("site"));
            return;
        }
        // The record's own time, so an old report replayed after a restart does not read as live.
        Report r = new Report(Instant.ofEpochMilli(rec.timestamp()), body);
        bySite.computeIfAbsent(site, s -> new ConcurrentHashMap<>())
                .compute(rec.key(), (g, old) -> new Latest(r, old == null ? null : old.current()));
    }

    /** Sums a counter over a report's cameras; {@code a.b} names counter b of a camera's section a. */
    public static double cameraTotal(Map<String, Object> report, String counter) {
        Object cams = report.get("cameras");
        double sum = 0;
        if (cams instanceof Map<?, ?> m) {
            for (Object c : m.values()) {
                Object v = c;
                for (String part : counter.split("\\.")) {
                    v = v instanceof Map<?, ?> cm ? cm.get(part) : null;
                }
                if (v instanceof Number n) {
                    sum += n.doubleValue();
                }
            }
        }
        return sum;
    }

    /** Per second, between a gateway's two latest reports; 0 until there are two. */
    public static double rate(Latest l, String counter) {
        if (l.previous() == null) {
            return 0;
        }
        double dt = Duration.between(l.previous().receivedAt(), l.current().receivedAt()).toMillis() / 1000.0;
        double d = cameraTotal(l.current().body(), counter) - cameraTotal(l.previous().body(), counter);
        return dt <= 0 || d < 0 ? 0 : d / dt;
    }
}
