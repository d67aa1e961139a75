package org.privface.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.privface.agent.detect.DeepModels;
import org.privface.agent.detect.FaceModels;
import org.privface.kafka.testkit.RealKafka;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;

/**
 * The whole agent (Micronaut application, enrollment, camera thread, uplink, real broker) on real
 * lfw5 faces with a deep detector: every query image gives at least one released face, and every
 * released face is one record. Skipped where the models or the data set are absent.
 */
class AgentDeepPipelineTest {
    private static final int ENROLL_PER_PERSON = 6;
    private static final int QUERY_PER_PERSON = 3;

    @ParameterizedTest
    @ValueSource(strings = {"yunet", "ultraface"})
    void realFacesFlowThroughTheDeepDetector(String detector, @TempDir Path dir) throws Exception {
        DeepModels.facepluginOrSkip();
        if (detector.equals("yunet")) {
            DeepModels.yunetOrSkip();
        }
        Path lfw5 = DeepModels.datasetOrSkip("lfw5");
        // Links to the shared images, never copies: an enrollment folder and a query folder of other images.
        Path enroll = dir.resolve("enroll");
        Path query = dir.resolve("query");
        List<Path> people;
        try (Stream<Path> s = Files.list(lfw5)) {
            people = s.filter(Files::isDirectory).sorted().toList();
        }
        Set<String> queryFiles = new HashSet<>();
        for (Path person : people) {
            List<Path> files = DeepModels.images(person, ENROLL_PER_PERSON + QUERY_PER_PERSON);
            for (int i = 0; i < files.size(); i++) {
                Path f = files.get(i);
                Path to = i < ENROLL_PER_PERSON ? enroll.resolve(person.getFileName()) : query;
                Files.createDirectories(to);
                Files.createSymbolicLink(to.resolve(f.getFileName()), f);
                if (i >= ENROLL_PER_PERSON) {
                    queryFiles.add(f.getFileName().toString());
                }
            }
        }
        String site = "deep" + detector;
        SiteRecords.createTopics(site);
        Path ledger = dir.resolve("ledger.csv");
        Map<String, Object> props = Map.ofEntries(
                Map.entry("kafka.bootstrap.servers", RealKafka.bootstrapServers()),
                Map.entry("kafka.health.enabled", "false"),
                Map.entry("micronaut.server.port", "-1"),
                Map.entry("agent.site-id", site),
                Map.entry("agent.detector", detector),
                Map.entry("agent.yunet-model", detector.equals("yunet")
                        ? FaceModels.sharedModels().resolve(FaceModels.YUNET_FILE).toAbsolutePath().toString() : ""),
                Map.entry("agent.enroll-folder", enroll.toString()),
                Map.entry("agent.source", query.toString()),
                Map.entry("agent.ledger", ledger.toString()),
                Map.entry("agent.epsilon", "16"),
                Map.entry("agent.data-dir", dir.resolve("data").toString()),
                Map.entry("agent.control.topic-enabled", "false"));
        long queries;
        try (ApplicationContext ctx = ApplicationContext.run(props)) {
            ctx.getBean(EmbeddedServer.class).start();
            AgentPipeline pipeline = ctx.getBean(AgentPipeline.class);
            assertTrue(pipeline.awaitCompletion(), "pipeline finished without error");

            List<PerturbedFace> records = SiteRecords.read(site, pipeline.published(), (k, f) -> { });
            assertEquals(pipeline.published(), records.size());
            queries = records.stream().filter(f -> f.getKind() == RecordKind.QUERY).count();
            long enrolled = records.size() - queries;
            // A face whose PEEP crop (taller than a square box) would leave the 150x150 image is dropped, not published.
            long images = people.size() * (long) ENROLL_PER_PERSON;
            assertTrue(enrolled <= images && enrolled >= images - 2, enrolled + " enrollment faces from " + images + " images");
            assertEquals(pipeline.facesDetected(), queries, "one query record per detected face");
            // A background face in an LFW image may add a record; none may be doubled by NMS.
            assertTrue(queries <= queryFiles.size() + 3, queries + " records from " + queryFiles.size() + " images");
        }
        // The ledger is complete once the agent has stopped.
        Set<String> origins = new HashSet<>();
        for (String line : Files.readAllLines(ledger)) {
            origins.add(line.substring(line.indexOf(',') + 1, line.lastIndexOf(',')));
        }
        Set<String> missing = new HashSet<>(queryFiles);
        missing.removeAll(origins);
        assertTrue(queryFiles.containsAll(origins), "origins are the query images: " + origins);
        assertTrue(missing.size() <= 1, "query images that released no face: " + missing);
        assertEquals(queries, Files.readAllLines(ledger).size(), "one ledger line per query record");
        // One face per image carries its label (LabelledFace), the others are marked apart.
        Map<String, Long> labelled = Files.readAllLines(ledger).stream().filter(l -> l.endsWith(",labelled"))
                .collect(java.util.stream.Collectors.groupingBy(l -> l.substring(l.indexOf(',') + 1, l.lastIndexOf(',')),
                        java.util.stream.Collectors.counting()));
        assertTrue(labelled.values().stream().allMatch(n -> n == 1), "one labelled face per image: " + labelled);
        assertTrue(labelled.size() >= origins.size() - 1, "labelled images " + labelled.size() + " of " + origins.size());
        assertTrue(Files.readAllLines(ledger).stream().allMatch(l -> l.endsWith(",labelled") || l.endsWith(",other")));
    }
}
