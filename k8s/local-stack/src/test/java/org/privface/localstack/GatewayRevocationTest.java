package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.privface.broker.KafkaServerProcess;
import org.privface.broker.ManagedProcess;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.security.PrincipalSpec;
import org.privface.wire.security.Security;
import org.privface.wire.topics.Topics;

/**
 * Gateways off the cluster, each with its own identity (issue 42). A real broker process with a
 * SASL_SSL listener (the external TLS listener's stand-in: SCRAM-SHA-512 over TLS, the local CA) and
 * two gateway principals of site north with an agent's ACLs, as k8s/sites.yaml's {@code gateways}
 * make them. Each gateway is an agent process started from the bundle's env file
 * (k8s/gateway/gateway.env.example) with its own credentials. Both deliver; then gateway a is revoked
 * as the User Operator does when its KafkaUser goes (its ACLs and SCRAM credential deleted): its next
 * run delivers nothing and its login fails, while gateway b's next run delivers as before.
 */
@Timeout(value = 420, unit = TimeUnit.SECONDS)
class GatewayRevocationTest {
    static final String SITE = "north";
    static final List<String> GATEWAYS = List.of("gateway-north-a", "gateway-north-b");

    /** agent-north's ACLs, granted to a gateway principal instead. */
    static PrincipalSpec asGateway(PrincipalSpec agent, String name) {
        List<AclBinding> acls = new ArrayList<>();
        for (AclBinding b : agent.acls()) {
            AccessControlEntry e = b.entry();
            acls.add(new AclBinding(b.pattern(), new AccessControlEntry("User:" + name, e.host(), e.operation(), e.permissionType())));
        }
        return new PrincipalSpec(name, acls);
    }

    /** The bundle's env file as a map, with this test's overrides. */
    static Map<String, String> bundleEnv(Path root, Map<String, String> overrides) throws Exception {
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : Files.readAllLines(root.resolve("k8s/gateway/gateway.env.example"))) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int eq = line.indexOf('=');
            env.put(line.substring(0, eq), line.substring(eq + 1));
        }
        env.putAll(overrides);
        return env;
    }

    @Test
    void revokingOneGatewayStopsItAndNoOther() throws Exception {
        Path root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        Path synthetic = root.resolve("test-data/synthetic");
        assumeTrue(Files.isDirectory(synthetic.resolve("query")) && Files.isDirectory(synthetic.resolve("enroll")),
                "no synthetic faces at " + synthetic);
        BrokerOutageTest.assumeBrokerJarsResolvable(root);
        assumeTrue(Files.isRegularFile(root.resolve("agent/target/runtime.classpath")),
                "agent/target/runtime.classpath is missing: build the project first (mvn install -DskipTests)");
        Path work = Files.createTempDirectory("privface-revoke-");
        PrincipalSpec agent = Security.definitions(List.of(SITE)).stream().filter(p -> p.name().equals("agent-" + SITE))
                .findFirst().orElseThrow();
        List<PrincipalSpec> principals = GATEWAYS.stream().map(g -> asGateway(agent, g)).toList();
        try (LocalBroker broker = LocalBroker.secured(root, work, Topics.definitions(List.of(SITE)), principals)) {
            for (String g : GATEWAYS) {
                broker.awaitAuthenticates(g, Duration.ofSeconds(30));
            }
            // Both gateways deliver.
            Map<String, Integer> first = new HashMap<>();
            for (String g : GATEWAYS) {
                first.put(g, runGateway(root, broker, g, "run1", synthetic, work));
            }
            Map<String, Long> delivered = queriesByCamera(broker);
            for (String g : GATEWAYS) {
                assertTrue(delivered.getOrDefault(camera(g, "run1"), 0L) > 0, g + " delivered nothing: " + delivered);
            }

            // Revoke gateway a, as Strimzi's User Operator does for a deleted KafkaUser.
            String revoked = GATEWAYS.get(0);
            try (Admin admin = Admin.create(broker.client(LocalBroker.ADMIN))) {
                admin.deleteAcls(List.of(new AclBindingFilter(ResourcePatternFilter.ANY,
                        new AccessControlEntryFilter("User:" + revoked, null, AclOperation.ANY, AclPermissionType.ANY))))
                        .all().get(30, TimeUnit.SECONDS);
                admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion(revoked, ScramMechanism.SCRAM_SHA_512)))
                        .all().get(30, TimeUnit.SECONDS);
            }
            Properties login = broker.client(revoked);
            login.put("max.block.ms", 10_000);
            assertThrows(Exception.class, () -> {
                try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(login, new StringSerializer(), new ByteArraySerializer())) {
                    p.send(new ProducerRecord<>(Topics.query(SITE), "x", new byte[] {1})).get(20, TimeUnit.SECONDS);
                }
            }, "a revoked gateway's credentials still log in");

            // Its next run delivers nothing; the other gateway's next run delivers as before.
            for (String g : GATEWAYS) {
                runGateway(root, broker, g, "run2", synthetic, work);
            }
            Map<String, Long> after = queriesByCamera(broker);
            assertEquals(0L, after.getOrDefault(camera(revoked, "run2"), 0L), "the revoked gateway delivered: " + after);
            assertTrue(after.getOrDefault(camera(GATEWAYS.get(1), "run2"), 0L) > 0, "the other gateway stopped too: " + after);
            System.out.println("gateway revocation: before " + delivered + ", after " + after);
        }
    }

    static String camera(String gateway, String run) {
        return gateway.substring(gateway.lastIndexOf('-') + 1) + run;
    }

    /**
     * One run of a gateway's agent process over the synthetic query folder, configured by the bundle's
     * env file with the gateway's own login; waits for it to finish or, when it cannot deliver, 40 s.
     */
    static int runGateway(Path root, LocalBroker broker, String gateway, String run, Path synthetic, Path work) throws Exception {
        Map<String, String> env = new HashMap<>(broker.serviceEnvironment(gateway));
        Path data = Files.createDirectories(work.resolve(gateway + "-" + run));
        Map<String, String> overrides = new HashMap<>(env);
        overrides.putAll(Map.of(
                "AGENT_GATEWAY_ID", gateway,
                "AGENT_DATA_DIR", data.toString(),
                "AGENT_ENROLL_FOLDER", synthetic.resolve("enroll").toString(),
                "AGENT_CONTROL_KEYS_FILE", "",
                "AGENT_YUNET_MODEL", "",
                "AGENT_HTTP_PORT", String.valueOf(KafkaServerProcess.freePort()),
                "AGENT_LOG_FORMAT", "text"));
        Map<String, String> full = bundleEnv(root, overrides);
        full.remove("AGENT_CONTROL_KEYS_FILE");
        full.remove("AGENT_YUNET_MODEL");
        full.put("MICRONAUT_ENVIRONMENTS", "gateway");
        // The pixel stack on the cascade (no YuNet needed here), one camera: the query folder.
        List<String> jvm = List.of("-Xmx512m", "-Dmicronaut.server.port=" + full.get("AGENT_HTTP_PORT"),
                "-Dagent.camera-id=" + camera(gateway, run), "-Dagent.source=" + synthetic.resolve("query"),
                "-Dagent.publish-enrollments=false", "-Dagent.detector=haar", "-Dagent.mechanism=peep",
                "-Dagent.sensitivity-mode=vector", "-Dagent.components=16", "-Dagent.epsilon=400",
                "-Dagent.floor.epsilon-max=400", "-Dagent.basis-file=" + work.resolve(gateway + "-basis.bin"),
                "-Dagent.control.topic-enabled=false", "-Dagent.exit-when-done=true");
        try (ManagedProcess p = ManagedProcess.java(gateway + "-" + run, DemoProcesses.classpath(root, "agent"),
                "org.privface.agent.Application", jvm, List.of(), full, work)) {
            try {
                return p.await(Duration.ofSeconds(90));
            } catch (IllegalStateException stillRunning) {
                return -1; // a gateway that cannot deliver keeps its spool and waits; close() stops it
            }
        }
    }

    /** Query records on the site's topic, by camera. */
    static Map<String, Long> queriesByCamera(LocalBroker broker) throws Exception {
        Properties c = broker.client(LocalBroker.ADMIN);
        Map<String, Long> out = new HashMap<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            consumer.partitionsFor(Topics.query(SITE)).forEach(pi -> tps.add(new TopicPartition(Topics.query(SITE), pi.partition())));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps);
            long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < until && tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                for (ConsumerRecord<String, byte[]> rec : consumer.poll(Duration.ofMillis(200))) {
                    PerturbedFace f = FaceRecords.decodeFromTopic(rec.topic(), rec.value());
                    out.merge(f.getCameraId(), 1L, Long::sum);
                }
            }
        }
        return out;
    }
}
