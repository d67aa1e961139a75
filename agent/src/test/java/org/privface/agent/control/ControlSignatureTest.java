package org.privface.agent.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;

import io.micronaut.context.ApplicationContext;
import io.micronaut.serde.ObjectMapper;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.agent.AgentSettings;
import org.privface.agent.link.FullDisk;
import org.privface.agent.policy.AuditLog;
import org.privface.kafka.testkit.RealKafka;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * Signed control records against a real broker: a gateway (its configuration, policy store and
 * control topic follower, as the agent builds them) trusts two operator keys, and only records
 * they signed for its site, fresh and newer than the key's last one, change its policy.
 */
class ControlSignatureTest {
    private static final KeyPair CONSOLE = SignedControl.generate();
    private static final KeyPair BACKUP = SignedControl.generate();

    /** One gateway: its context, its state and the follower of its control topic. */
    private record Gateway(ApplicationContext ctx, GatewayState state, ControlTopic topic) implements AutoCloseable {
        static Gateway start(String site, Path dataDir) throws InterruptedException {
            createTopics(site);
            ApplicationContext ctx = ApplicationContext.run(Map.of("kafka.health.enabled", "false",
                    "agent.site-id", site, "agent.gateway-id", "gw-" + site, "agent.epsilon", "16",
                    "agent.data-dir", dataDir.toString(), "agent.floor.epsilon-max", "64",
                    "agent.control.operator-keys.console", SignedControl.base64(CONSOLE.getPublic()),
                    "agent.control.operator-keys.backup", SignedControl.base64(BACKUP.getPublic())));
            ObjectMapper json = ctx.getBean(ObjectMapper.class);
            GatewayState state = ctx.getBean(GatewayState.class);
            ControlTopic topic = new ControlTopic(KafkaClientProperties.bootstrap(RealKafka.bootstrapServers()), state, json,
                    Duration.ofMinutes(1), ControlSignatures.of(ctx.getBean(AgentSettings.class), json));
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (!topic.caughtUp() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertTrue(topic.caughtUp(), "the gateway read its control topic to the end");
            return new Gateway(ctx, state, topic);
        }

        /** The ε in force once it equals {@code expected}, or after 5 s (the audit entry lands just before the change). */
        double epsilon(double expected) throws InterruptedException {
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (state.policies().current().policy().epsilon() != expected && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            return state.policies().current().policy().epsilon();
        }

        /** The audit entry of the record at {@code offset}, waited for up to 20 s. */
        AuditLog.Entry awaitAudit(long offset) throws InterruptedException {
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (System.nanoTime() < deadline) {
                for (AuditLog.Entry e : state.policies().audit().recent()) {
                    if (e.source().equals("control-topic@" + offset)) {
                        return e;
                    }
                }
                Thread.sleep(50);
            }
            throw new AssertionError("no audit entry for control-topic@" + offset + " in " + state.policies().audit().recent());
        }

        Map<String, AuditLog.Entry> bySource() {
            Map<String, AuditLog.Entry> m = new HashMap<>();
            state.policies().audit().recent().forEach(e -> m.put(e.source(), e));
            return m;
        }

        @Override
        public void close() {
            topic.close();
            ctx.close();
        }
    }

    static void createTopics(String site) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        try (Admin admin = Admin.create(p)) {
            new TopicApplier(admin).apply(Topics.definitions(List.of(site)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Headers signed with {@code key} under {@code keyId}, for {@code signedSite}, over {@code body}. */
    static Consumer<Headers> signed(KeyPair key, String keyId, String signedSite, long issuedAt, String body) {
        return h -> SignedControl.sign(key.getPrivate(), keyId, signedSite, "alice", issuedAt,
                body.getBytes(StandardCharsets.UTF_8)).addTo(h);
    }

    /** Writes each record to the site's control topic, keyed by the site; returns their offsets by name. */
    static Map<String, Long> send(String site, Map<String, Map.Entry<String, Consumer<Headers>>> records) throws Exception {
        Properties pp = new Properties();
        pp.put("bootstrap.servers", RealKafka.bootstrapServers());
        Map<String, Long> offsets = new LinkedHashMap<>();
        try (var producer = new KafkaProducer<String, String>(pp, new StringSerializer(), new StringSerializer())) {
            for (var e : records.entrySet()) {
                var rec = new ProducerRecord<>(Topics.control(site), site, e.getValue().getKey());
                e.getValue().getValue().accept(rec.headers());
                offsets.put(e.getKey(), producer.send(rec).get().offset());
            }
        }
        return offsets;
    }

    @Test
    void onlyAFreshRecordSignedForThisSiteByATrustedKeyChangesThePolicy(@TempDir Path dir) throws Exception {
        String site = "sig-refuse";
        long now = System.currentTimeMillis();
        KeyPair stranger = SignedControl.generate();
        String good = "{\"epsilon\": 4}";
        Map<String, Map.Entry<String, Consumer<Headers>>> records = new LinkedHashMap<>();
        records.put("unsigned", Map.entry("{\"epsilon\": 50}",
                h -> h.add(SignedControl.OPERATOR_HEADER, "eve".getBytes(StandardCharsets.UTF_8))));
        records.put("unknown-key", Map.entry("{\"epsilon\": 50}", signed(stranger, "mallory", site, now, "{\"epsilon\": 50}")));
        records.put("forged-key", Map.entry("{\"epsilon\": 50}", signed(stranger, "console", site, now, "{\"epsilon\": 50}")));
        records.put("tampered", Map.entry("{\"epsilon\": 50}", signed(CONSOLE, "console", site, now, "{\"epsilon\": 2}")));
        records.put("other-site", Map.entry("{\"epsilon\": 50}", signed(CONSOLE, "console", "elsewhere", now, "{\"epsilon\": 50}")));
        records.put("stale", Map.entry("{\"epsilon\": 50}",
                signed(BACKUP, "backup", site, now - Duration.ofHours(25).toMillis(), "{\"epsilon\": 50}")));
        records.put("future", Map.entry("{\"epsilon\": 50}",
                signed(BACKUP, "backup", site, now + Duration.ofHours(1).toMillis(), "{\"epsilon\": 50}")));
        records.put("good", Map.entry(good, signed(CONSOLE, "console", site, now - 2000, good)));
        records.put("replay", Map.entry(good, signed(CONSOLE, "console", site, now - 2000, good)));
        records.put("older", Map.entry("{\"epsilon\": 50}", signed(CONSOLE, "console", site, now - 3000, "{\"epsilon\": 50}")));
        records.put("sentinel", Map.entry("{\"epsilon\": 8}", signed(BACKUP, "backup", site, now, "{\"epsilon\": 8}")));

        try (Gateway gw = Gateway.start(site, dir)) {
            long startVersion = gw.state.policies().current().version();
            Map<String, Long> offsets = send(site, records);
            assertEquals("ACCEPTED", gw.awaitAudit(offsets.get("sentinel")).outcome());
            assertEquals(8.0, gw.epsilon(8.0), "the good record after the bad ones still applies");
            assertEquals(startVersion + 2, gw.state.policies().current().version(), "two changes applied, no more");

            Map<String, AuditLog.Entry> audit = gw.bySource();
            Map<String, String> why = Map.of("unsigned", "unsigned", "unknown-key", "unknown key mallory",
                    "forged-key", "bad signature", "tampered", "bad signature", "other-site", "bad signature",
                    "stale", "stale", "future", "ahead of the gateway's clock", "replay", "replayed", "older", "replayed");
            why.forEach((name, reason) -> {
                AuditLog.Entry e = audit.get("control-topic@" + offsets.get(name));
                assertTrue(e != null && e.outcome().equals("REJECTED") && e.reason().contains(reason), name + ": " + e);
            });
            AuditLog.Entry accepted = audit.get("control-topic@" + offsets.get("good"));
            assertEquals("ACCEPTED", accepted.outcome());
            assertEquals(4.0, accepted.epsilonApplied());
            assertEquals("alice", accepted.principal(), "the signed operator name is the principal");
            assertEquals("eve (unverified)", audit.get("control-topic@" + offsets.get("unsigned")).principal());
            String file = Files.readString(dir.resolve("audit.jsonl"));
            assertEquals(9, file.lines().filter(l -> l.contains("\"REJECTED\"") && l.contains("control-topic@")).count(), file);
        }
    }

    @Test
    void theKeysFileAddsKeysAndAMalformedOneStopsTheStart(@TempDir Path dir) throws Exception {
        AgentSettings.Control c = new AgentSettings.Control();
        c.getOperatorKeys().put("console", SignedControl.base64(CONSOLE.getPublic()));
        Path file = dir.resolve("operator-keys");
        Files.writeString(file, "# the site's operators\n\nbackup: " + SignedControl.base64(BACKUP.getPublic()) + "\n");
        c.setKeysFile(file);
        var keys = ControlSignatures.trustedKeys(c);
        assertEquals(List.of("console", "backup"), List.copyOf(keys.keySet()));
        assertEquals(BACKUP.getPublic(), keys.get("backup"));

        c.setKeysFile(dir.resolve("absent"));
        assertEquals(List.of("console"), List.copyOf(ControlSignatures.trustedKeys(c).keySet()), "an absent file adds nothing");
        for (String bad : List.of("backup " + SignedControl.base64(BACKUP.getPublic()), "backup: bm90IGEga2V5",
                "bad id: " + SignedControl.base64(BACKUP.getPublic()))) {
            Files.writeString(file, bad + "\n");
            c.setKeysFile(file);
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> ControlSignatures.trustedKeys(c), bad);
        }
    }

    @Test
    void aRestartKeepsTheCountersAndTheLatestInstructionAndRefusesLaterReplays(@TempDir Path dir) throws Exception {
        String site = "sig-restart";
        long now = System.currentTimeMillis();
        String a = "{\"epsilon\": 4}";
        String b = "{\"epsilon\": 8}";
        Map<String, Map.Entry<String, Consumer<Headers>>> first = new LinkedHashMap<>();
        first.put("a", Map.entry(a, signed(CONSOLE, "console", site, now - 1000, a)));
        first.put("b", Map.entry(b, signed(CONSOLE, "console", site, now, b)));
        Map<String, Long> offsets;
        try (Gateway gw = Gateway.start(site, dir)) {
            offsets = send(site, first);
            assertEquals("ACCEPTED", gw.awaitAudit(offsets.get("b")).outcome());
            assertEquals(8.0, gw.epsilon(8.0));
        }
        assertTrue(Files.readString(dir.resolve(ControlSignatures.STATE_FILE)).contains("\"console\":" + now),
                "the key's counter is on the gateway's disk");

        try (Gateway gw = Gateway.start(site, dir)) {
            // b, the last record accepted before, is applied again; a, judged before, is passed over.
            assertEquals("ACCEPTED", gw.awaitAudit(offsets.get("b")).outcome());
            assertEquals(8.0, gw.epsilon(8.0), "the latest instruction survives the restart");
            assertTrue(!gw.bySource().containsKey("control-topic@" + offsets.get("a")),
                    "a record from before the last accepted one is not applied again: " + gw.bySource());

            // Once the topic is read, copies of either are replays.
            Map<String, Map.Entry<String, Consumer<Headers>>> replays = new LinkedHashMap<>();
            replays.put("a-again", first.get("a"));
            replays.put("b-again", first.get("b"));
            Map<String, Long> again = send(site, replays);
            for (String name : List.of("a-again", "b-again")) {
                AuditLog.Entry e = gw.awaitAudit(again.get(name));
                assertTrue(e.outcome().equals("REJECTED") && e.reason().startsWith("replayed"), name + ": " + e);
            }
            assertEquals(8.0, gw.epsilon(8.0));
        }
    }

    /**
     * The data dir fills up (a tmpfs; docs/reliability.md, "The ledger's disk fills up"): a signed
     * record whose counter cannot be written changes nothing, and once space returns it applies,
     * and the gateway goes on following its topic.
     */
    @Test
    void aFullDiskHoldsAChangeBackUntilItsCounterCanBeWrittenAndTheTopicIsStillFollowed(@TempDir Path dir)
            throws Exception {
        String site = "sig-full";
        FullDisk disk = FullDisk.mount(dir, 64 * 1024);
        assumeTrue(disk != null, "mounting a tmpfs is not allowed here (needs root or CAP_SYS_ADMIN): no full disk to test on");
        try (disk; Gateway gw = Gateway.start(site, dir)) {
            long now = System.currentTimeMillis();
            String a = "{\"epsilon\": 4}";
            String b = "{\"epsilon\": 8}";
            disk.fill();
            long offsetA = send(site, Map.of("a", Map.entry(a, signed(CONSOLE, "console", site, now - 1000, a)))).get("a");
            Thread.sleep(3000); // three retries
            assertEquals(16.0, gw.state.policies().current().policy().epsilon(), "nothing changes while the counter cannot be written");
            disk.free(Integer.MAX_VALUE);
            assertEquals("ACCEPTED", gw.awaitAudit(offsetA).outcome(), "space is back: the held record applies");
            assertEquals(4.0, gw.epsilon(4.0));
            long offsetB = send(site, Map.of("b", Map.entry(b, signed(CONSOLE, "console", site, now, b)))).get("b");
            assertEquals("ACCEPTED", gw.awaitAudit(offsetB).outcome(), "the topic is still followed");
            assertEquals(8.0, gw.epsilon(8.0));
        }
    }
}
