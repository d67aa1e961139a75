package org.privface.wire.topics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.privface.kafka.testkit.RealKafka;

class TopicsTest {

    @Test
    void expandsSitesFromTheBundledDefinitions() {
        List<TopicSpec> specs = Topics.definitions(List.of("north", "south"));
        Set<String> names = Set.copyOf(specs.stream().map(TopicSpec::name).toList());
        assertEquals(Set.of("privface.north.enrollment", "privface.north.query", "privface.south.enrollment",
                "privface.south.query", Topics.RESULTS, Topics.DEAD_LETTER, Topics.control("north"),
                Topics.control("south"), Topics.status("north"), Topics.status("south"), Topics.gallery("north"),
                Topics.gallery("south"), Topics.answer("north"), Topics.answer("south"), Topics.erasure("north"),
                Topics.erasure("south"), "privface.fleet-sites"), names);
        // Enrollments compacted per record key, which starts with the person's pseudonym (#43).
        Map<String, String> enrollment = specs.stream().filter(t -> t.name().equals(Topics.enrollment("north")))
                .findFirst().orElseThrow().config();
        assertEquals("compact", enrollment.get("cleanup.policy"));
        assertTrue(Long.parseLong(enrollment.get("segment.ms")) > 0 && Long.parseLong(enrollment.get("max.compaction.lag.ms")) > 0);
        assertTrue(Topics.ALL_ERASURE.matcher(Topics.erasure("north")).matches());
        assertEquals("compact", specs.stream().filter(t -> t.name().equals(Topics.gallery("north"))).findFirst()
                .orElseThrow().config().get("cleanup.policy"));
        assertTrue(Topics.ALL_ANSWER.matcher(Topics.answer("north")).matches());
        assertEquals("north", Topics.siteOf(Topics.gallery("north")));
        assertEquals("compact", specs.stream().filter(t -> t.name().equals(Topics.control("north"))).findFirst()
                .orElseThrow().config().get("cleanup.policy"));
        assertTrue(Topics.ALL_STATUS.matcher(Topics.status("north")).matches());
        assertEquals("north", Topics.siteOf(Topics.control("north")));
        assertTrue(Topics.ALL_QUERY.matcher(Topics.query("north")).matches());
        assertTrue(Topics.ALL_ENROLLMENT.matcher(Topics.enrollment("north")).matches());
        assertTrue(!Topics.ALL_QUERY.matcher(Topics.enrollment("north")).matches());
        assertEquals("north", Topics.siteOf(Topics.query("north")));
        assertEquals("south", Topics.siteOf(Topics.enrollment("south")));
        assertThrows(IllegalArgumentException.class, () -> Topics.siteOf(Topics.RESULTS));
    }

    @Test
    void rejectsSiteIdsThatWouldBreakTopicNames() {
        assertThrows(IllegalArgumentException.class, () -> Topics.query("a.b"));
        assertThrows(IllegalArgumentException.class, () -> Topics.query(""));
        assertThrows(IllegalArgumentException.class, () -> Topics.definitions(List.of("x y")));
    }

    @Test
    void appliesIdempotentlyToARealBroker() throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        try (Admin admin = Admin.create(p)) {
            List<TopicSpec> specs = Topics.definitions(List.of("applier-test"));
            TopicApplier applier = new TopicApplier(admin);
            List<String> first = applier.apply(specs);
            assertTrue(first.contains("privface.applier-test.query"), first.toString());
            assertEquals(List.of(), applier.apply(specs), "second apply creates nothing");
            var described = admin.describeTopics(List.of("privface.applier-test.query")).allTopicNames().get();
            assertEquals(1, described.get("privface.applier-test.query").partitions().size(), "one owner per site: one query partition");
            var res = new ConfigResource(ConfigResource.Type.TOPIC, "privface.applier-test.enrollment");
            Map<ConfigResource, org.apache.kafka.clients.admin.Config> cfg = admin.describeConfigs(List.of(res)).all().get();
            assertEquals("compact", cfg.get(res).get("cleanup.policy").value());
            assertEquals("3600000", cfg.get(res).get("max.compaction.lag.ms").value());
        }
    }
}
