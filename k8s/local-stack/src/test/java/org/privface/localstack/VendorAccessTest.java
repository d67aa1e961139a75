package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.privface.localstack.FaultKit.deleteRecursively;
import static org.privface.localstack.MultiSiteSecurityTest.ADMIN;
import static org.privface.localstack.MultiSiteSecurityTest.SITES;
import static org.privface.localstack.MultiSiteSecurityTest.assertDenied;
import static org.privface.localstack.MultiSiteSecurityTest.awaitAuthenticates;
import static org.privface.localstack.MultiSiteSecurityTest.consumerProps;
import static org.privface.localstack.MultiSiteSecurityTest.producer;
import static org.privface.localstack.MultiSiteSecurityTest.readOne;
import static org.privface.localstack.MultiSiteSecurityTest.write;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.privface.broker.KafkaServerProcess;
import org.privface.privacy.Release;
import org.privface.agent.publish.FacePublisher;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.security.PrincipalSpec;
import org.privface.wire.security.Security;
import org.privface.wire.security.SecurityApplier;
import org.privface.wire.topics.TopicSpec;
import org.privface.wire.topics.Topics;

/**
 * Issue 24: a third-party recognizer declared in security.yml's {@code vendors:} on a real broker
 * process secured like production (SASL_SSL with SCRAM-SHA-512, a CA made at start-up, ACLs from
 * {@link SecurityApplier}). The gateway's own {@link FacePublisher} (lz4) publishes as agent-north.
 * The vendor reads its site's faces in its own consumer group and writes its own results topic,
 * from Java and from Node.js (kafkajs and avsc from npm, written from docs/wire.md); the broker
 * refuses it everything else. Moved to {@code retired:} and pruned, it can no longer log in.
 * Also: formatting the secured broker's storage leaves no SCRAM secret in the log.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class VendorAccessTest {
    static {
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients", "off");
    }

    private static final String VENDOR = "acme";

    private Path root;
    private Path work;
    private KafkaServerProcess kafka;
    private String bootstrap;
    private final Map<String, String> passwords = new LinkedHashMap<>();
    private List<PrincipalSpec> declared;
    private List<TopicSpec> topics;
    /** What agent-north published, by event id. */
    private final Map<String, PerturbedFace> published = new LinkedHashMap<>();

    private static List<PrincipalSpec> principals(String extraYaml) {
        List<PrincipalSpec> out = new ArrayList<>(Security.definitions(SITES));
        out.addAll(Security.parse(new ByteArrayInputStream(("principals: []\n" + extraYaml)
                .getBytes(StandardCharsets.UTF_8)), SITES));
        return out;
    }

    @BeforeAll
    void secureBrokerWithAVendor() throws Exception {
        root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        BrokerOutageTest.assumeBrokerJarsResolvable(root);
        work = Files.createTempDirectory("privface-vendor-");
        declared = principals("vendors:\n  - {name: " + VENDOR + ", sites: [north], results: true}\n");
        topics = new ArrayList<>(Topics.definitions(SITES));
        topics.addAll(Security.vendorTopics(declared));

        long t0 = System.nanoTime();
        // As the demo's broker: SASL_SSL with a fresh CA, users and ACLs applied by SecurityApplier.
        LocalBroker broker = LocalBroker.secured(root, work, topics, declared);
        kafka = broker.process();
        passwords.putAll(broker.passwords());
        System.out.printf("vendor access: SASL_SSL broker with a fresh CA and the ACLs up in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        bootstrap = kafka.bootstrapServers();
        SecurityApplier.Report applied = broker.applied();
        assertTrue(applied.topics().created().contains(Security.vendorResultsTopic(VENDOR)), applied.describe());
        assertTrue(applied.usersCreated().contains(VENDOR), applied.describe());
        awaitAuthenticates(bootstrap, VENDOR, passwords);
        awaitAuthenticates(bootstrap, "agent-north", passwords);

        // The gateway's own publisher (idempotent, acks=all, lz4) with agent-north's credentials.
        Map<String, Object> client = new HashMap<>();
        MultiSiteSecurityTest.as(bootstrap, "agent-north", passwords).forEach((k, v) -> client.put((String) k, v));
        try (FacePublisher publisher = new FacePublisher(KafkaClientProperties.of(client), "north", new Properties())) {
            Instant at = Instant.ofEpochMilli(1_700_000_000_000L);
            for (int i = 0; i < 4; i++) {
                Release r = new Release(new double[] {0.25 * i, -1.5, 3.0e-3 * i, 7}, "PEEP", "vector", 2.5, 10,
                        0.4, "basis-" + i % 2, null);
                PerturbedFace f = new org.privface.agent.publish.PerturbedRecords("north").of(r, i < 2 ? "enrollment" : "north-door", "track-" + i,
                        at.plusMillis(i), i < 2 ? "person-" + i : null);
                publisher.send(f).get(20, TimeUnit.SECONDS);
                published.put(f.getEventId(), f);
            }
        }
    }

    @AfterAll
    void stop() {
        if (kafka != null) {
            kafka.close();
        }
        if (work != null) {
            deleteRecursively(work);
        }
    }

    @Test
    @Order(1)
    void formattingTheStorageLeavesNoScramSecretInTheLog() throws Exception {
        String formatLog = Files.readString(work.resolve("kafka-format.log"));
        assertFalse(formatLog.contains("storedKey") || formatLog.contains("salt=")
                || formatLog.contains(passwords.get(ADMIN)), "a SCRAM secret in kafka-format.log");
        assertTrue(formatLog.contains("withheld"), formatLog);
        assertTrue(Files.readString(kafka.caFile()).startsWith("-----BEGIN CERTIFICATE-----"));
        assertEquals("SASL_SSL", MultiSiteSecurityTest.as(bootstrap, VENDOR, passwords).get("security.protocol"));
    }

    @Test
    @Order(2)
    void aJavaVendorReadsItsSitesFacesInItsOwnGroupAndNothingElse() throws Exception {
        PerturbedFace read = readInGroup(bootstrap, passwords, Security.vendorGroupPrefix(VENDOR) + "trainer",
                Topics.enrollment("north"));
        assertEquals(published.get(read.getEventId()), read);
        try (KafkaProducer<String, byte[]> p = producer(bootstrap, VENDOR, passwords)) {
            p.send(new ProducerRecord<>(Security.vendorResultsTopic(VENDOR), "north-door", new byte[] {1}))
                    .get(20, TimeUnit.SECONDS);
        }
        assertDenied(TopicAuthorizationException.class, () -> readOne(bootstrap, VENDOR, passwords, Topics.enrollment("south")));
        assertDenied(TopicAuthorizationException.class, () -> readOne(bootstrap, VENDOR, passwords, Topics.query("south")));
        // Answers: the vendor reads its sites' (docs/wire.md, a stated choice), never another site's, never writes.
        assertDenied(TopicAuthorizationException.class, () -> readOne(bootstrap, VENDOR, passwords, Topics.answer("south")));
        assertDenied(TopicAuthorizationException.class, () -> write(bootstrap, VENDOR, passwords, Topics.answer("north")));
        assertDenied(TopicAuthorizationException.class, () -> readOne(bootstrap, VENDOR, passwords, Topics.control("north")));
        assertDenied(TopicAuthorizationException.class, () -> readOne(bootstrap, VENDOR, passwords, Topics.status("north")));
        // The gallery model is for the site's gateways only.
        assertDenied(TopicAuthorizationException.class, () -> readOne(bootstrap, VENDOR, passwords, Topics.gallery("north")));
        assertDenied(TopicAuthorizationException.class, () -> readOne(bootstrap, VENDOR, passwords, Topics.RESULTS));
        assertDenied(TopicAuthorizationException.class, () -> write(bootstrap, VENDOR, passwords, Topics.enrollment("north")));
        assertDenied(TopicAuthorizationException.class, () -> write(bootstrap, VENDOR, passwords, Topics.query("north")));
        assertDenied(TopicAuthorizationException.class, () -> write(bootstrap, VENDOR, passwords, Topics.control("north")));
        assertDenied(TopicAuthorizationException.class, () -> write(bootstrap, VENDOR, passwords, Topics.RESULTS));
        assertDenied(GroupAuthorizationException.class, () -> readInGroup(bootstrap, passwords, "privface-recognizer",
                Topics.enrollment("north")));
        Map<String, String> wrong = new HashMap<>(passwords);
        wrong.put(VENDOR, "wrong-" + passwords.get(VENDOR));
        assertDenied(SaslAuthenticationException.class, () -> write(bootstrap, VENDOR, wrong,
                Security.vendorResultsTopic(VENDOR)));
    }

    @Test
    @Order(3)
    void aNodeVendorDecodesTheFacesAndIsRefusedEverythingElse() throws Exception {
        Path script = root.resolve("k8s/local-stack/src/test/node/vendor-consumer.mjs");
        Path modules = script.resolveSibling("node_modules");
        assumeTrue(onPath("node"), "node is not on the PATH: the Node.js vendor interop test is skipped");
        assumeTrue(Files.isDirectory(modules.resolve("kafkajs")) && Files.isDirectory(modules.resolve("avsc")),
                "no " + modules + " (the build installs it with npm at generate-test-resources; npm missing?)");
        List<Map<String, Object>> expected = new ArrayList<>();
        for (PerturbedFace f : published.values()) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("eventId", f.getEventId());
            x.put("kind", f.getKind().name());
            x.put("cameraId", f.getCameraId());
            x.put("trackId", f.getTrackId());
            x.put("enrollmentLabel", f.getEnrollmentLabel());
            x.put("mechanism", f.getMechanism().getName());
            x.put("epsilonPerFace", f.getMechanism().getEpsilonPerFace());
            x.put("epsilonPerCoordinate", f.getMechanism().getEpsilonPerCoordinate());
            x.put("basisId", f.getMechanism().getBasisId());
            x.put("vector", f.getVector());
            expected.add(x);
        }
        Path expectedFile = work.resolve("expected.json");
        new ObjectMapper().writeValue(expectedFile.toFile(), expected);
        ProcessBuilder pb = new ProcessBuilder("node", script.toString()).directory(script.getParent().toFile())
                .redirectErrorStream(true);
        // The password goes through the environment, never the command line.
        pb.environment().putAll(Map.of("BOOTSTRAP", bootstrap, "CA_FILE", kafka.caFile().toString(),
                "VENDOR_USER", VENDOR, "VENDOR_PASSWORD", passwords.get(VENDOR),
                "GROUP", Security.vendorGroupPrefix(VENDOR) + "node", "SITE", "north", "OTHER_SITE", "south",
                "SCHEMA_DIR", root.resolve("broker-config/schemas").toString(), "EXPECTED", expectedFile.toString()));
        pb.environment().put("RESULTS_TOPIC", Security.vendorResultsTopic(VENDOR));
        Process node = pb.start();
        String out = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(node.waitFor(150, TimeUnit.SECONDS), "node did not finish");
        System.out.print("vendor access, Node.js client:\n" + out);
        List<Map<String, Object>> checks = new ArrayList<>();
        ObjectMapper json = new ObjectMapper();
        for (String line : out.split("\n")) {
            if (line.startsWith("{")) {
                @SuppressWarnings("unchecked")
                Map<String, Object> c = json.readValue(line, Map.class);
                checks.add(c);
            }
        }
        assertEquals(0, node.exitValue(), out);
        assertEquals(published.size(), checks.stream().filter(c -> String.valueOf(c.get("check")).matches("read (ENROLLMENT|QUERY) .*")
                && Boolean.TRUE.equals(c.get("ok"))).count(), "every published record read and matched:\n" + out);
        for (String refusal : List.of("no credentials", "wrong password", "read privface.south.enrollment",
                "read privface.north.control", "write privface.north.enrollment", "write privface.north.query",
                "write privface.north.control")) {
            assertTrue(checks.stream().anyMatch(c -> refusal.equals(c.get("check")) && Boolean.TRUE.equals(c.get("ok"))),
                    refusal + " not refused as expected:\n" + out);
        }
    }

    @Test
    @Order(4)
    void aRetiredVendorLosesItsGrantsAndItsLogin() throws Exception {
        List<PrincipalSpec> after = principals("retired: [" + VENDOR + "]\n");
        SecurityApplier.Report pruned;
        try (Admin admin = Admin.create(MultiSiteSecurityTest.as(bootstrap, ADMIN, passwords))) {
            pruned = new SecurityApplier(admin).apply(topics, after, u -> Optional.ofNullable(passwords.get(u)),
                    false, true);
        }
        assertEquals(List.of(VENDOR), pruned.retiredUsersDeleted(), pruned.describe());
        assertEquals(declared.stream().filter(p -> p.name().equals(VENDOR)).findFirst().orElseThrow().acls().size(),
                pruned.aclsRemoved().size(), pruned.describe());
        assertDenied(SaslAuthenticationException.class, () -> write(bootstrap, VENDOR, passwords,
                Security.vendorResultsTopic(VENDOR)));
    }

    private static boolean onPath(String command) {
        String path = System.getenv("PATH");
        return path != null && java.util.Arrays.stream(path.split(java.io.File.pathSeparator))
                .anyMatch(d -> Files.isExecutable(Path.of(d, command)));
    }

    /** Subscribes in a consumer group and returns the first face, committing its offset (group READ). */
    private static PerturbedFace readInGroup(String bootstrap, Map<String, String> passwords, String group, String topic) {
        Properties c = consumerProps(bootstrap, VENDOR, passwords);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    consumer.commitSync();
                    return FaceRecords.decodeFromTopic(r.topic(), r.value());
                }
            }
        }
        throw new AssertionError("nothing read on " + topic + " in group " + group);
    }
}
