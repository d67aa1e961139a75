package org.privface.recognizer.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

import io.micronaut.context.ApplicationContext;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.recognizer.ownership.SiteOwnership;
import org.privface.recognizer.model.ModelRegistry;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.topics.Topics;

/**
 * A fleet of recognizer replicas in this JVM against the real test broker (issue 41): synthetic
 * sites with enrollments, queries and answers, small models, and one replica killed mid-run
 * (closed without leaving the owners' group, as a crash looks to the group: its sites move only
 * when its session times out). Checks: each site owned by exactly one replica, ownership within
 * 1.5× between the most and least loaded, no replica holding a site it does not own, every answer
 * and query published exactly once, gallery versions strictly increasing per site across owners,
 * and the time until the killed replica's sites answer again.
 *
 * <p>{@code mvn verify} runs 6 sites on 3 replicas; {@code -Pfleet} (recognizer module) runs
 * {@code privface.fleet.sites}=200 (docs/performance.md, "A fleet of recognizers").
 */
class FleetTest {
    private static final int SITES = Integer.getInteger("privface.fleet.sites", 6);
    private static final int REPLICAS = Integer.getInteger("privface.fleet.replicas", 3);
    private static final int PEOPLE = 3;
    private static final int ENROLL_EACH = 10;

    @Test
    void sitesOwnedOnceBalancedAndTakenOverAfterAKill(@TempDir Path dir) throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 6);
        List<String> sites = new ArrayList<>();
        for (int s = 0; s < SITES; s++) {
            sites.add("fl" + run + "-" + s);
        }
        String pattern = "fl" + run + "-[0-9]+";
        long t = System.nanoTime();
        FleetRecords.createTopics(sites);
        log("created the topics of %d sites in %.1f s", SITES, (System.nanoTime() - t) / 1e9);
        Path key = FleetRecords.signingKey(dir);
        Path models = Files.createDirectories(dir.resolve("models"));
        String group = "fleet-" + run;
        Set<String> answerIds = new HashSet<>();
        Set<String> queryIds = new HashSet<>();
        List<ApplicationContext> replicas = new ArrayList<>();
        try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(FleetRecords.client(), new StringSerializer(),
                new ByteArraySerializer()); Results results = new Results(sites)) {
            int n = 0;
            for (String site : sites) {
                for (int i = 0; i < PEOPLE * ENROLL_EACH; i++) {
                    var f = FleetRecords.enrollment(site, site + "-enr-" + n++, i % PEOPLE, i / PEOPLE);
                    p.send(new ProducerRecord<>(Topics.enrollment(site), f.getCameraId(), FaceRecords.encode(f)));
                }
            }
            p.flush();
            t = System.nanoTime();
            for (int r = 0; r < REPLICAS; r++) {
                Map<String, Object> extra = new HashMap<>();
                extra.put("recognizer.model-dir", models.toString());
                extra.put("recognizer.min-enrollments", String.valueOf(PEOPLE * ENROLL_EACH));
                extra.put("recognizer.quiet-period", "500ms");
                extra.put("recognizer.validation-every", "0");
                extra.put("recognizer.training-threads", "1");
                if (r == 0) {
                    // The replica to be killed: closing it does not tell the group, as a crash would not.
                    extra.put("kafka.internal.leave.group.on.close", "false");
                }
                replicas.add(FleetRecords.replica("replica-" + r, group, pattern, key, extra));
            }
            List<SiteOwnership> owners = replicas.stream().map(c -> c.getBean(SiteOwnership.class)).toList();
            // Every replica in the group with its share: until the last one has joined, the first may own
            // everything and then give sites up, so a site is briefly owned by none (seen on a quiet machine).
            assertTrue(FleetRecords.await(Duration.ofSeconds(120), () -> sites.stream().allMatch(s ->
                    owners.stream().filter(o -> o.ready(s)).count() == 1)
                    && owners.stream().allMatch(o -> o.sites().stream().filter(sites::contains).count() >= SITES / REPLICAS)),
                    "every site owned and replayed, every replica its share: " + owned(owners));
            List<String> galleryTopics = sites.stream().map(Topics::gallery).toList();
            assertTrue(FleetRecords.await(Duration.ofSeconds(120), () -> OwnershipTest.galleries(galleryTopics).size() == SITES),
                    "every site's gallery published");
            log("%d replicas own and published the galleries of %d sites in %.1f s: %s", REPLICAS, SITES,
                    (System.nanoTime() - t) / 1e9, counts(owners));
            checkOwnership(sites, replicas, owners);

            // Phase 1: answers and queries for every site.
            send(p, sites, "one", answerIds, queryIds);
            assertTrue(FleetRecords.await(Duration.ofSeconds(180), () -> results.now().keySet().containsAll(union(answerIds, queryIds))),
                    "phase 1 answered");
            Thread.sleep(1_000); // the last batch's offsets are committed after its results are acknowledged

            // Kill a replica, then send more of everything, enrollments too (new gallery versions, retraining).
            Set<String> moved = owners.get(0).sites();
            moved.retainAll(sites);
            replicas.get(0).close();
            long killedAt = System.nanoTime();
            Set<String> movedIds = new HashSet<>();
            Set<String> a2 = new HashSet<>();
            Set<String> q2 = new HashSet<>();
            send(p, sites, "two", a2, q2);
            for (String s : moved) {
                for (String id : union(a2, q2)) {
                    if (id.startsWith(s + "-")) {
                        movedIds.add(id);
                    }
                }
            }
            answerIds.addAll(a2);
            queryIds.addAll(q2);
            for (String site : sites) {
                for (int i = 0; i < PEOPLE; i++) {
                    var f = FleetRecords.enrollment(site, site + "-enr-late-" + i, i, ENROLL_EACH + 1);
                    p.send(new ProducerRecord<>(Topics.enrollment(site), f.getCameraId(), FaceRecords.encode(f)));
                }
            }
            p.flush();
            List<SiteOwnership> alive = owners.subList(1, REPLICAS);
            assertTrue(FleetRecords.await(Duration.ofSeconds(120), () -> results.now().keySet().containsAll(movedIds)),
                    "the killed replica's sites answered again");
            double recovery = (System.nanoTime() - killedAt) / 1e9;
            assertTrue(FleetRecords.await(Duration.ofSeconds(180), () -> results.now().keySet().containsAll(union(answerIds, queryIds))),
                    "phase 2 answered");
            assertTrue(FleetRecords.await(Duration.ofSeconds(120), () -> OwnershipTest.galleries(galleryTopics).values().stream()
                    .allMatch(l -> l.get(l.size() - 1).getEnrollmentReleases() == PEOPLE * (ENROLL_EACH + 1))),
                    "every site's gallery rebuilt with the late enrollments");
            FleetRecords.await(Duration.ofSeconds(3), () -> results.now() == null);
            checkOwnership(sites, replicas.subList(1, REPLICAS), alive);

            Map<String, Integer> out = results.now();
            Set<String> all = union(answerIds, queryIds);
            assertEquals(all, new TreeSet<>(out.keySet()), "no result lost");
            out.forEach((id, c) -> assertEquals(1, c, id + " published " + c + " times"));
            Map<String, List<FaceGallery>> galleries = OwnershipTest.galleries(galleryTopics);
            for (String site : sites) {
                List<FaceGallery> l = galleries.get(site);
                for (int i = 1; i < l.size(); i++) {
                    assertTrue(l.get(i).getVersion() > l.get(i - 1).getVersion(), site + ": gallery versions grow " + versions(l));
                }
            }
            String summary = String.format("fleet: %d sites, %d replicas, %d moved from the killed replica; answered again"
                    + " %.1f s after the kill (session timeout 6 s); %d results, none duplicated or lost; owned after: %s",
                    SITES, REPLICAS, moved.size(), recovery, out.size(), counts(alive));
            log("%s", summary);
            Files.writeString(Path.of("target", "fleet-test.txt"), summary + System.lineSeparator());
        } finally {
            for (int r = 1; r < replicas.size(); r++) {
                replicas.get(r).close();
            }
        }
    }

    private static void checkOwnership(List<String> sites, List<ApplicationContext> replicas, List<SiteOwnership> owners) {
        for (String site : sites) {
            assertEquals(1, owners.stream().filter(o -> o.owns(site)).count(), site + " owned once: " + owned(owners));
        }
        List<Integer> c = counts(owners);
        int max = c.stream().mapToInt(i -> i).max().orElseThrow();
        int min = c.stream().mapToInt(i -> i).min().orElseThrow();
        assertTrue(max <= 1.5 * min, "balanced within 1.5x: " + c);
        for (int r = 0; r < replicas.size(); r++) {
            Set<String> held = replicas.get(r).getBean(ModelRegistry.class).sitesHeld();
            held.retainAll(sites);
            Set<String> mine = owners.get(r).sites();
            assertTrue(mine.containsAll(held), "replica " + r + " holds only what it owns: " + held + " vs " + mine);
        }
    }

    private static void send(KafkaProducer<String, byte[]> p, List<String> sites, String phase, Set<String> answers,
                             Set<String> queries) throws Exception {
        for (String site : sites) {
            for (int i = 0; i < 2; i++) {
                String a = site + "-ans-" + phase + "-" + i;
                p.send(new ProducerRecord<>(Topics.answer(site), "cam-1", FaceRecords.encode(FleetRecords.answer(site, a, 1, i))));
                answers.add(a);
                String q = site + "-q-" + phase + "-" + i;
                p.send(new ProducerRecord<>(Topics.query(site), "cam-1", FaceRecords.encode(FleetRecords.query(site, q, i))));
                queries.add(q);
            }
        }
        p.flush();
    }

    /** How many times each event id of these sites was published as a result, read as the results come. */
    private static final class Results implements AutoCloseable {
        private final Set<String> sites;
        private final org.apache.kafka.clients.consumer.KafkaConsumer<String, byte[]> consumer;
        private final Map<String, Integer> counts = new HashMap<>();

        Results(List<String> sites) {
            this.sites = new HashSet<>(sites);
            consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<>(FleetRecords.client(),
                    new org.apache.kafka.common.serialization.StringDeserializer(),
                    new org.apache.kafka.common.serialization.ByteArrayDeserializer());
            List<org.apache.kafka.common.TopicPartition> tps = new ArrayList<>();
            consumer.partitionsFor(Topics.RESULTS).forEach(pi -> tps.add(new org.apache.kafka.common.TopicPartition(Topics.RESULTS, pi.partition())));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
        }

        Map<String, Integer> now() {
            for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                RecognitionResult res = FaceRecords.decodeResult(r.value());
                if (sites.contains(res.getSiteId())) {
                    counts.merge(res.getEventId(), 1, Integer::sum);
                }
            }
            return counts;
        }

        @Override
        public void close() {
            consumer.close();
        }
    }

    private static List<Integer> counts(List<SiteOwnership> owners) {
        return owners.stream().map(o -> o.sites().size()).toList();
    }

    private static List<Set<String>> owned(List<SiteOwnership> owners) {
        return owners.stream().map(SiteOwnership::sites).toList();
    }

    private static List<Long> versions(List<FaceGallery> l) {
        return l.stream().map(FaceGallery::getVersion).toList();
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> u = new TreeSet<>(a);
        u.addAll(b);
        return u;
    }

    private static void log(String format, Object... args) {
        System.out.println("[fleet] " + String.format(format, args));
    }
}
