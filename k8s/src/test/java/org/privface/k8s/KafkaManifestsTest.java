package org.privface.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.JsonNode;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.kafka.KafkaAuthorizationSimple;
import io.strimzi.api.kafka.model.kafka.listener.GenericKafkaListener;
import io.strimzi.api.kafka.model.kafka.listener.KafkaListenerAuthenticationScramSha512;
import io.strimzi.api.kafka.model.kafka.listener.KafkaListenerType;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.nodepool.ProcessRoles;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.strimzi.api.kafka.model.user.KafkaUser;
import org.junit.jupiter.api.Test;

/** The Kafka side of the deployment: ACLs per principal, the KRaft cluster, topics equal to broker-config/topics.yml. */
class KafkaManifestsTest extends ManifestsFixture {

    // ---------------------------------------------------------------- Kafka principals

    @Test
    void everyAgentUserReachesOnlyItsOwnSitesTopics() {
        List<KafkaUser> agents = users().stream().filter(u -> Policies.AGENT.matcher(u.getMetadata().getName()).matches()).toList();
        assertEquals(OVERLAYS.keySet(), agents.stream().map(u -> u.getMetadata().getName().substring("agent-".length()))
                .collect(Collectors.toCollection(LinkedHashSet::new)), "one agent principal per site overlay");
        List<String> v = new ArrayList<>();
        for (KafkaUser u : agents) {
            v.addAll(Policies.agentUser(u, OVERLAYS.keySet()));
            String site = u.getMetadata().getName().substring("agent-".length());
            Path file = fileOf(u);
            if (!file.startsWith(OVERLAYS.get(site))) {
                v.add(u.getMetadata().getName() + " is defined in " + file + ", outside its site's overlay");
            }
        }
        assertTrue(v.isEmpty(), () -> String.join("\n", v));
    }

    @Test
    void recognizerReadsEverySiteAndWritesOnlyResultsDeadLettersAndEachSitesGallery() throws IOException {
        List<KafkaUser> r = users().stream().filter(u -> u.getMetadata().getName().equals(Policies.RECOGNIZER)).toList();
        assertEquals(1, r.size(), "one recognizer principal");
        List<String> v = Policies.recognizerUser(r.get(0), OVERLAYS.keySet(), recognizerGroupId());
        assertTrue(v.isEmpty(), () -> String.join("\n", v));
    }

    @Test
    void operatorConsoleAndGatewayUsersReachExactlyTheirSites() throws IOException {
        List<String> v = new ArrayList<>();
        Set<String> seen = new TreeSet<>();
        for (KafkaUser u : users()) {
            seen.add(u.getMetadata().getName());
            v.addAll(userProblems(u));
        }
        for (String site : OVERLAYS.keySet()) {
            if (!seen.contains("operator-" + site)) {
                v.add("site " + site + " has no operator principal for its control topic");
            }
            for (String gw : SITES.site(site).gateways()) {
                if (!seen.contains("gateway-" + site + "-" + gw)) {
                    v.add("site " + site + ": gateway " + gw + " has no principal of its own");
                }
            }
        }
        for (var c : SITES.consoles()) {
            if (!seen.contains("console-" + c.name())) {
                v.add("console " + c.name() + " has no principal");
            }
        }
        assertTrue(v.isEmpty(), () -> String.join("\n", v));
    }

    // ---------------------------------------------------------------- Kafka cluster and topics

    @Test
    void kafkaIsAReplicatedKraftClusterWithScramOverTlsAndAcls() {
        List<Kafka> ks = of(Kafka.class);
        assertEquals(1, ks.size());
        Kafka k = ks.get(0);
        assertEquals("enabled", k.getMetadata().getAnnotations().get("strimzi.io/kraft"));
        assertEquals("enabled", k.getMetadata().getAnnotations().get("strimzi.io/node-pools"));
        Map<String, Object> cfg = k.getSpec().getKafka().getConfig();
        assertEquals("3", String.valueOf(cfg.get("default.replication.factor")));
        assertEquals("2", String.valueOf(cfg.get("min.insync.replicas")));
        assertEquals("false", String.valueOf(cfg.get("auto.create.topics.enable")));
        assertTrue(k.getSpec().getKafka().getAuthorization() instanceof KafkaAuthorizationSimple, "simple authorization");
        List<GenericKafkaListener> ls = k.getSpec().getKafka().getListeners();
        assertTrue(ls.stream().anyMatch(l -> l.getType() == KafkaListenerType.INTERNAL && l.isTls()), "an internal TLS listener");
        assertTrue(ls.stream().anyMatch(l -> l.getType() != KafkaListenerType.INTERNAL && l.getType() != KafkaListenerType.CLUSTER_IP),
                "an external listener");
        for (GenericKafkaListener l : ls) {
            assertTrue(l.isTls(), l.getName() + ": TLS");
            assertTrue(l.getAuth() instanceof KafkaListenerAuthenticationScramSha512, l.getName() + ": SCRAM-SHA-512");
            assertFalse(l.getNetworkPolicyPeers() == null || l.getNetworkPolicyPeers().isEmpty(),
                    l.getName() + ": networkPolicyPeers, else Strimzi's policy admits every source");
        }
        List<KafkaNodePool> pools = of(KafkaNodePool.class);
        assertEquals(3, pools.stream().filter(p -> p.getSpec().getRoles().contains(ProcessRoles.CONTROLLER))
                .mapToInt(p -> p.getSpec().getReplicas()).sum(), "3 controllers");
        assertEquals(3, pools.stream().filter(p -> p.getSpec().getRoles().contains(ProcessRoles.BROKER))
                .mapToInt(p -> p.getSpec().getReplicas()).sum(), "3 brokers");
        for (Manifests.Doc d : RESOURCES) {
            if (d.kind().startsWith("Kafka") && !d.kind().equals("Kafka")) {
                assertEquals("privface", d.model().getMetadata().getLabels().get("strimzi.io/cluster"),
                        d.where() + ": strimzi.io/cluster label");
            }
        }
    }

    @Test
    void topicsMatchBrokerConfigTopicsYml() throws IOException {
        JsonNode defs = Manifests.YAML.readTree(repo.resolve("broker-config/topics.yml").toFile()).path("topics");
        assertTrue(defs.size() >= 6);
        Map<String, KafkaTopic> topics = new HashMap<>();
        Map<String, Path> files = new HashMap<>();
        for (Manifests.Doc d : RESOURCES) {
            if (d.kind().equals("KafkaTopic")) {
                KafkaTopic t = d.as(KafkaTopic.class);
                String name = t.getSpec().getTopicName() != null ? t.getSpec().getTopicName() : t.getMetadata().getName();
                topics.put(name, t);
                files.put(name, d.file());
            }
        }
        List<String> v = new ArrayList<>();
        Set<String> expected = new TreeSet<>();
        for (JsonNode def : defs) {
            String template = def.path("name").asText();
            List<String> names = new ArrayList<>();
            if (template.contains("{site}")) {
                for (String site : OVERLAYS.keySet()) {
                    String n = template.replace("{site}", site);
                    names.add(n);
                    if (files.containsKey(n) && !files.get(n).startsWith(OVERLAYS.get(site))) {
                        v.add(n + " is defined outside site " + site + "'s overlay");
                    }
                }
            } else {
                names.add(template);
            }
            for (String n : names) {
                expected.add(n);
                KafkaTopic t = topics.get(n);
                if (t == null) {
                    v.add("no KafkaTopic for " + n);
                    continue;
                }
                if (t.getSpec().getPartitions() != def.path("partitions").asInt()) {
                    v.add(n + ": partitions " + t.getSpec().getPartitions() + ", topics.yml says " + def.path("partitions"));
                }
                if (t.getSpec().getReplicas() != def.path("replicationFactor").asInt()) {
                    v.add(n + ": replicas " + t.getSpec().getReplicas() + ", topics.yml says " + def.path("replicationFactor"));
                }
                Map<String, String> want = new java.util.TreeMap<>();
                def.path("config").fields().forEachRemaining(e -> want.put(e.getKey(), e.getValue().asText()));
                Map<String, String> have = new java.util.TreeMap<>();
                if (t.getSpec().getConfig() != null) {
                    t.getSpec().getConfig().forEach((key, val) -> have.put(key, String.valueOf(val)));
                }
                if (!want.equals(have)) {
                    v.add(n + ": config " + have + ", topics.yml says " + want);
                }
            }
        }
        Set<String> extra = new TreeSet<>(topics.keySet());
        extra.removeAll(expected);
        if (!extra.isEmpty()) {
            v.add("KafkaTopics topics.yml does not define: " + extra);
        }
        assertTrue(v.isEmpty(), () -> String.join("\n", v));
    }
}
