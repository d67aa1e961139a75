package org.privface.recognizer.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.micronaut.context.ApplicationContext;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.recognizer.answer.GalleryService;
import org.privface.recognizer.api.SiteController;
import org.privface.recognizer.ingest.AnswerReader;
import org.privface.recognizer.ownership.SiteOwnership;
import org.privface.recognizer.model.ModelRegistry;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.topics.Topics;

/**
 * Owner-only work against the real broker (issue 41). Before ownership, each of these failed:
 * every replica read every answer topic from offset 0 and republished each answer after a
 * restart, and every replica published every site's gallery.
 */
class OwnershipTest {

    /** Answers become results once: a restarted replica resumes from the committed offsets and rebuilds its tallies. */
    @Test
    void noResultRepublishedAfterARestart(@TempDir Path dir) throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        String site = "own-r-" + run;
        FleetRecords.createTopics(List.of(site));
        Path key = FleetRecords.signingKey(dir);
        String group = "own-restart-" + run;
        List<String> asked = new ArrayList<>();
        try (KafkaProducer<String, byte[]> p = producer()) {
            try (ApplicationContext a = FleetRecords.replica("a", group, site, key, Map.of())) {
                for (int i = 0; i < 4; i++) {
                    send(p, site, "first-" + i, asked);
                }
                assertTrue(FleetRecords.await(Duration.ofSeconds(60), () -> results(site).keySet().containsAll(asked)),
                        "the first answers became results: " + results(site));
            }
            for (int i = 0; i < 2; i++) {
                send(p, site, "second-" + i, asked);
            }
            try (ApplicationContext b = FleetRecords.replica("a", group, site, key, Map.of())) {
                assertTrue(FleetRecords.await(Duration.ofSeconds(60), () -> results(site).keySet().containsAll(asked)),
                        "the answers sent while it was down became results: " + results(site));
                Thread.sleep(3_000);
                Map<String, Integer> counts = results(site);
                assertEquals(asked.size(), counts.size(), counts.toString());
                counts.forEach((id, n) -> assertEquals(1, n, "answer " + id + " published " + n + " times"));
                // The tallies are rebuilt from the whole topic, not only from what was published since.
                long tallied = b.getBean(AnswerReader.class).estimates().values().stream()
                        .filter(e -> e.site().equals(site)).mapToLong(e -> e.answers()).sum();
                assertEquals(asked.size(), tallied);
            }
        }
    }

    /** Two replicas: each site has one owner, only it publishes the site's gallery, the other holds nothing of it. */
    @Test
    void oneReplicaPublishesEachGallery(@TempDir Path dir) throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        List<String> sites = new ArrayList<>();
        for (int s = 0; s < 4; s++) {
            sites.add("own-g" + s + "-" + run);
        }
        FleetRecords.createTopics(sites);
        Path key = FleetRecords.signingKey(dir);
        String group = "own-gallery-" + run;
        String pattern = "own-g[0-9]-" + run;
        try (ApplicationContext a = FleetRecords.replica("a", group, pattern, key, Map.of());
             ApplicationContext b = FleetRecords.replica("b", group, pattern, key, Map.of());
             KafkaProducer<String, byte[]> p = producer()) {
            SiteOwnership oa = a.getBean(SiteOwnership.class);
            SiteOwnership ob = b.getBean(SiteOwnership.class);
            assertTrue(FleetRecords.await(Duration.ofSeconds(60), () -> oa.sites().size() == 2 && ob.sites().size() == 2),
                    "two sites each: " + oa.sites() + " " + ob.sites());
            int n = 0;
            for (String site : sites) {
                for (int i = 0; i < 15; i++) {
                    var f = FleetRecords.enrollment(site, "enr-" + n++, i % 3, i / 3);
                    p.send(new ProducerRecord<>(Topics.enrollment(site), f.getCameraId(), FaceRecords.encode(f)));
                }
            }
            p.flush();
            List<String> topics = sites.stream().map(Topics::gallery).toList();
            assertTrue(FleetRecords.await(Duration.ofSeconds(60), () -> galleries(topics).size() == sites.size()),
                    "every site's gallery published");
            Thread.sleep(3_000);
            Map<String, List<FaceGallery>> bySite = galleries(topics);
            for (String site : sites) {
                assertEquals(1, bySite.get(site).size(), "one gallery on " + site + ": " + bySite.get(site));
                assertEquals(15, bySite.get(site).get(0).getEnrollmentReleases());
                boolean aOwns = oa.owns(site);
                assertTrue(aOwns ^ ob.owns(site), site + " owned by exactly one replica");
                ApplicationContext other = aOwns ? b : a;
                assertTrue(other.getBean(GalleryService.class).gallery(site).isEmpty(), "the other replica has no gallery of " + site);
                assertTrue(!other.getBean(ModelRegistry.class).sitesHeld().contains(site), "the other replica holds nothing of " + site);
            }
            // /sites shows the whole fleet from either replica: each site with its owner and gallery.
            for (ApplicationContext c : List.of(a, b)) {
                SiteController sc = c.getBean(SiteController.class);
                assertTrue(FleetRecords.await(Duration.ofSeconds(30), () -> sites.stream().allMatch(site ->
                        sc.sites().stream().anyMatch(r -> r.site().equals(site) && r.owner() != null
                                && r.galleryVersion() == bySite.get(site).get(0).getVersion() && r.enrollments() == 15))),
                        "the fleet's sites with owner and gallery: " + sc.sites());
                for (String site : sites) {
                    String owner = (oa.owns(site) ? a : b).getBean(org.privface.recognizer.RecognizerSettings.class).getInstanceId();
                    assertTrue(sc.sites().stream().anyMatch(r -> r.site().equals(site) && owner.equals(r.owner())), site);
                }
                List<SiteController.SiteStats> page = sc.sites(1, 2);
                assertEquals(2, page.size(), "one page of the sorted rows");
            }
        }
    }

    private static KafkaProducer<String, byte[]> producer() {
        return new KafkaProducer<>(FleetRecords.client(), new StringSerializer(), new ByteArraySerializer());
    }

    private static void send(KafkaProducer<String, byte[]> p, String site, String id, List<String> asked) throws Exception {
        p.send(new ProducerRecord<>(Topics.answer(site), "cam-1", FaceRecords.encode(FleetRecords.answer(site, id, 1, asked.size() % 4)))).get();
        asked.add(id);
    }

    /** Results of one site: how many times each event id was published. */
    static Map<String, Integer> results(String site) {
        Map<String, Integer> out = new HashMap<>();
        for (ConsumerRecord<String, byte[]> r : FleetRecords.readAll(List.of(Topics.RESULTS))) {
            RecognitionResult res = FaceRecords.decodeResult(r.value());
            if (res.getSiteId().equals(site)) {
                out.merge(res.getEventId(), 1, Integer::sum);
            }
        }
        return out;
    }

    /** Every gallery on the topics, per site, in topic order. */
    static Map<String, List<FaceGallery>> galleries(List<String> topics) {
        Map<String, List<FaceGallery>> out = new HashMap<>();
        Set<String> seen = new HashSet<>();
        for (ConsumerRecord<String, byte[]> r : FleetRecords.readAll(topics)) {
            FaceGallery g = FaceRecords.decodeGalleryFromTopic(r.topic(), r.value());
            seen.add(r.topic());
            out.computeIfAbsent(g.getSiteId(), s -> new ArrayList<>()).add(g);
        }
        return out;
    }
}
