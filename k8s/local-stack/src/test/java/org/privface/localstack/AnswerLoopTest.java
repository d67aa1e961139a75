package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.privface.agent.answer.AnswerSampler;
import org.privface.agent.answer.GalleryFollower;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.detect.YuNetDetector;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.embed.FaceEmbedders;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.track.BudgetPolicy;
import org.privface.agent.track.TrackBudget;
import org.privface.privacy.answer.Gallery;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.recognizer.answer.AnswerResults;
import org.privface.recognizer.answer.GalleryBuilder;
import org.privface.recognizer.answer.GalleryPublisher;
import org.privface.recognizer.answer.PublicStrangers;
import org.privface.wire.FaceRecords;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.avro.AnswerTrack;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.control.SignedControl;
import org.privface.wire.security.Security;
import org.privface.wire.topics.Topics;

/**
 * The answer loop on real faces (lfw5, fr_feature) through a secured broker process with the
 * project's ACLs, each side as its own principal: the gateway's enrollment releases → the
 * recognizer's gallery (templates from those releases, threshold on public lfw-public strangers)
 * → signed on the site's gallery topic → the gateway verifies it and decodes its query faces →
 * answer records → the recognizer's results and per-identity estimates. Every record's ε and form
 * is checked. The pieces are the services' own classes; the camera worker's release switch is not
 * part of this loop yet.
 */
class AnswerLoopTest {
    private static final String SITE = "answer-site";
    private static final double EPSILON = 10;
    private static final int ENROL = 10;
    private static final int QUERY = 4;
    private static final int STRANGERS = 60;

    @Test
    void enrollmentsGalleryAnswersResults() throws Exception {
        Path lfw5 = FaceDatasets.root().map(r -> r.resolve("lfw5")).filter(Files::isDirectory).orElse(null);
        Path pub = FaceDatasets.root().map(r -> r.resolve("lfw-public")).filter(Files::isDirectory).orElse(null);
        assumeTrue(lfw5 != null && pub != null, "lfw5 or lfw-public not found: set FACE_DATASETS to the shared datasets folder");
        assumeTrue(FaceEmbedders.missing(FaceEmbedders.FR_FEATURE).isEmpty(), "fr_feature is not installed (the agent build fetches it)");
        Optional<Path> yunet = FaceModels.findYunet(null);
        assumeTrue(yunet.isPresent(), "YuNet not found (set FACE_MODELS)");
        Path root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        Path work = Files.createTempDirectory("privface-answer-loop-");

        // Real faces: ENROL + QUERY images of each lfw5 person, one image each of STRANGERS public people.
        LabelledFaces faces;
        LabelledFaces strangers;
        try (YuNetDetector detector = new YuNetDetector(yunet.get(), YuNetDetector.DEFAULT_SCORE, 0);
             FaceEmbedder embedder = FaceEmbedders.create(FaceEmbedders.FR_FEATURE)) {
            faces = FaceDatasets.embedded(links(lfw5, work.resolve("lfw5"), Integer.MAX_VALUE, ENROL + QUERY), detector, embedder);
            strangers = FaceDatasets.embedded(links(pub, work.resolve("public"), STRANGERS, 1), detector, embedder);
        }
        EmbeddingMechanism m = EmbeddingMechanism.publicPreset(FaceEmbedders.FR_FEATURE, EmbeddingMechanism.Noise.SIGN_CAP, EPSILON);
        PublicStrangers publicSet = PublicStrangers.project("lfw-public", m, strangers.faces());
        publicSet.write(work.resolve("strangers.txt"));
        assertEquals(strangers.size(), PublicStrangers.read(work.resolve("strangers.txt")).directions().length);

        List<String> sites = List.of(SITE);
        try (LocalBroker broker = LocalBroker.secured(root, Files.createDirectories(work.resolve("kafka")),
                Topics.definitions(sites), Security.definitions(sites))) {
            KafkaClientProperties agent = client(broker.client("agent-" + SITE));
            KafkaClientProperties recognizer = client(broker.client("recognizer"));

            // 1. The gateway's enrollment releases: the first ENROL faces of each person, once each at ε.
            Map<Integer, Integer> seen = new HashMap<>();
            List<Integer> queries = new ArrayList<>();
            int enrolled = 0;
            try (FacePublisher publisher = new FacePublisher(agent, SITE, new Properties())) {
                for (int i = 0; i < faces.size(); i++) {
                    int n = seen.merge(faces.labels()[i], 1, Integer::sum);
                    if (n > ENROL) {
                        queries.add(i);
                        continue;
                    }
                    publisher.send(new org.privface.agent.publish.PerturbedRecords(SITE).of(m.perturb(faces.faces()[i]), "enrollment", "enr-" + i, Instant.now(),
                            faces.names().get(faces.labels()[i]))).get();
                    enrolled++;
                }
            }
            assertTrue(queries.size() >= 10, "query faces: " + queries.size());

            // 2. The recognizer's gallery from the enrollment records it reads, 3. signed on the gallery topic.
            List<PerturbedFace> enrollments = new ArrayList<>();
            for (ConsumerRecord<String, byte[]> r : readAll(recognizer, Topics.enrollment(SITE), 3, enrolled)) {
                enrollments.add(FaceRecords.decodeFromTopic(r.topic(), r.value()));
            }
            String space = GalleryBuilder.mainSpace(SITE, enrollments).orElseThrow();
            assertEquals(m.releaseSpace(), space);
            // The point estimate: this test's public set is too small for the service's Wilson bound at 1 %. And a
            // 5 % target: at 1 % the threshold is the single highest of the 60 strangers' scores, which swung the
            // accuracy of 20 answers between 0.5 and 0.95 from run to run; the loop, not the rate, is tested here.
            FaceGallery model = GalleryBuilder.build(SITE, 1, space, enrollments, Optional.of(publicSet), EPSILON, 0.05,
                    org.privface.privacy.answer.Gallery.Bound.ESTIMATE, Instant.now());
            assertEquals(faces.names().size(), model.getLabels().size());
            assertEquals(enrolled, model.getEnrollmentReleases());
            assertEquals("lfw-public", model.getCalibration().getStrangerSet());
            var key = SignedControl.generate();
            GalleryPublisher galleries = new GalleryPublisher(key.getPrivate(), "recognizer-1");
            try (KafkaProducer<String, byte[]> p = producer(recognizer)) {
                galleries.publish(p, model);
            }
            // Only the recognizer writes a gallery: the gateway's principal is refused.
            try (KafkaProducer<String, byte[]> p = producer(agent)) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> galleries.publish(p, model));
                assertTrue(e.getCause() instanceof TopicAuthorizationException, e.toString());
            }

            // 4. The gateway verifies the gallery and decodes each query face; 5. answer records.
            GalleryFollower follower = new GalleryFollower(SITE, Map.of("recognizer-1", key.getPublic())).start(agent);
            List<FaceAnswer> sent = new ArrayList<>();
            Map<String, String> truth = new HashMap<>();
            try {
                long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (follower.current().isEmpty() && System.nanoTime() < end) {
                    Thread.sleep(100);
                }
                Gallery g = follower.current().orElseThrow(() -> new AssertionError(follower.whyNone().orElse("")));
                assertEquals(0, follower.refusedCount());
                AnswerSampler release = new AnswerSampler(SITE);
                TrackBudget budget = new TrackBudget(BudgetPolicy.parse("once"), EPSILON, Duration.ofMinutes(5));
                try (KafkaProducer<String, byte[]> p = producer(agent)) {
                    for (int i : queries) {
                        String track = "trk-" + i;
                        TrackBudget.Grant grant = budget.request(track, 1, Instant.now()).orElseThrow();
                        AnswerTrack t = AnswerTrack.newBuilder().setReleaseIndex(grant.releaseIndex())
                                .setEpsilonSpentInWindow(grant.epsilonSpentInWindow()).setEpsilonBudget(grant.epsilonBudget())
                                .setBudgetPolicy(grant.policy()).setLinking(false).setPersonEpsilonBudget(null).build();
                        FaceAnswer a = release.answer(g, m, faces.faces()[i], grant.epsilonForThisRelease(), "cam-1", track,
                                Instant.now(), t);
                        assertTrue(budget.request(track, 2, Instant.now()).isEmpty(), "the track's budget is spent");
                        p.send(new ProducerRecord<>(Topics.answer(SITE), a.getCameraId(), FaceRecords.encode(a))).get();
                        sent.add(a);
                        truth.put(a.getEventId(), faces.names().get(faces.labels()[i]));
                    }
                }
            } finally {
                follower.close();
            }

            // 6. The recognizer reads the answers, publishes results and estimates counts.
            AnswerResults tally = new AnswerResults();
            List<FaceAnswer> read = new ArrayList<>();
            try (KafkaProducer<String, byte[]> p = producer(recognizer)) {
                for (ConsumerRecord<String, byte[]> r : readAll(recognizer, Topics.answer(SITE), 6, sent.size())) {
                    FaceAnswer a = FaceRecords.decodeAnswerFromTopic(r.topic(), r.value());
                    read.add(a);
                    tally.add(a);
                    p.send(new ProducerRecord<>(Topics.RESULTS, a.getCameraId(),
                            FaceRecords.encode(AnswerResults.result(a, Instant.now())))).get();
                }
            }
            List<RecognitionResult> results = new ArrayList<>();
            for (ConsumerRecord<String, byte[]> r : readAll(client(broker.client(LocalBroker.ADMIN)), Topics.RESULTS, 6,
                    sent.size())) {
                results.add(FaceRecords.decodeResult(r.value()));
            }

            // Every record's form and ε.
            double stated = new AnswerSampler(SITE).sampler(model.getLabels().size(), EPSILON).epsilon();
            assertTrue(stated <= EPSILON && stated > EPSILON - 1e-6, "stated ε " + stated);
            assertEquals(sent.size(), read.size());
            int right = 0;
            for (FaceAnswer a : read) {
                assertEquals("RR", a.getMechanism().getName());
                assertEquals(stated, a.getMechanism().getEpsilonPerFace(), "the sampler's ε, stated");
                assertEquals(stated, a.getTrack().getEpsilonSpentInWindow(), 1e-9, "the track is charged what the record states");
                assertEquals(1, a.getTrack().getReleaseIndex());
                assertEquals(1, a.getGallery().getVersion());
                assertEquals(model.getLabels().size(), a.getGallery().getIdentities());
                assertEquals(space, a.getGallery().getBasisId());
                if (a.getOutput() == a.getGallery().getIdentities()) {
                    assertNull(a.getLabel());
                } else {
                    assertEquals(model.getLabels().get(a.getOutput()), a.getLabel());
                }
                right += truth.get(a.getEventId()).equals(a.getLabel()) ? 1 : 0;
            }
            assertEquals(read.size(), results.size(), "one result per answer");
            for (RecognitionResult r : results) {
                assertEquals(stated, r.getEpsilonPerFace());
                assertEquals("gallery-1", r.getModelVersion());
            }
            double accuracy = right / (double) read.size();
            System.out.printf("answer loop: %d people, %d enrollment releases, %d strangers, threshold %.3f, %d answers,"
                    + " accuracy %.3f at ε %.4f%n", model.getLabels().size(), enrolled, strangers.size(),
                    model.getThreshold(), read.size(), accuracy, stated);
            // κ ≈ 0.9997 at ε 10 with C = 5, so the accuracy is the decoder's: nearest template at an
            // open-set threshold; far above chance (1/6).
            assertTrue(accuracy >= 0.6, "accuracy " + accuracy);
            var estimates = tally.estimates();
            assertEquals(1, estimates.size());
            double total = 0;
            for (double e : estimates.values().iterator().next().estimated()) {
                total += e;
            }
            assertEquals(read.size(), total, 1e-6, "the unbiased estimates sum to the answers");
        }
    }

    private static KafkaClientProperties client(Properties p) {
        Map<String, Object> m = new HashMap<>();
        p.stringPropertyNames().forEach(k -> m.put(k, p.getProperty(k)));
        return KafkaClientProperties.of(m);
    }

    private static KafkaProducer<String, byte[]> producer(KafkaClientProperties c) {
        Properties p = c.producer();
        p.put("max.block.ms", "20000");
        return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    /** Every record of a topic's partitions from the beginning, until {@code expected} have come. */
    private static List<ConsumerRecord<String, byte[]>> readAll(KafkaClientProperties c, String topic, int partitions,
                                                                int expected) {
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < partitions; i++) {
            tps.add(new TopicPartition(topic, i));
        }
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c.consumer(), new StringDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (out.size() < expected && System.nanoTime() < end) {
                consumer.poll(Duration.ofMillis(500)).forEach(out::add);
            }
        }
        assertEquals(expected, out.size(), "records read from " + topic);
        return out;
    }

    /** A folder of links to the first {@code perPerson} images of the first {@code people} person folders. */
    private static Path links(Path from, Path to, int people, int perPerson) throws Exception {
        List<Path> folders;
        try (Stream<Path> s = Files.list(from)) {
            folders = s.filter(Files::isDirectory).sorted().limit(people).toList();
        }
        for (Path person : folders) {
            List<Path> files;
            try (Stream<Path> s = Files.list(person)) {
                files = s.filter(Files::isRegularFile).sorted().limit(perPerson).toList();
            }
            Path dir = Files.createDirectories(to.resolve(person.getFileName()));
            for (Path f : files) {
                Files.createSymbolicLink(dir.resolve(f.getFileName()), f.toAbsolutePath());
            }
        }
        return to;
    }
}
