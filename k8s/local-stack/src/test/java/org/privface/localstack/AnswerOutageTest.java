package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.privface.localstack.FaultKit.awaitTrue;
import static org.privface.localstack.FaultKit.deleteRecursively;
import static org.privface.localstack.FaultKit.keepLogs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.privface.agent.answer.QueryAnswerer;
import org.privface.agent.publish.DiskSpool;
import org.privface.agent.publish.DropPolicy;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.publish.Uplink;
import org.privface.broker.KafkaServerProcess;
import org.privface.privacy.answer.Gallery;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.wire.FaceRecords;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * Answers are spooled like vectors: a gateway with {@code agent.answer.release: answer}, wired as
 * {@code AgentPipeline} wires it (disk spool, uplink, answer mode following its site's signed
 * gallery), answers query faces through a real broker process that is stopped and restarted. While
 * the broker is down the gateway keeps answering and its spool grows; the gateway is then closed
 * with the broker still down and started again on the same data directory, finds the spooled
 * answers and sends them once the broker is back. Every answer made is on the answer topic, none
 * lost and none unknown, and every record on the broker passes the {@link TopicAudit}. (Before
 * answers went through the spool they had a producer of their own, and the ones made during the
 * outage died with the gateway.)
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class AnswerOutageTest {
    static {
        // slf4j-simple reads these once, at its first logger: keep the clients' reconnect chatter out.
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient", "error");
    }

    private static final String SITE = "answer-outage";
    private static final String CAMERA = "door";
    private static final double EPSILON = 10;
    private static final KeyPair RECOGNIZER = SignedControl.generate();
    private static final int BEFORE = 10;
    private static final int WHILE_DOWN = 40;
    private static final int AFTER = 10;

    /** The gateway's publishing side, opened and closed in AgentPipeline's order. */
    private record Gateway(FacePublisher publisher, DiskSpool spool, Uplink uplink, QueryAnswerer answers, long foundAtStart)
            implements AutoCloseable {
        static Gateway open(Path dataDir, String bootstrap) throws Exception {
            KafkaClientProperties client = KafkaClientProperties.bootstrap(bootstrap);
            FacePublisher publisher = new FacePublisher(client, SITE, new Properties());
            DiskSpool spool = DiskSpool.open(dataDir.resolve("spool"), DiskSpool.Options.of(64L << 20, DropPolicy.DROP_NEWEST));
            long found = spool.depth();
            Uplink uplink = new Uplink(publisher, spool, new SimpleMeterRegistry(), SITE);
            QueryAnswerer answers = QueryAnswerer.open("answer", Map.of("recognizer-1", SignedControl.base64(RECOGNIZER.getPublic())),
                    SITE, client, uplink);
            return new Gateway(publisher, spool, uplink, answers, found);
        }

        @Override
        public void close() throws Exception {
            answers.close();
            uplink.close();
            spool.close();
            publisher.close();
        }
    }

    @Test
    void answersMadeWhileTheBrokerIsDownAndAcrossAGatewayRestartAllReachTheAnswerTopic() throws Exception {
        Path root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        BrokerOutageTest.assumeBrokerJarsResolvable(root);
        Path work = Files.createTempDirectory("privface-answer-outage-");
        Path data = work.resolve("agent-data");
        KafkaServerProcess kafka = null;
        Gateway gateway = null;
        boolean passed = false;
        try {
            kafka = KafkaServerProcess.start(root, work);
            String bootstrap = kafka.bootstrapServers();
            Properties ap = new Properties();
            ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            try (Admin admin = Admin.create(ap)) {
                new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
            }
            // The site's gallery, signed by the recognizer key the gateway trusts: three people.
            EmbeddingMechanism m = EmbeddingMechanism.publicPreset("fr_feature", EmbeddingMechanism.Noise.SIGN_CAP, EPSILON);
            java.util.Random inputs = new java.util.Random(29); // test faces only, never noise
            double[][] faces = new double[3][m.basis().inputDimension()];
            double[][] templates = new double[3][];
            for (int c = 0; c < 3; c++) {
                for (int i = 0; i < faces[c].length; i++) {
                    faces[c][i] = inputs.nextGaussian();
                }
                templates[c] = m.direction(faces[c]);
            }
            List<String> labels = List.of("alice", "bob", "carol");
            publishGallery(bootstrap, new Gallery(1, m.releaseSpace(), labels, templates, Double.NEGATIVE_INFINITY));

            Set<String> made = new LinkedHashSet<>();
            // 1. Broker up: answers go out.
            gateway = Gateway.open(data, bootstrap);
            assertEquals(0, gateway.foundAtStart());
            answer(gateway, faces, BEFORE, made);
            Gateway first = gateway;
            awaitTrue("the first answers acknowledged", Duration.ofSeconds(60), () -> first.uplink().acknowledged() == BEFORE);

            // 2. Broker down: the gateway keeps answering, and the answers wait on disk.
            kafka.stop();
            assertFalse(kafka.running());
            answer(gateway, faces, WHILE_DOWN, made);
            assertEquals(BEFORE + WHILE_DOWN, made.size(), "every face answered while the broker was down");
            assertEquals(WHILE_DOWN, gateway.spool().depth(), "the answers made while the broker was down are spooled");

            // 3. The gateway restarts while the broker is still down: the spooled answers are found on disk.
            gateway.close();
            gateway = null;
            kafka.restart();
            gateway = Gateway.open(data, bootstrap);
            long found = gateway.foundAtStart();
            assertEquals(WHILE_DOWN, found, "the restarted gateway finds the spooled answers");
            assertTrue(gateway.answers().gallery().isPresent(), "the restarted gateway holds its site's gallery");
            answer(gateway, faces, AFTER, made);
            assertTrue(gateway.uplink().drain(Duration.ofSeconds(90)),
                    "the spool drained after the restart; " + gateway.spool().depth() + " answers still spooled");
            long dropped = gateway.spool().dropped();
            gateway.close();
            gateway = null;

            // 4. What the broker holds: every answer made, once at least, and nothing else.
            Map<String, Integer> copies = new HashMap<>();
            for (ConsumerRecord<String, byte[]> r : FaultKit.readAll(bootstrap, List.of(Topics.answer(SITE)), Duration.ofSeconds(60))) {
                FaceAnswer a = FaceRecords.decodeAnswerFromTopic(r.topic(), r.value()); // validates the record
                assertEquals(CAMERA, r.key(), "keyed by camera, like the faces");
                assertEquals(SITE, a.getSiteId());
                assertTrue(a.getMechanism().getEpsilonPerFace() <= EPSILON);
                copies.merge(a.getEventId(), 1, Integer::sum);
            }
            Set<String> missing = new LinkedHashSet<>(made);
            missing.removeAll(copies.keySet());
            Set<String> unknown = new LinkedHashSet<>(copies.keySet());
            unknown.removeAll(made);
            int records = copies.values().stream().mapToInt(Integer::intValue).sum();
            System.out.printf("answer outage: %d answers made (%d before the outage, %d while the broker was down, %d after"
                            + " the gateway's restart); %d spooled at the restart; %d records on the topic, %d distinct,"
                            + " %d duplicates, %d lost, %d dropped by the spool%n", made.size(), BEFORE, WHILE_DOWN, AFTER,
                    found, records, copies.size(), records - copies.size(), missing.size(), dropped);
            // Every record on the broker, field by field: the answers carry their declared fields only, no vector.
            TopicAudit audit = new TopicAudit(root.resolve("broker-config/schemas"), false);
            audit.recognizerKeys.put("recognizer-1", RECOGNIZER.getPublic());
            audit.check(TopicAudit.readEverything(bootstrap, Duration.ofSeconds(60)));
            assertEquals(List.of(), audit.problems, "the topic audit");
            assertEquals(records, audit.decoded.get(Topics.answer(SITE)).size(), "every answer record audited");
            assertEquals(0, dropped, "the spool dropped nothing");
            assertTrue(missing.isEmpty(), missing.size() + " of " + made.size() + " answers never reached the answer topic");
            assertTrue(unknown.isEmpty(), "answers on the topic the gateway never made: " + unknown);
            passed = true;
        } finally {
            if (gateway != null) {
                gateway.close();
            }
            if (kafka != null) {
                kafka.close();
            }
            if (!passed) {
                keepLogs(work, root.resolve("k8s/local-stack/target/answer-outage-logs"));
            }
            deleteRecursively(work);
        }
    }

    /** Answers {@code n} query faces, cycling through the three people, and adds their event ids to {@code made}. */
    private static void answer(Gateway g, double[][] faces, int n, Set<String> made) {
        Gallery gallery = g.answers().gallery().orElseThrow(() -> new AssertionError("no gallery held"));
        EmbeddingMechanism m = EmbeddingMechanism.publicPreset("fr_feature", EmbeddingMechanism.Noise.SIGN_CAP, EPSILON);
        for (int i = 0; i < n; i++) {
            double[] query = g.answers().query(gallery, m, faces[i % faces.length])
                    .orElseThrow(() -> new AssertionError("face not answered"));
            FaceAnswer a = g.answers().answer(gallery, java.util.List.of(query), EPSILON, CAMERA, "t-" + made.size(),
                    Instant.now(), null);
            assertTrue(made.add(a.getEventId()));
        }
    }

    private static void publishGallery(String bootstrap, Gallery g) throws Exception {
        FaceGallery record = FaceGallery.newBuilder().setSiteId(SITE).setVersion(g.version()).setBuiltAt(Instant.now())
                .setBasisId(g.basisId()).setK(g.k()).setLabels(g.labels()).setTemplates(FaceRecords.flatTemplates(g.templates()))
                .setThreshold(Double.NEGATIVE_INFINITY).setEnrollmentReleases(9).setCalibration(null).build();
        byte[] body = FaceRecords.encode(record);
        ProducerRecord<String, byte[]> signed = new ProducerRecord<>(Topics.gallery(SITE), SITE, body);
        SignedControl.sign(SignedControl.GALLERY_DOMAIN, RECOGNIZER.getPrivate(), "recognizer-1", SITE, "recognizer", 1, body)
                .addTo(signed.headers());
        try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(KafkaClientProperties.bootstrap(bootstrap).producer(),
                new StringSerializer(), new ByteArraySerializer())) {
            p.send(signed).get();
        }
    }
}
