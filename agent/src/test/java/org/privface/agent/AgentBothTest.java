package org.privface.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.agent.control.GatewayState;
import org.privface.agent.detect.DeepModels;
import org.privface.kafka.testkit.RealKafka;
import org.privface.privacy.answer.Gallery;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.Topics;

/**
 * The whole agent with {@code agent.answer.release: both} on real lfw5 faces and a real broker.
 * With the site's gallery, each query face goes out as an answer and a vector whose stated ε
 * together are what its track was charged. At ε 35.5 no sign-cap of the policy's shape exists at
 * half the charge: every query face is then withheld before any charge (the camera's ε spent stays
 * 0) and the status report says why; the old code charged each face and released nothing.
 */
class AgentBothTest {
    private static final int ENROLL = 5;
    private static final int QUERY = 2;
    private static final KeyPair RECOGNIZER = SignedControl.generate();

    @Test
    void bothReleasesAnAnswerAndAVectorPerFaceWithinTheChargeAndRefusesAnImpossibleSplitUncharged(@TempDir Path dir)
            throws Exception {
        DeepModels.facepluginOrSkip();
        DeepModels.yunetOrSkip();
        int people = AnswerSiteFixture.splitLfw5(dir, ENROLL, QUERY);
        String site = "both-site";
        SiteRecords.createTopics(site);
        Map<String, Object> props = AnswerSiteFixture.props(dir, site, "20", "both", RECOGNIZER.getPublic());

        // 1. No gallery yet: the enrollment goes out; query faces release vectors only.
        long firstQueries;
        List<PerturbedFace> enrollments;
        try (ApplicationContext ctx = ApplicationContext.run(props)) {
            ctx.getBean(EmbeddedServer.class).start();
            AgentPipeline pipeline = ctx.getBean(AgentPipeline.class);
            assertTrue(pipeline.awaitCompletion());
            List<PerturbedFace> all = SiteRecords.read(site, pipeline.published(), (k, f) -> { });
            enrollments = all.stream().filter(f -> f.getKind() == RecordKind.ENROLLMENT).toList();
            firstQueries = all.size() - enrollments.size();
            // The vector and the templates need different enrollment releases: both go out, each charged.
            List<PerturbedFace> templates = enrollments.stream()
                    .filter(f -> f.getTrackId().startsWith(Enrollment.TEMPLATE_TRACK_PREFIX)).toList();
            assertEquals(2 * (enrollments.size() - templates.size()), templates.size(),
                    "per enrolled image, one vector release and two template releases (agent.answer.template-releases)");
            assertTrue(templates.stream().allMatch(f -> f.getMechanism().getEpsilonPerFace() <= 20), "at template-epsilon");
            assertTrue(templates.stream().allMatch(f -> f.getMechanism().getBasisId().endsWith(".k64")),
                    "dlib's template preset at ε 20 for 5 people is k 64");
            assertTrue(enrollments.stream().filter(f -> !templates.contains(f))
                    .allMatch(f -> f.getMechanism().getBasisId().endsWith(".k24")), "the vector's preset is k 24");
            enrollments = templates;
            assertTrue(firstQueries >= people * QUERY - 2, "query vectors " + firstQueries);
        }
        publishGallery(site, enrollments);

        // 2. With the gallery at ε 20: an answer and a vector per query face, together within the charge.
        props.put("agent.publish-enrollments", "false");
        Files.delete(dir.resolve("ledger.csv"));
        long faces;
        try (ApplicationContext ctx = ApplicationContext.run(props)) {
            ctx.getBean(EmbeddedServer.class).start();
            AgentPipeline pipeline = ctx.getBean(AgentPipeline.class);
            assertTrue(pipeline.awaitCompletion());
            faces = pipeline.facesDetected();
            Map<String, Object> answer = answerReport(ctx);
            assertEquals(faces, ((Number) answer.get("answers")).longValue(), answer.toString());
            assertEquals(0L, localAnswer(ctx).get("withheldUnanswerable"), answer.toString());
            assertEquals(10.0, ((Number) answer.get("answerEpsilon")).doubleValue(), 1e-6, answer.toString());
        }
        List<PerturbedFace> vectors = SiteRecords.read(site, enrollments.size() + firstQueries + faces, (k, f) -> { })
                .stream().filter(f -> f.getKind() == RecordKind.QUERY).toList();
        assertEquals(firstQueries + faces, vectors.size(), "one vector per query face in each run");
        List<FaceAnswer> answers = readAnswers(site, faces);
        assertEquals(faces, answers.size());
        for (FaceAnswer a : answers) {
            double charged = a.getTrack().getEpsilonSpentInWindow();
            double answerEps = a.getMechanism().getEpsilonPerFace();
            PerturbedFace v = vectors.stream().filter(x -> x.getTrackId().equals(a.getTrackId())
                    && x.getCameraId().equals(a.getCameraId()) && x.getMechanism().getEpsilonPerFace() < 15)
                    .findFirst().orElseThrow(() -> new AssertionError("no vector beside answer " + a.getEventId()));
            double vectorEps = v.getMechanism().getEpsilonPerFace();
            assertTrue(answerEps + vectorEps <= charged * (1 + 1e-12), answerEps + " + " + vectorEps + " > " + charged);
            assertTrue(answerEps + vectorEps > charged - 1e-6, "the charge is spent: " + answerEps + " + " + vectorEps);
            assertTrue(vectorEps > 9.9 && vectorEps <= 10, "the vector asks half: " + vectorEps);
            assertEquals(v.getTrack().getEpsilonSpentInWindow(), charged, 1e-12, "one charge for both records");
        }

        // 3. ε 35.5: no cap of the policy's shape (k 64, r 1) at half: withheld, uncharged, and said why.
        props.put("agent.epsilon", "35.5");
        Files.delete(dir.resolve("ledger.csv"));
        try (ApplicationContext ctx = ApplicationContext.run(props)) {
            ctx.getBean(EmbeddedServer.class).start();
            AgentPipeline pipeline = ctx.getBean(AgentPipeline.class);
            assertTrue(pipeline.awaitCompletion());
            Map<String, Object> answer = answerReport(ctx);
            assertEquals(0L, answer.get("answers"), answer.toString());
            assertEquals(pipeline.facesDetected(), ((Number) localAnswer(ctx).get("withheldUnanswerable")).longValue(),
                    answer.toString());
            assertTrue(String.valueOf(answer.get("unanswerableBecause")).contains("half"), answer.toString());
            @SuppressWarnings("unchecked")
            Map<String, Map<String, Object>> cams = (Map<String, Map<String, Object>>) ctx.getBean(GatewayState.class)
                    .report().get("cameras");
            for (Map<String, Object> c : cams.values()) {
                assertEquals(0.0, ((Number) c.get("epsilonSpent")).doubleValue(), "nothing charged: " + c);
                assertEquals(0L, ((Number) c.get("releases")).longValue(), c.toString());
            }
        }
        assertEquals(faces, readAnswers(site, faces + 1).size(), "no answer at ε 35.5");
    }

    /** The exact answer counts: the gateway's authenticated REST status only (issue 39). */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> localAnswer(ApplicationContext ctx) {
        return (Map<String, Object>) ((Map<String, Object>) ctx.getBean(GatewayState.class).localReport().get("local"))
                .get("answer");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> answerReport(ApplicationContext ctx) {
        return (Map<String, Object>) ctx.getBean(GatewayState.class).report().get("answer");
    }

    /** The recognizer's part, reduced to its arithmetic: closed-set templates from the enrollment records, signed. */
    private static void publishGallery(String site, List<PerturbedFace> enrollments) throws Exception {
        Map<String, List<double[]>> byPerson = new TreeMap<>();
        for (PerturbedFace f : enrollments) {
            double[] v = new double[f.getDimension()];
            for (int i = 0; i < v.length; i++) {
                v[i] = f.getVector().get(i);
            }
            byPerson.computeIfAbsent(f.getEnrollmentLabel(), l -> new ArrayList<>()).add(v);
        }
        List<String> labels = new ArrayList<>(byPerson.keySet());
        List<double[]> releases = new ArrayList<>();
        List<Integer> owners = new ArrayList<>();
        for (int c = 0; c < labels.size(); c++) {
            for (double[] v : byPerson.get(labels.get(c))) {
                releases.add(v);
                owners.add(c);
            }
        }
        String space = enrollments.get(0).getMechanism().getBasisId();
        Gallery g = Gallery.fromReleases(1, space, labels, releases.toArray(double[][]::new),
                owners.stream().mapToInt(Integer::intValue).toArray());
        FaceGallery record = FaceGallery.newBuilder().setSiteId(site).setVersion(1).setBuiltAt(Instant.now()).setBasisId(space)
                .setK(g.k()).setLabels(labels).setTemplates(FaceRecords.flatTemplates(g.templates()))
                .setThreshold(Double.NEGATIVE_INFINITY).setEnrollmentReleases(releases.size()).setCalibration(null).build();
        byte[] body = FaceRecords.encode(record);
        ProducerRecord<String, byte[]> signed = new ProducerRecord<>(Topics.gallery(site), site, body);
        SignedControl.sign(SignedControl.GALLERY_DOMAIN, RECOGNIZER.getPrivate(), "recognizer-1", site, "recognizer", 1, body)
                .addTo(signed.headers());
        Properties pp = new Properties();
        pp.put("bootstrap.servers", RealKafka.bootstrapServers());
        try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(pp, new StringSerializer(), new ByteArraySerializer())) {
            p.send(signed).get();
        }
    }

    private static List<FaceAnswer> readAnswers(String site, long expected) {
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        List<FaceAnswer> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(cp, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            c.partitionsFor(Topics.answer(site)).forEach(pi -> tps.add(new TopicPartition(pi.topic(), pi.partition())));
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(expected > 0 ? 20 : 3).toNanos();
            while (out.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    out.add(FaceRecords.decodeAnswerFromTopic(r.topic(), r.value()));
                }
            }
        }
        return out;
    }
}
