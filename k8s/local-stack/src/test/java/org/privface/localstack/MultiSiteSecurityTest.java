package org.privface.localstack;

import static org.privface.localstack.FaultKit.deleteRecursively;
import static org.privface.localstack.FaultKit.keepLogs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.privface.agent.AgentPipeline;
import org.privface.broker.KafkaServerProcess;
import org.privface.broker.ManagedProcess;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.security.Passwords;
import org.privface.wire.security.PrincipalSpec;
import org.privface.wire.security.Security;
import org.privface.wire.security.SecurityApplier;
import org.privface.wire.topics.Topics;

/**
 * Issue 7: two sites on one secured broker. A real Kafka broker process on loopback with a
 * SASL_PLAINTEXT listener (SCRAM-SHA-512) and StandardAuthorizer denying whatever no ACL allows;
 * topics, users and ACLs applied by {@link SecurityApplier} from topics.yml and security.yml, twice
 * (the second run changes nothing; a stray ACL is reported, and removed with prune). Then, with
 * each principal's own SCRAM credentials: what security.yml grants works and the rest is denied
 * by the broker; and the whole pipeline runs
 * under those credentials: the agents of sites north and south in-process (their Kafka clients
 * configured through {@code kafka.*}), the recognizer as its own JVM (through {@code KAFKA_*}
 * environment variables), every query of both sites answered on privface.results.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MultiSiteSecurityTest {
    static {
        // Denials are what this test provokes; the clients log each one.
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients", "off");
    }

    static final List<String> SITES = List.of("north", "south");
    static final String ADMIN = "admin";

    @Test
    void eachPrincipalGetsWhatSecurityYmlGrantsAndTrafficFlowsEndToEnd() throws Exception {
        long t0 = System.nanoTime();
        Path root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        Path synthetic = root.resolve("test-data/synthetic");
        assumeTrue(Files.isDirectory(synthetic.resolve("query")) && Files.isDirectory(synthetic.resolve("enroll")),
                "no synthetic faces at " + synthetic);
        BrokerOutageTest.assumeBrokerJarsResolvable(root);
        assumeTrue(Files.isRegularFile(root.resolve("recognizer/target/runtime.classpath")),
                "recognizer/target/runtime.classpath is missing: build the project first (mvn install -DskipTests)");

        Path work = Files.createTempDirectory("privface-acl-");
        Map<String, String> passwords = new LinkedHashMap<>();
        passwords.put(ADMIN, LocalBroker.secret());
        List<PrincipalSpec> principals = Security.definitions(SITES);
        principals.forEach(p -> passwords.put(p.name(), LocalBroker.secret()));

        KafkaServerProcess kafka = null;
        ManagedProcess recognizer = null;
        List<ApplicationContext> agents = new ArrayList<>();
        boolean passed = false;
        try {
            kafka = KafkaServerProcess.start(root, work, new KafkaServerProcess.Sasl(ADMIN, passwords.get(ADMIN)));
            String bootstrap = kafka.bootstrapServers();
            double brokerUp = seconds(t0);

            // 1. Topics, users and ACLs from the data files; a second run changes nothing.
            Passwords source = user -> Optional.ofNullable(passwords.get(user));
            SecurityApplier.Report first;
            SecurityApplier.Report second;
            SecurityApplier.Report drift;
            SecurityApplier.Report pruned;
            // A grant security.yml does not make: agent-north reading south's queries.
            AclBinding stray = new AclBinding(new ResourcePattern(ResourceType.TOPIC, Topics.query("south"), PatternType.LITERAL),
                    new AccessControlEntry("User:agent-north", "*", AclOperation.READ, AclPermissionType.ALLOW));
            try (Admin admin = Admin.create(as(bootstrap, ADMIN, passwords))) {
                SecurityApplier applier = new SecurityApplier(admin);
                first = applier.apply(Topics.definitions(SITES), principals, source, false, false);
                second = applier.apply(Topics.definitions(SITES), principals, source, false, false);
                admin.createAcls(List.of(stray)).all().get();
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (!admin.describeAcls(AclBindingFilter.ANY).values().get().contains(stray)) {
                    assertTrue(System.nanoTime() < deadline, "the stray ACL never became visible");
                    Thread.sleep(100);
                }
                drift = applier.apply(Topics.definitions(SITES), principals, source, false, false);
                pruned = applier.apply(Topics.definitions(SITES), principals, source, false, true);
            }
            System.out.print("multi-site security: first apply\n" + first.describe());
            assertEquals(Topics.definitions(SITES).size(), first.topics().created().size(), first.describe());
            assertEquals(principals.stream().map(PrincipalSpec::name).toList(), first.usersCreated());
            assertEquals(SecurityApplier.declared(principals).size(), first.aclsCreated().size());
            assertTrue(second.changedNothing(), "second apply changed something:\n" + second.describe());
            assertTrue(second.aclsUndeclared().isEmpty(), second.describe());
            assertEquals(List.of(stray), drift.aclsUndeclared(), "an ACL security.yml does not declare is reported");
            assertTrue(drift.changedNothing(), "and kept without --prune: " + drift.describe());
            assertEquals(List.of(stray), pruned.aclsRemoved(), "--prune removes it: " + pruned.describe());
            assertTrue(pruned.aclsUndeclared().isEmpty(), pruned.describe());
            for (String user : passwords.keySet()) {
                awaitAuthenticates(bootstrap, user, passwords);
            }

            // 2. The recognizer boots (its own JVM, SASL from KAFKA_* variables) while the grants are probed.
            int recognizerPort = KafkaServerProcess.freePort();
            recognizer = ManagedProcess.java("recognizer", DemoProcesses.classpath(root, "recognizer"),
                    "org.privface.recognizer.Application",
                    List.of("-Xmx1g", "-Dai.djl.offline=true", "-Dmicronaut.server.port=" + recognizerPort,
                            "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1"),
                    List.of(), Map.of("KAFKA_BOOTSTRAP_SERVERS", bootstrap,
                            "KAFKA_SECURITY_PROTOCOL", "SASL_PLAINTEXT",
                            "KAFKA_SASL_MECHANISM", "SCRAM-SHA-512",
                            "KAFKA_SASL_JAAS_CONFIG", KafkaServerProcess.scramJaas("recognizer", passwords.get("recognizer")),
                            "OMP_WAIT_POLICY", "PASSIVE"), work);

            List<String> checks = probeGrants(bootstrap, passwords);

            // 3. Two gateways, each with its site's credentials, over the synthetic faces.
            DemoProcesses.awaitHealthy(recognizer, recognizerPort);
            double recognizerUp = seconds(t0);
            Map<String, Path> ledgers = new LinkedHashMap<>();
            List<AgentPipeline> pipelines = new ArrayList<>();
            for (String site : SITES) {
                ledgers.put(site, work.resolve(site + "-ledger.csv"));
                ApplicationContext ctx = ApplicationContext.builder()
                        .classLoader(new BrokerOutageTest.HidingClassLoader(MultiSiteSecurityTest.class.getClassLoader(),
                                org.privface.recognizer.Application.class))
                        .properties(BrokerOutageTest.HidingClassLoader.agentAlone(agentProperties(site, bootstrap, passwords, synthetic, work, ledgers.get(site))))
                        .start();
                agents.add(ctx);
                ctx.getBean(EmbeddedServer.class).start(); // its ServerStartupEvent starts the pipeline
                pipelines.add(ctx.getBean(AgentPipeline.class));
            }
            for (int i = 0; i < SITES.size(); i++) {
                AgentPipeline p = pipelines.get(i);
                assertTrue(assertTimeoutPreemptively(Duration.ofSeconds(90), p::awaitCompletion),
                        "agent " + SITES.get(i) + " published and had every record acknowledged");
            }
            double agentsDone = seconds(t0);
            for (ApplicationContext ctx : agents) {
                ctx.close(); // the ledgers are complete once the agents have stopped
            }
            agents.clear();

            // 4. Every query of both sites is answered; read as the admin (nobody else reads results).
            Map<String, Set<String>> queries = new LinkedHashMap<>();
            Set<String> expected = new LinkedHashSet<>();
            for (String site : SITES) {
                Set<String> ids = Files.readAllLines(ledgers.get(site)).stream().filter(l -> !l.isBlank())
                        .map(l -> l.substring(0, l.indexOf(','))).collect(Collectors.toCollection(LinkedHashSet::new));
                assertFalse(ids.isEmpty(), site + " released no queries");
                queries.put(site, ids);
                expected.addAll(ids);
            }
            Map<String, RecognitionResult> results = read(as(bootstrap, ADMIN, passwords), List.of(Topics.RESULTS),
                    r -> FaceRecords.decodeResult(r.value()), RecognitionResult::getEventId,
                    m -> m.keySet().containsAll(expected), Duration.ofSeconds(75));
            double answered = seconds(t0);
            Map<String, Integer> perSite = new TreeMap<>();
            for (String site : SITES) {
                for (String id : queries.get(site)) {
                    RecognitionResult r = results.get(id);
                    assertTrue(r != null, "no result for " + site + " query " + id + "; "
                            + queries.get(site).stream().filter(results::containsKey).count() + " of "
                            + queries.get(site).size() + " answered; recognizer log " + recognizer.log());
                    assertEquals(site, r.getSiteId(), "the result names the query's site");
                    perSite.merge(site, 1, Integer::sum);
                }
            }
            // The operator sees each gateway's status report (its agent wrote it with the site's credentials).
            for (String site : SITES) {
                Map<String, String> status = read(as(bootstrap, "operator", passwords), List.of(Topics.status(site)),
                        r -> new String(r.value(), StandardCharsets.UTF_8), s -> "gw-" + site,
                        m -> !m.isEmpty(), Duration.ofSeconds(20));
                assertFalse(status.isEmpty(), "no status report from gw-" + site);
            }
            // The probe with unreadable bytes that agent-north wrote went to the dead letters.
            Map<String, String> dead = read(as(bootstrap, ADMIN, passwords), List.of(Topics.DEAD_LETTER),
                    r -> r.partition() + "@" + r.offset(), at -> at, m -> !m.isEmpty(), Duration.ofSeconds(20));
            assertFalse(dead.isEmpty(), "the recognizer wrote the unreadable probe to " + Topics.DEAD_LETTER);
            String log = Files.readString(recognizer.log());
            assertFalse(log.contains("AuthorizationException") || log.contains("AuthenticationException"),
                    "the recognizer was never denied; see " + recognizer.log());

            System.out.printf("multi-site security: broker up %.1f s, recognizer up %.1f s, agents done %.1f s, "
                            + "all %d queries answered %.1f s (per site %s), %d dead letter(s); %.1f s in all%n"
                            + "grants probed:%n  %s%n",
                    brokerUp, recognizerUp, agentsDone, expected.size(), answered, perSite, dead.size(), seconds(t0),
                    String.join("\n  ", checks));
            passed = true;
        } finally {
            for (ApplicationContext ctx : agents) {
                ctx.close();
            }
            if (recognizer != null) {
                recognizer.close();
            }
            if (kafka != null) {
                kafka.close();
            }
            if (!passed) {
                keepLogs(work, root.resolve("k8s/local-stack/target/multi-site-security-logs"));
            }
            deleteRecursively(work);
        }
    }

    /**
     * What each principal may and may not do, straight against the broker. Returns one line per check.
     */
    private static List<String> probeGrants(String bootstrap, Map<String, String> passwords) throws Exception {
        List<String> done = new ArrayList<>();
        // agent-north: its site's query topic yes (an unreadable probe, for the recognizer's dead letters).
        try (KafkaProducer<String, byte[]> p = producer(bootstrap, "agent-north", passwords)) {
            p.send(new ProducerRecord<>(Topics.query("north"), "probe", "not a face".getBytes(StandardCharsets.UTF_8)))
                    .get(20, TimeUnit.SECONDS);
            done.add("agent-north WRITE privface.north.query: allowed");
        }
        assertDenied(TopicAuthorizationException.class, () -> readOne(bootstrap, "agent-north", passwords, Topics.query("south")));
        assertDenied(TopicAuthorizationException.class, () -> readOne(bootstrap, "agent-north", passwords, Topics.gallery("south")));
        assertDenied(TopicAuthorizationException.class, () -> write(bootstrap, "agent-north", passwords, Topics.gallery("north")));
        done.add("agent-north READ privface.south.query: TopicAuthorizationException");
        assertDenied(TopicAuthorizationException.class, () -> write(bootstrap, "agent-north", passwords, Topics.control("north")));
        done.add("agent-north WRITE privface.north.control: TopicAuthorizationException");
        assertDenied(TopicAuthorizationException.class, () -> write(bootstrap, "agent-north", passwords, Topics.query("south")));
        done.add("agent-north WRITE privface.south.query: TopicAuthorizationException");
        assertDenied(TopicAuthorizationException.class, () -> readOne(bootstrap, "agent-north", passwords, Topics.RESULTS));
        done.add("agent-north READ privface.results: TopicAuthorizationException");
        // recognizer: no writing to the sites' topics; reading queries works (the probe above).
        assertDenied(TopicAuthorizationException.class, () -> write(bootstrap, "recognizer", passwords, Topics.enrollment("north")));
        done.add("recognizer WRITE privface.north.enrollment: TopicAuthorizationException");
        assertEquals("probe", readOne(bootstrap, "recognizer", passwords, Topics.query("north")).key());
        done.add("recognizer READ privface.north.query: allowed, read the probe");
        assertDenied(GroupAuthorizationException.class, () -> {
            Properties c = consumerProps(bootstrap, "recognizer", passwords);
            c.put(ConsumerConfig.GROUP_ID_CONFIG, "not-the-recognizers-group");
            try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer())) {
                consumer.subscribe(List.of(Topics.query("north")));
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (System.nanoTime() < deadline) {
                    consumer.poll(Duration.ofMillis(200));
                }
            }
            return null;
        });
        done.add("recognizer READ group not-the-recognizers-group: GroupAuthorizationException");
        // operator: the control topic yes (a tombstone: the gateway keeps its policy), the query topics no.
        try (KafkaProducer<String, byte[]> p = producer(bootstrap, "operator", passwords)) {
            p.send(new ProducerRecord<>(Topics.control("north"), "north", null)).get(20, TimeUnit.SECONDS);
            done.add("operator WRITE privface.north.control: allowed");
        }
        assertDenied(TopicAuthorizationException.class, () -> write(bootstrap, "operator", passwords, Topics.query("north")));
        done.add("operator WRITE privface.north.query: TopicAuthorizationException");
        // A wrong password is not a principal at all.
        Map<String, String> wrong = new HashMap<>(passwords);
        wrong.put("agent-north", "wrong-" + passwords.get("agent-north"));
        assertDenied(SaslAuthenticationException.class, () -> write(bootstrap, "agent-north", wrong, Topics.query("north")));
        done.add("agent-north with a wrong password: SaslAuthenticationException");
        return done;
    }

    private static Map<String, Object> agentProperties(String site, String bootstrap, Map<String, String> passwords,
                                                       Path synthetic, Path work, Path ledger) {
        Map<String, Object> props = new HashMap<>();
        props.put("kafka.bootstrap.servers", bootstrap);
        props.put("kafka.security.protocol", "SASL_PLAINTEXT");
        props.put("kafka.sasl.mechanism", "SCRAM-SHA-512");
        props.put("kafka.sasl.jaas.config", KafkaServerProcess.scramJaas("agent-" + site, passwords.get("agent-" + site)));
        props.put("micronaut.server.port", -1);
        props.put("micronaut.server.host", "127.0.0.1");
        props.put("agent.site-id", site);
        props.put("agent.gateway-id", "gw-" + site);
        props.put("agent.camera-id", site + "-door");
        props.put("agent.enroll-folder", synthetic.resolve("enroll").toString());
        props.put("agent.source", synthetic.resolve("query").toString());
        props.put("agent.enroll-releases", 4);
        props.put("agent.data-dir", work.resolve(site + "-agent").toString());
        props.put("agent.basis-file", work.resolve(site + "-basis.bin").toString());
        props.put("agent.ledger", ledger.toString());
        props.put("agent.epsilon", 400);
        props.put("agent.floor.epsilon-max", 400);
        props.put("agent.sensitivity-mode", "vector");
        props.put("agent.mechanism", "peep"); // the pixel stack on the cascade, not the shipped deep stack
        props.put("agent.detector", "haar");
        props.put("agent.components", 16);
        props.put("agent.control.token", "acl-test-" + site);
        return props;
    }

    /** Client settings for one SCRAM user. */
    static Properties as(String bootstrap, String user, Map<String, String> passwords) {
        return KafkaServerProcess.scramClient(bootstrap, user, passwords.get(user));
    }

    static KafkaProducer<String, byte[]> producer(String bootstrap, String user, Map<String, String> passwords) {
        Properties p = as(bootstrap, user, passwords);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 15_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    static Properties consumerProps(String bootstrap, String user, Map<String, String> passwords) {
        Properties p = as(bootstrap, user, passwords);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return p;
    }

    /** One record to the topic, waiting for the broker's answer. */
    static Object write(String bootstrap, String user, Map<String, String> passwords, String topic) throws Exception {
        try (KafkaProducer<String, byte[]> p = producer(bootstrap, user, passwords)) {
            return p.send(new ProducerRecord<>(topic, "x", new byte[] {1})).get(20, TimeUnit.SECONDS);
        }
    }

    /** The first record of partition 0 of a topic, read from the beginning by assignment (no group). */
    static ConsumerRecord<String, byte[]> readOne(String bootstrap, String user, Map<String, String> passwords,
                                                          String topic) {
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(consumerProps(bootstrap, user, passwords),
                new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions(topic); p++) {
                tps.add(new TopicPartition(topic, p));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    return r;
                }
            }
        }
        fail("nothing to read on " + topic + " as " + user);
        return null;
    }

    private static int partitions(String topic) {
        return Topics.definitions(SITES).stream().filter(t -> t.name().equals(topic)).findFirst().orElseThrow().partitions();
    }

    /** Reads topics from the beginning (by assignment) until {@code done} holds or time runs out. */
    private static <T> Map<String, T> read(Properties client, List<String> topics, Function<ConsumerRecord<String, byte[]>, T> decode,
                                           Function<T, String> key, java.util.function.Predicate<Map<String, T>> done,
                                           Duration timeout) {
        client.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        Map<String, T> out = new LinkedHashMap<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(client, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (String t : topics) {
                for (int p = 0; p < partitions(t); p++) {
                    tps.add(new TopicPartition(t, p));
                }
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (System.nanoTime() < deadline && !done.test(out)) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    if (r.value() != null) {
                        T v = decode.apply(r);
                        out.put(key.apply(v), v);
                    }
                }
            }
        }
        return out;
    }

    @FunctionalInterface
    interface Attempt {
        Object run() throws Exception;
    }

    /** The attempt fails, and the cause is the broker's denial of the given kind. */
    static void assertDenied(Class<? extends Exception> denial, Attempt attempt) {
        try {
            attempt.run();
        } catch (Throwable t) {
            for (Throwable c = t; c != null; c = c.getCause()) {
                if (denial.isInstance(c)) {
                    return;
                }
            }
            throw new AssertionError("expected " + denial.getSimpleName() + ", got " + t, t);
        }
        fail("expected " + denial.getSimpleName() + ", but it was allowed");
    }

    /** SCRAM credentials reach the broker through the metadata log: wait until the user can log in. */
    static void awaitAuthenticates(String bootstrap, String user, Map<String, String> passwords) throws Exception {
        LocalBroker.awaitAuthenticates(as(bootstrap, user, passwords), Duration.ofSeconds(30));
    }

    private static double seconds(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }


}
