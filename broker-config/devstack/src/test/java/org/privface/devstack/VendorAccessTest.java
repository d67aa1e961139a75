package org.privface.devstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.privface.devstack.FaultKit.deleteRecursively;
import static org.privface.devstack.MultiSiteSecurityTest.ADMIN;
import static org.privface.devstack.MultiSiteSecurityTest.SITES;
import static org.privface.devstack.MultiSiteSecurityTest.assertDenied;
import static org.privface.devstack.MultiSiteSecurityTest.awaitAuthenticates;
import static org.privface.devstack.MultiSiteSecurityTest.consumerProps;
import static org.privface.devstack.MultiSiteSecurityTest.producer;
import static org.privface.devstack.MultiSiteSecurityTest.readOne;
import static org.privface.devstack.MultiSiteSecurityTest.secret;
import static org.privface.devstack.MultiSiteSecurityTest.write;

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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
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
 * Issue 24: a third-party recognizer declared in security.yml's {@code vendors:} on a real secured
 * broker process. It reads its site's faces in its own consumer group and writes its own results
 * topic; the broker refuses it everything else. Moved to {@code retired:} and pruned, it can no
 * longer log in. Also: formatting the secured broker's storage leaves no SCRAM secret in the log.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class VendorAccessTest {
    static {
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka", "warn");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients", "off");
    }

    private static final String VENDOR = "acme";

    private static List<PrincipalSpec> principals(String extraYaml) {
        List<PrincipalSpec> out = new ArrayList<>(Security.definitions(SITES));
        out.addAll(Security.parse(new ByteArrayInputStream(("principals: []\n" + extraYaml)
                .getBytes(StandardCharsets.UTF_8)), SITES));
        return out;
    }

    @Test
    void aVendorReadsItsSitesFacesInItsOwnGroupAndNothingElse() throws Exception {
        Path root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        BrokerOutageTest.assumeBrokerJarsResolvable(root);
        Path work = Files.createTempDirectory("privface-vendor-");
        List<PrincipalSpec> declared = principals("vendors:\n  - {name: " + VENDOR + ", sites: [north], results: true}\n");
        Map<String, String> passwords = new LinkedHashMap<>();
        passwords.put(ADMIN, secret());
        declared.forEach(p -> passwords.put(p.name(), secret()));
        List<TopicSpec> topics = new ArrayList<>(Topics.definitions(SITES));
        topics.addAll(Security.vendorTopics(declared));

        KafkaServerProcess kafka = null;
        try {
            kafka = KafkaServerProcess.start(root, work, new KafkaServerProcess.Sasl(ADMIN, passwords.get(ADMIN)));
            String bootstrap = kafka.bootstrapServers();

            // The storage was formatted with the admin's SCRAM credential; none of it is in the log.
            String formatLog = Files.readString(work.resolve("kafka-format.log"));
            assertFalse(formatLog.contains("storedKey") || formatLog.contains("salt=")
                    || formatLog.contains(passwords.get(ADMIN)), "a SCRAM secret in kafka-format.log");
            assertTrue(formatLog.contains("withheld"), formatLog);

            SecurityApplier.Report applied;
            try (Admin admin = Admin.create(MultiSiteSecurityTest.as(bootstrap, ADMIN, passwords))) {
                applied = new SecurityApplier(admin).apply(topics, declared, u -> Optional.ofNullable(passwords.get(u)),
                        false, false);
            }
            assertTrue(applied.topics().created().contains(Security.vendorResultsTopic(VENDOR)), applied.describe());
            assertTrue(applied.usersCreated().contains(VENDOR), applied.describe());
            awaitAuthenticates(bootstrap, VENDOR, passwords);
            awaitAuthenticates(bootstrap, "agent-north", passwords);

            // The gateway's principal publishes an enrollment; the vendor reads it in its own group.
            PerturbedFace face = PerturbedFace.newBuilder()
                    .setEventId("vendor-probe-1").setSiteId("north").setCameraId("enrollment").setTrackId("t-1")
                    .setCaptureTimestamp(Instant.ofEpochMilli(1_700_000_000_000L)).setKind(RecordKind.ENROLLMENT)
                    .setMechanism(MechanismParams.newBuilder().setName("PEEP").setSensitivityMode("vector")
                            .setEpsilonPerCoordinate(0.5).setEpsilonPerFace(4).setNoiseScale(2).setBasisId("b-1").build())
                    .setDimension(2).setVector(List.of(0.25f, -1f)).setEnrollmentLabel("alice").build();
            try (KafkaProducer<String, byte[]> p = producer(bootstrap, "agent-north", passwords)) {
                p.send(new ProducerRecord<>(Topics.enrollment("north"), "enrollment", FaceRecords.encode(face)))
                        .get(20, TimeUnit.SECONDS);
            }
            PerturbedFace read = readInGroup(bootstrap, passwords, Security.vendorGroupPrefix(VENDOR) + "trainer",
                    Topics.enrollment("north"));
            assertEquals(face, read);
            try (KafkaProducer<String, byte[]> p = producer(bootstrap, VENDOR, passwords)) {
                p.send(new ProducerRecord<>(Security.vendorResultsTopic(VENDOR), "north-door", new byte[] {1}))
                        .get(20, TimeUnit.SECONDS);
            }

            // Everything else is refused by the broker.
            assertDenied(TopicAuthorizationException.class, () -> readOne(bootstrap, VENDOR, passwords, Topics.enrollment("south")));
            assertDenied(TopicAuthorizationException.class, () -> readOne(bootstrap, VENDOR, passwords, Topics.query("south")));
            assertDenied(TopicAuthorizationException.class, () -> readOne(bootstrap, VENDOR, passwords, Topics.control("north")));
            assertDenied(TopicAuthorizationException.class, () -> readOne(bootstrap, VENDOR, passwords, Topics.status("north")));
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

            // Removed by configuration alone: retired and pruned, its grants and its login are gone.
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
        } finally {
            if (kafka != null) {
                kafka.close();
            }
            deleteRecursively(work);
        }
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
