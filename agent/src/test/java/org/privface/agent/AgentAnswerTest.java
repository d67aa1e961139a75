package org.privface.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
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
 * The whole agent with {@code agent.answer.release: answer} on real lfw5 faces and a real broker:
 * without a gallery it releases enrollments but nothing for queries, and its status report says
 * why; given a gallery signed by the key it trusts (templates from its own enrollment records),
 * each query face becomes one answer record at the policy's ε and no query vector goes out.
 */
class AgentAnswerTest {
    private static final int ENROLL = 6;
    private static final int QUERY = 3;
    private static final KeyPair RECOGNIZER = SignedControl.generate();

    @Test
    void answerOnlySiteReleasesNothingWithoutAGalleryAndAnswersWithOne(@TempDir Path dir) throws Exception {
        DeepModels.facepluginOrSkip();
        DeepModels.yunetOrSkip();
        int people = AnswerSiteFixture.splitLfw5(dir, ENROLL, QUERY);
        String site = "answerable";
        SiteRecords.createTopics(site);
        Map<String, Object> props = AnswerSiteFixture.props(dir, site, "10", "answer", RECOGNIZER.getPublic());
        props.put("agent.embedder.network", "fr_feature");

        // 1. No gallery yet: enrollments go out, query faces release nothing, and the report says why.
        List<PerturbedFace> enrollments;
        try (ApplicationContext ctx = ApplicationContext.run(props)) {
            ctx.getBean(EmbeddedServer.class).start();
            AgentPipeline pipeline = ctx.getBean(AgentPipeline.class);
            assertTrue(pipeline.awaitCompletion());
            assertTrue(pipeline.facesDetected() >= people * QUERY - 2, "query faces " + pipeline.facesDetected());
            @SuppressWarnings("unchecked")
            Map<String, Object> answer = (Map<String, Object>) ctx.getBean(GatewayState.class).report().get("answer");
            assertTrue(String.valueOf(answer.get("queriesWithheldBecause")).contains("no signed gallery"), answer.toString());
            // The exact count of faces withheld stays on the gateway (issue 39): the topic's report has none.
            assertFalse(answer.containsKey("withheldNoGallery"), answer.toString());
            @SuppressWarnings("unchecked")
            Map<String, Object> local = (Map<String, Object>) ((Map<String, Object>) ctx.getBean(GatewayState.class)
                    .localReport().get("local")).get("answer");
            assertEquals(pipeline.facesDetected(), ((Number) local.get("withheldNoGallery")).longValue());
            assertEquals(0L, answer.get("answers"));
            enrollments = SiteRecords.read(site, pipeline.published(), (k, f) -> { });
            assertEquals(pipeline.published(), enrollments.size());
            assertTrue(enrollments.stream().allMatch(f -> f.getKind() == RecordKind.ENROLLMENT), "no query vector");
        }
        assertEquals(0, read(Topics.answer(site), answerPartitions(site), 0, Duration.ofSeconds(3)).size());

        // The recognizer's part, reduced to its arithmetic: templates from those enrollment records, signed.
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

        // 2. With the gallery: one answer per query face, at the policy's ε, and still no query vector.
        Files.delete(dir.resolve("ledger.csv"));
        long answered;
        double metricEpsilon;
        long metricCount;
        try (ApplicationContext ctx = ApplicationContext.run(props)) {
            ctx.getBean(EmbeddedServer.class).start();
            AgentPipeline pipeline = ctx.getBean(AgentPipeline.class);
            assertTrue(pipeline.awaitCompletion());
            @SuppressWarnings("unchecked")
            Map<String, Object> answer = (Map<String, Object>) ctx.getBean(GatewayState.class).report().get("answer");
            answered = ((Number) answer.get("answers")).longValue();
            assertEquals(pipeline.facesDetected(), answered, answer.toString());
            assertTrue(!answer.containsKey("queriesWithheldBecause"), answer.toString());
            // Answers go through the spool like vectors: acknowledged by the broker before the agent finished.
            assertEquals(0, pipeline.uplink().spool().depth(), "every answer acknowledged");
            assertEquals(0L, answer.get("droppedBySpool"), answer.toString());
            List<DistributionSummary> perFace = ctx.getBean(MeterRegistry.class).find("privface.agent.epsilon.per.face")
                    .summaries().stream().toList();
            metricEpsilon = perFace.stream().mapToDouble(DistributionSummary::totalAmount).sum();
            metricCount = perFace.stream().mapToLong(DistributionSummary::count).sum();
        }
        List<ConsumerRecord<String, byte[]>> out = read(Topics.answer(site), answerPartitions(site), answered, Duration.ofSeconds(30));
        assertEquals(answered, out.size());
        int right = 0;
        double statedEpsilon = 0;
        for (ConsumerRecord<String, byte[]> r : out) {
            FaceAnswer a = FaceRecords.decodeAnswerFromTopic(r.topic(), r.value());
            double stated = a.getMechanism().getEpsilonPerFace();
            statedEpsilon += stated;
            assertEquals("RR", a.getMechanism().getName());
            assertTrue(stated <= 10 && stated > 10 - 1e-3, "ε " + stated);
            assertEquals(labels.size(), a.getGallery().getIdentities());
            assertEquals(1, a.getTrack().getReleaseIndex());
            assertTrue(a.getTrack().getEpsilonSpentInWindow() <= a.getTrack().getEpsilonBudget() * (1 + 1e-9));
            // The track was charged its first release's share: the answer states no more than that
            // charge (issue 34's rule), and is calibrated to it, so no less than it by more than RR's grid.
            double charged = a.getTrack().getEpsilonSpentInWindow();
            assertTrue(stated <= charged && charged - stated < 1e-9, "stated " + stated + ", charged " + charged);
            right += a.getLabel() != null ? 1 : 0;
        }
        assertEquals(answered, right, "a closed-set gallery names someone for every face");
        // The ε-per-face metric counts what each answer record states, not the track's grant.
        assertEquals(answered, metricCount);
        assertEquals(statedEpsilon, metricEpsilon, 1e-9 * answered, "metric ε = the records' stated ε");
        assertTrue(SiteRecords.read(site, enrollments.size() + 1, (k, f) -> { }).stream()
                .noneMatch(f -> f.getKind() == RecordKind.QUERY), "an answer-only site releases no query vector");
    }

    private static int answerPartitions(String site) {
        return Topics.definitions(List.of(site)).stream().filter(t -> t.name().equals(Topics.answer(site)))
                .findFirst().orElseThrow().partitions();
    }

    private static List<ConsumerRecord<String, byte[]>> read(String topic, int partitions, long expected, Duration wait) {
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(cp, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                tps.add(new TopicPartition(topic, i));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + wait.toNanos();
            while ((expected == 0 || out.size() < expected) && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }
}
