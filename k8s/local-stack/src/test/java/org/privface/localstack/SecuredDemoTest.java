package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.privface.localstack.FaultKit.deleteRecursively;
import static org.privface.localstack.MultiSiteSecurityTest.assertDenied;

import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.privface.broker.KafkaServerProcess;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.privface.wire.security.Security;
import org.privface.wire.topics.Topics;

/**
 * Issue 24: the demo's broker as {@link Demo} sets it up ({@link DemoSecurity}: SASL_SSL, SCRAM,
 * ACLs from security.yml and the demo vendor from demo-security.yml). The demo vendor connects with
 * nothing but the files the summary points at (its client properties and the CA) and reads what
 * the demo site's gateway wrote; the broker refuses a client without credentials or with a wrong
 * password, and the vendor's writes and its reads of the control and status topics. No secret is
 * in a log or in the summary's lines. The whole pipeline under these principals runs in
 * {@link EndToEndTest}, which checks its logs too.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SecuredDemoTest {
    static {
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients", "off");
    }

    private static final String SITE = "demo-site";
    private static final String VENDOR = DemoSecurity.VENDOR;

    private Path root;
    private Path work;
    private DemoSecurity demo;
    private LocalBroker broker;
    /** The vendor's client settings, read from the file the summary names. */
    private Properties vendor;

    @BeforeAll
    void startTheDemosBrokerAndPublishAsTheGateway() throws Exception {
        root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        BrokerOutageTest.assumeBrokerJarsResolvable(root);
        work = Files.createTempDirectory("privface-secdemo-");
        long t0 = System.nanoTime();
        demo = DemoSecurity.start(root, work, SITE, false, LocalBroker.secret());
        broker = demo.broker();
        System.out.printf("secured demo broker: SASL_SSL with ACLs applied in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        vendor = new Properties();
        try (Reader r = Files.newBufferedReader(demo.vendorCredentials(), StandardCharsets.UTF_8)) {
            vendor.load(r);
        }
        try (KafkaProducer<String, byte[]> p = producer(broker.client(DemoSecurity.agent(SITE)))) {
            for (String topic : List.of(Topics.enrollment(SITE), Topics.query(SITE))) {
                p.send(new ProducerRecord<>(topic, "gw", topic.getBytes(StandardCharsets.UTF_8))).get(20, TimeUnit.SECONDS);
            }
        }
    }

    @AfterAll
    void stop() {
        if (demo != null) {
            broker.close();
        }
        if (work != null) {
            deleteRecursively(work);
        }
    }

    @Test
    void theVendorConnectsWithTheFilesTheSummaryNamesAndReadsItsSitesFaces() throws Exception {
        for (Path secret : List.of(demo.vendorCredentials(), demo.operatorPasswordFile())) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(secret)), secret.toString());
        }
        assertEquals("SASL_SSL", vendor.getProperty("security.protocol"));
        assertEquals(broker.caFile().toString(), vendor.getProperty("ssl.truststore.location"));
        assertTrue(Files.readString(broker.caFile()).startsWith("-----BEGIN CERTIFICATE-----"));
        List<String> summary = demo.summary(SITE);
        assertTrue(summary.stream().anyMatch(l -> l.contains(demo.vendorCredentials().toString())), String.join("\n", summary));
        assertTrue(summary.stream().anyMatch(l -> l.contains(broker.caFile().toString())), String.join("\n", summary));
        assertTrue(summary.stream().anyMatch(l -> l.contains(broker.bootstrap()) && l.contains("SASL_SSL")), String.join("\n", summary));

        assertEquals(Topics.enrollment(SITE), readOne(vendor, Topics.enrollment(SITE)));
        assertEquals(Topics.query(SITE), readOne(vendor, Topics.query(SITE)));
        // Its own consumer groups (a vendor's recognizer subscribes) and its own results topic.
        Properties group = new Properties();
        group.putAll(vendor);
        group.put(ConsumerConfig.GROUP_ID_CONFIG, Security.vendorGroupPrefix(VENDOR) + "demo");
        group.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(group, new StringDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(Topics.query(SITE)));
            assertEquals(Topics.query(SITE), firstValue(c));
            c.commitSync();
        }
        write(vendor, Security.vendorResultsTopic(VENDOR));
    }

    @Test
    void theBrokerRefusesTheVendorEverythingElse() {
        assertDenied(TopicAuthorizationException.class, () -> write(vendor, Topics.enrollment(SITE)));
        assertDenied(TopicAuthorizationException.class, () -> write(vendor, Topics.query(SITE)));
        assertDenied(TopicAuthorizationException.class, () -> write(vendor, Topics.control(SITE)));
        assertDenied(TopicAuthorizationException.class, () -> readOne(vendor, Topics.control(SITE)));
        assertDenied(TopicAuthorizationException.class, () -> readOne(vendor, Topics.status(SITE)));
        assertDenied(TopicAuthorizationException.class, () -> readOne(vendor, Topics.RESULTS));
    }

    @Test
    void aClientWithoutCredentialsOrWithAWrongPasswordIsRefused() throws Exception {
        Properties wrong = new Properties();
        wrong.putAll(vendor);
        wrong.put("sasl.jaas.config", KafkaServerProcess.scramJaas(VENDOR, "wrong-" + LocalBroker.secret()));
        assertDenied(SaslAuthenticationException.class, () -> describeCluster(wrong));
        Properties stranger = new Properties();
        stranger.putAll(vendor);
        stranger.put("sasl.jaas.config", KafkaServerProcess.scramJaas("nobody", LocalBroker.secret()));
        assertDenied(SaslAuthenticationException.class, () -> describeCluster(stranger));
        // TLS with the right CA but no SASL login: the broker answers nothing but the handshake it expects.
        Properties anonymous = new Properties();
        anonymous.putAll(vendor);
        anonymous.remove("sasl.jaas.config");
        anonymous.remove("sasl.mechanism");
        anonymous.put("security.protocol", "SSL");
        assertDenied(org.apache.kafka.common.errors.TimeoutException.class, () -> describeCluster(anonymous));
        // And the unauthenticated listener of the old demo is not there at all.
        Properties plaintext = new Properties();
        plaintext.put("bootstrap.servers", broker.bootstrap());
        assertDenied(org.apache.kafka.common.errors.TimeoutException.class, () -> describeCluster(plaintext));
    }

    @Test
    void noSecretIsInAnyLogOrInTheSummary() throws Exception {
        List<String> secrets = broker.secrets();
        assertTrue(secrets.size() >= 5, "admin, agent, recognizer, operator, vendor and the broker's key: " + secrets.size());
        List<Path> logs;
        try (Stream<Path> s = Files.list(work)) { // the processes' logs; kafka-data/ holds the broker's own
            logs = s.filter(p -> p.toString().endsWith(".log")).toList();
        }
        assertTrue(logs.stream().anyMatch(p -> p.getFileName().toString().equals("kafka.log")), "the broker's log: " + logs);
        for (Path log : logs) {
            String text = Files.readString(log);
            for (String secret : secrets) {
                assertFalse(text.contains(secret), "a secret in " + log);
            }
        }
        String summary = String.join("\n", demo.summary(SITE));
        for (String secret : secrets) {
            assertFalse(summary.contains(secret), "a secret in the summary");
        }
    }

    private static KafkaProducer<String, byte[]> producer(Properties client) {
        Properties p = new Properties();
        p.putAll(client);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 15_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    private static Object write(Properties client, String topic) throws Exception {
        try (KafkaProducer<String, byte[]> p = producer(client)) {
            return p.send(new ProducerRecord<>(topic, "x", new byte[] {1})).get(20, TimeUnit.SECONDS);
        }
    }

    /** The first record's value (as text) of a topic, read from the beginning by assignment (no group). */
    private static String readOne(Properties client, String topic) {
        Properties p = new Properties();
        p.putAll(client);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            c.partitionsFor(topic, Duration.ofSeconds(20)).forEach(i -> tps.add(new TopicPartition(topic, i.partition())));
            c.assign(tps);
            c.seekToBeginning(tps);
            return firstValue(c);
        }
    }

    private static String firstValue(KafkaConsumer<String, byte[]> c) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline) {
            for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                return new String(r.value(), StandardCharsets.UTF_8);
            }
        }
        throw new AssertionError("nothing to read");
    }

    private static Object describeCluster(Properties client) throws Exception {
        Properties p = new Properties();
        p.putAll(client);
        p.put("default.api.timeout.ms", 5_000);
        p.put("request.timeout.ms", 5_000);
        try (Admin a = Admin.create(p)) {
            return a.describeCluster().nodes().get(10, TimeUnit.SECONDS).stream().map(Object::toString)
                    .collect(Collectors.joining(","));
        }
    }
}
