package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.privface.agent.AgentPipeline;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.embed.FaceEmbedders;
import org.privface.broker.KafkaServerProcess;
import org.privface.broker.ManagedProcess;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.control.SignedControl;
import org.privface.wire.erasure.Erasures;
import org.privface.wire.erasure.PersonKeys;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * Forgetting a person end to end (issue 43) on a real broker process: a gateway (the agent, deep
 * stack, in this JVM) enrolls three synthetic people; the recognizer (its own process, with a model
 * directory and a gallery signing key) trains on them and publishes the site's gallery; an operator
 * signs one erasure command for one of them. Then, after compaction: no enrollment record, gallery
 * template, stored model version, label or ledger entry of that person is left on the broker, the
 * recognizer's model directory or the gateway's data directory and enrollment folder; the other two
 * are still recognized (a second gateway run's query faces, answered by the retrained model); and the
 * erasure topic holds the request and each component's completion, and nothing else (TopicAudit).
 *
 * <p>Scope: the topics' production compaction bounds (segment.ms and max.compaction.lag.ms 1 h) are
 * lowered to seconds on this broker only, so compaction happens within the test.
 */
class ErasureTest {
    private static final String SITE = "forget-site";
    private static final List<String> PEOPLE = List.of("person-a", "person-b", "person-c");
    private static final String ERASED = "person-b";

    @Test
    void anErasedPersonLeavesNothingTheSystemControlsAndTheOthersAreStillRecognized() throws Exception {
        Path root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        assumeTrue(FaceModels.findYunet(null).isPresent(), "YuNet not found (set FACE_MODELS): skipping the erasure test");
        assumeTrue(FaceEmbedders.missing(FaceEmbedders.DLIB).isEmpty(), "dlib's descriptor is not installed (the agent build fetches it)");
        BrokerOutageTest.assumeBrokerJarsResolvable(root);
        assumeTrue(Files.isRegularFile(root.resolve("recognizer/target/runtime.classpath")),
                "recognizer/target/runtime.classpath is missing: build the project first (mvn install -DskipTests)");
        Path work = Files.createTempDirectory("privface-erasure-");
        Path synthetic = root.resolve("test-data/synthetic");
        // Copies, not links: the gateway wipes the erased person's files.
        Path enroll = Files.createDirectories(work.resolve("enroll"));
        Path queries = Files.createDirectories(work.resolve("queries"));
        for (String p : PEOPLE) {
            copy(synthetic.resolve("enroll").resolve(p), Files.createDirectories(enroll.resolve(p)), "");
            if (!p.equals(ERASED)) {
                copy(synthetic.resolve("query").resolve(p), queries, p + "_");
            }
        }
        Set<String> erasedHashes = new TreeSet<>();
        try (Stream<Path> s = Files.list(enroll.resolve(ERASED))) {
            for (Path f : s.toList()) {
                erasedHashes.add(org.privface.agent.enroll.EnrollmentLedger.sha256(f));
            }
        }
        KeyPair operator = SignedControl.generate();
        String opKey = SignedControl.base64(operator.getPublic());
        Path secretFile = work.resolve("pseudonym-secret");
        PersonKeys keys = PersonKeys.writeNew(secretFile);
        String pseudonym = keys.pseudonym(SITE, ERASED);
        Path galleryKey = work.resolve("gallery.key");
        String galleryLine = SignedControl.writeNewKey("recognizer", galleryKey);
        Path models = work.resolve("models");
        Path agentData = work.resolve("agent-data");

        KafkaServerProcess kafka = null;
        ManagedProcess recognizer = null;
        ApplicationContext gateway = null;
        try {
            kafka = KafkaServerProcess.start(root, work);
            String bootstrap = kafka.bootstrapServers();
            Properties ap = new Properties();
            ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            try (Admin admin = Admin.create(ap)) {
                new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
                // Seconds instead of the production hour, on this test broker only.
                for (String t : List.of(Topics.enrollment(SITE), Topics.gallery(SITE))) {
                    admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, t), List.of(
                            new AlterConfigOp(new ConfigEntry("segment.ms", "2000"), AlterConfigOp.OpType.SET),
                            new AlterConfigOp(new ConfigEntry("max.compaction.lag.ms", "2000"), AlterConfigOp.OpType.SET),
                            new AlterConfigOp(new ConfigEntry("min.cleanable.dirty.ratio", "0.01"), AlterConfigOp.OpType.SET))))
                            .all().get(20, TimeUnit.SECONDS);
                }
            }
            int port = KafkaServerProcess.freePort();
            recognizer = ManagedProcess.java("recognizer", DemoProcesses.classpath(root, "recognizer"),
                    "org.privface.recognizer.Application",
                    List.of("-Xmx1g", "-Dai.djl.offline=true", "-Dmicronaut.server.port=" + port,
                            "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1",
                            "-Drecognizer.model-dir=" + models, "-Drecognizer.instance-id=rec-1",
                            "-Drecognizer.answer.signing-key-file=" + galleryKey,
                            "-Drecognizer.answer.quiet-period=2s",
                            "-Drecognizer.erasure.operator-keys.ops=" + opKey),
                    List.of(), Map.of("KAFKA_BOOTSTRAP_SERVERS", bootstrap, "OMP_WAIT_POLICY", "PASSIVE"), work);
            DemoProcesses.awaitHealthy(recognizer, port);

            // 1. Enroll three people; the gateway keeps running to follow the erasure topic.
            Map<String, Object> props = agentProps(bootstrap, enroll, agentData, secretFile, opKey);
            gateway = startAgent(props);
            assertTrue(gateway.getBean(AgentPipeline.class).awaitCompletion(), "the gateway enrolled and drained");
            List<FaceGallery> galleries = awaitGallery(bootstrap, g -> g.getLabels().size() == 3);
            assertEquals(Set.of("person-a", "person-b", "person-c"), new HashSet<>(galleries.get(galleries.size() - 1).getLabels()));
            FaultKit.awaitTrue("a stored model of the three", Duration.ofSeconds(120),
                    FaultKit.quietly(() -> storedLabels(models).stream().anyMatch(l -> l.contains(ERASED))));
            assertTrue(Files.readString(agentData.resolve("enrollment-ledger.txt")).contains(erasedHashes.iterator().next()));

            // 2. The operator's one signed command.
            // The operator's tool: the label stays on the operator's side, the command names the pseudonym.
            Properties client = new Properties();
            client.put("bootstrap.servers", bootstrap);
            org.privface.wire.erasure.ErasureTool.Sent sent = org.privface.wire.erasure.ErasureTool.send(client, SITE, ERASED,
                    PersonKeys.load(secretFile), operator.getPrivate(), "ops", "dana");
            assertEquals(pseudonym, sent.person());
            String request = sent.request();
            // 3. Each component reports its completion on the erasure topic.
            Map<String, Erasures.Report> reports = new HashMap<>();
            FaultKit.awaitTrue("the gateway's and the recognizer's completion", Duration.ofSeconds(120), FaultKit.quietly(() -> {
                for (TopicAudit.Captured c : TopicAudit.readEverything(bootstrap, Duration.ofSeconds(10))) {
                    if (c.topic().equals(Topics.erasure(SITE)) && c.value() != null && !Erasures.isCommand(c.value())) {
                        Erasures.Report r = Erasures.readReport(c.value());
                        if (r.request().equals(request)) {
                            reports.put(r.component(), r);
                        }
                    }
                }
                return reports.keySet().equals(Set.of("gateway:forget-gw", "recognizer:rec-1"));
            }));
            Erasures.Report gw = reports.get("gateway:forget-gw");
            assertEquals(Integer.toString(erasedHashes.size()), gw.counts().get("images"));
            assertEquals(gw.counts().get("images"), gw.counts().get("ledgerEntries"));
            assertTrue(Integer.parseInt(gw.counts().get("tombstones")) >= erasedHashes.size(), gw.counts().toString());
            Erasures.Report rc = reports.get("recognizer:rec-1");
            assertTrue(Integer.parseInt(rc.counts().get("enrollments")) >= erasedHashes.size(), rc.counts().toString());
            assertTrue(Integer.parseInt(rc.counts().get("modelVersionsDeleted")) >= 1, rc.counts().toString());
            assertEquals("true", rc.counts().get("galleryRebuilt"), rc.counts().toString());
            gateway.close();
            gateway = null;

            // 4. Compaction: roll each partition's active segment past segment.ms, then let the cleaner run.
            Thread.sleep(2_500);
            try (KafkaProducer<String, byte[]> p = producer(bootstrap)) {
                for (int part = 0; part < 3; part++) {
                    p.send(new ProducerRecord<>(Topics.enrollment(SITE), part, "roll", null)).get(20, TimeUnit.SECONDS);
                }
                p.send(new ProducerRecord<>(Topics.gallery(SITE), 0, "roll", null)).get(20, TimeUnit.SECONDS);
            }
            List<String> left = new ArrayList<>();
            FaultKit.awaitTrue("compaction removed the erased person's records", Duration.ofSeconds(120),
                    FaultKit.quietly(() -> {
                        left.clear();
                        left.addAll(traces(bootstrap, pseudonym));
                        return left.isEmpty();
                    }));

            // 5. The recognizer: no stored version names the person, a retrained one serves the other two.
            FaultKit.awaitTrue("a retrained model of the other two", Duration.ofSeconds(120),
                    FaultKit.quietly(() -> storedLabels(models).contains(List.of("person-a", "person-c"))));
            assertTrue(storedLabels(models).stream().noneMatch(l -> l.contains(ERASED)), storedLabels(models).toString());
            assertNoBytes(models, ERASED);
            // 6. The gateway: no folder, no image, no ledger line but the ε of each erased image.
            assertFalse(Files.exists(enroll.resolve(ERASED)), "the person's enrollment folder is gone");
            List<String> ledger = Files.readAllLines(agentData.resolve("enrollment-ledger.txt"));
            for (String h : erasedHashes) {
                List<String> lines = ledger.stream().filter(l -> l.startsWith(h)).toList();
                assertEquals(1, lines.size(), "one line per erased image: " + lines);
                assertTrue(lines.get(0).contains(" ERASED|erased|"), lines.get(0));
            }
            assertNoBytes(agentData, ERASED);
            assertNoBytes(agentData, pseudonym);

            // 7. The other two are still recognized: a second gateway run releases their query faces.
            Path origins = work.resolve("origins.csv");
            Map<String, Object> again = new HashMap<>(props);
            again.put("agent.source", queries.toString());
            again.put("agent.ledger", origins.toString());
            gateway = startAgent(again);
            assertTrue(gateway.getBean(AgentPipeline.class).awaitCompletion(), "the query run drained");
            gateway.close();
            gateway = null;
            Map<String, String> originOf = SceneAgent.origins(origins);
            Map<String, String> predicted = new HashMap<>();
            FaultKit.awaitTrue("results for the query faces", Duration.ofSeconds(120), FaultKit.quietly(() -> {
                for (TopicAudit.Captured c : TopicAudit.readEverything(bootstrap, Duration.ofSeconds(10))) {
                    if (c.topic().equals(Topics.RESULTS) && c.value() != null) {
                        RecognitionResult r = FaceRecords.decodeResult(c.value());
                        predicted.put(r.getEventId().toString(), String.valueOf(r.getPredictedLabel()));
                    }
                }
                return predicted.keySet().containsAll(originOf.keySet());
            }));
            int right = 0;
            for (Map.Entry<String, String> e : originOf.entrySet()) {
                String truth = e.getValue().contains("person-a") ? "person-a" : "person-c";
                right += truth.equals(predicted.get(e.getKey())) ? 1 : 0;
                assertFalse(ERASED.equals(predicted.get(e.getKey())), "nobody is named as the erased person");
            }
            System.out.printf("erasure: %d erased images, reports %s; the other two recognized %d/%d%n", erasedHashes.size(),
                    reports.keySet(), right, originOf.size());
            assertTrue(originOf.size() >= 8 && right >= 0.75 * originOf.size(), right + "/" + originOf.size());

            // 8. Everything on the broker against what its topic declares: the erasure trail holds no face data.
            TopicAudit audit = new TopicAudit(root.resolve("broker-config/schemas"), false);
            audit.operatorKeys.put("ops", operator.getPublic());
            audit.recognizerKeys.put("recognizer", SignedControl.publicKey(galleryLine.substring(galleryLine.indexOf(':') + 1)));
            audit.check(TopicAudit.readEverything(bootstrap, Duration.ofSeconds(20)));
            assertTrue(audit.problems.isEmpty(), String.join("\n", audit.problems));
        } finally {
            if (gateway != null) {
                gateway.close();
            }
            if (recognizer != null) {
                recognizer.close();
            }
            if (kafka != null) {
                kafka.close();
            }
        }
    }

    private static Map<String, Object> agentProps(String bootstrap, Path enroll, Path data, Path secret, String opKey) {
        Map<String, Object> p = new HashMap<>();
        p.put("kafka.bootstrap.servers", bootstrap);
        p.put("micronaut.server.port", -1);
        p.put("micronaut.server.host", "127.0.0.1");
        p.put("agent.site-id", SITE);
        p.put("agent.gateway-id", "forget-gw");
        p.put("agent.enroll-folder", enroll.toString());
        p.put("agent.data-dir", data.toString());
        p.put("agent.erasure.secret-file", secret.toString());
        p.put("agent.control.operator-keys.ops", opKey);
        return p;
    }

    private static ApplicationContext startAgent(Map<String, Object> props) {
        ApplicationContext ctx = ApplicationContext.builder()
                .classLoader(new BrokerOutageTest.HidingClassLoader(ErasureTest.class.getClassLoader(),
                        org.privface.recognizer.Application.class))
                .properties(BrokerOutageTest.HidingClassLoader.agentAlone(props))
                .start();
        ctx.getBean(EmbeddedServer.class).start(); // its ServerStartupEvent starts the pipeline
        return ctx;
    }

    /** Every non-empty gallery on the topic, once one matches. */
    private static List<FaceGallery> awaitGallery(String bootstrap, java.util.function.Predicate<FaceGallery> want)
            throws Exception {
        List<FaceGallery> out = new ArrayList<>();
        FaultKit.awaitTrue("a gallery", Duration.ofSeconds(120), FaultKit.quietly(() -> {
            out.clear();
            for (TopicAudit.Captured c : TopicAudit.readEverything(bootstrap, Duration.ofSeconds(10))) {
                if (c.topic().equals(Topics.gallery(SITE)) && c.value() != null) {
                    out.add(FaceRecords.decodeGalleryFromTopic(c.topic(), c.value()));
                }
            }
            return out.stream().anyMatch(want);
        }));
        return out;
    }

    /** What of the person is still on the broker: enrollment records under the pseudonym or label, galleries naming it. */
    private static List<String> traces(String bootstrap, String pseudonym) throws Exception {
        List<String> out = new ArrayList<>();
        for (TopicAudit.Captured c : TopicAudit.readEverything(bootstrap, Duration.ofSeconds(10))) {
            String key = c.key() == null ? "" : new String(c.key(), StandardCharsets.UTF_8);
            if (c.value() == null || c.partition() < 0) {
                continue; // tombstones hold the pseudonym only
            }
            if (c.topic().equals(Topics.enrollment(SITE))) {
                PerturbedFace f = FaceRecords.decodeFromTopic(c.topic(), c.value());
                if (key.startsWith(pseudonym) || ERASED.equals(f.getEnrollmentLabel())) {
                    out.add("enrollment " + c.partition() + "@" + c.offset());
                }
            } else if (c.topic().equals(Topics.gallery(SITE))) {
                if (FaceRecords.decodeGalleryFromTopic(c.topic(), c.value()).getLabels().contains(ERASED)) {
                    out.add("gallery @" + c.offset());
                }
            } else if (!c.topic().equals(Topics.RESULTS) && !c.topic().startsWith("__")
                    && new String(c.value(), StandardCharsets.ISO_8859_1).contains(ERASED)) {
                out.add(c.topic() + " " + c.partition() + "@" + c.offset());
            }
        }
        return out;
    }

    /** The labels of every stored model version. */
    private static List<List<String>> storedLabels(Path models) throws Exception {
        List<List<String>> out = new ArrayList<>();
        if (!Files.isDirectory(models)) {
            return out;
        }
        try (Stream<Path> s = Files.walk(models)) {
            for (Path p : s.filter(f -> f.getFileName().toString().equals("model.properties")).toList()) {
                Properties props = new Properties();
                try (var in = Files.newInputStream(p)) {
                    props.load(in);
                }
                out.add(List.of(props.getProperty("labels").split(",")));
            }
        }
        return out;
    }

    /** No file under {@code dir} holds {@code text}. */
    private static void assertNoBytes(Path dir, String text) throws Exception {
        byte[] needle = text.getBytes(StandardCharsets.UTF_8);
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path f : s.filter(Files::isRegularFile).toList()) {
                byte[] b = Files.readAllBytes(f);
                assertFalse(indexOf(b, needle) >= 0, f + " still holds " + text);
            }
        }
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static void copy(Path from, Path to, String prefix) throws Exception {
        try (Stream<Path> s = Files.list(from)) {
            for (Path f : s.filter(Files::isRegularFile).toList()) {
                Files.copy(f, to.resolve(prefix + f.getFileName()));
            }
        }
    }

    private static KafkaProducer<String, byte[]> producer(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("max.block.ms", "20000");
        return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }
}
