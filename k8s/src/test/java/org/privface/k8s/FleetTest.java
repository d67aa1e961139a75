package org.privface.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.user.KafkaUser;
import io.strimzi.api.kafka.model.user.acl.AclOperation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.k8s.fleet.FleetGenerator;
import org.privface.k8s.fleet.SiteList;

/**
 * Sites from one list: k8s/sites.yaml is valid, the committed overlays and k8s/fleet are exactly
 * what the generator makes of it, a site is added or removed by one entry with no base file
 * touched (rendered by kubectl where installed), and the pitfalls of copying an overlay are refused.
 */
class FleetTest extends ManifestsFixture {
    static final String EAST = """
            id: east
            cameraNetworks: [10.30.5.0/24]
            cameras:
              dock: rtsp://10.30.5.7:554/main
            epsilon: 10
            floor: {min: 1, max: 10}
            release: both
            agentTag: 0.0.9
            gateways: [dock-box]
            uplinks: [100.64.20.0/28]
            operatorKeys:
              - "console: MCowBQYDK2VwAyEABe6ZtogSLJeoAre+IVp/raLwntOTP/RHDRW120lsKmo="
            """;

    static JsonNode topicsYml() throws IOException {
        return Manifests.YAML.readTree(repo.resolve("broker-config/topics.yml").toFile());
    }

    @Test
    void theShippedListIsValid() {
        assertEquals(List.of(), SITES.problems());
        assertEquals(SITES.sites().stream().map(SiteList.Site::id).toList(), List.copyOf(OVERLAYS.keySet()),
                "one overlay per listed site, none else");
    }

    @Test
    void theCommittedOverlaysAndFleetAreTheGeneratorsOutput() throws IOException {
        List<String> stale = new ArrayList<>();
        for (Map.Entry<String, String> f : new FleetGenerator(SITES, topicsYml()).render().entrySet()) {
            Path p = k8s.resolve(f.getKey());
            if (!Files.isRegularFile(p) || !Files.readString(p).equals(f.getValue())) {
                stale.add(f.getKey());
            }
        }
        assertTrue(stale.isEmpty(), () -> "not what k8s/sites.yaml generates (edit the list, not these files, and run "
                + "mvn -B -pl k8s compile exec:java): " + stale);
    }

    /** A copy of k8s/ (base, list, no overlays) and broker-config/topics.yml under dir, for the generator to write into. */
    private static Path copy(Path dir, String sitesYaml) throws IOException {
        Path to = dir.resolve("k8s");
        try (Stream<Path> s = Files.walk(k8s.resolve("base"))) {
            for (Path p : s.toList()) {
                Path t = to.resolve(k8s.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t);
                }
            }
        }
        Files.createDirectories(to.resolve("overlays"));
        Files.writeString(to.resolve("sites.yaml"), sitesYaml);
        Files.createDirectories(dir.resolve("broker-config"));
        Files.copy(repo.resolve("broker-config/topics.yml"), dir.resolve("broker-config/topics.yml"));
        return to;
    }

    private static String withSites(java.util.function.Consumer<ArrayNode> edit) throws IOException {
        ObjectNode root = (ObjectNode) Manifests.YAML.readTree(k8s.resolve("sites.yaml").toFile());
        edit.accept((ArrayNode) root.get("sites"));
        return Manifests.YAML.writeValueAsString(root);
    }

    private static Map<String, Manifests.Doc> byId(List<Manifests.Doc> docs) {
        Map<String, Manifests.Doc> out = new HashMap<>();
        docs.forEach(d -> out.put(d.kind() + "/" + d.name(), d));
        return out;
    }

    @Test
    void aThirdSiteIsOneListEntry(@TempDir Path dir) throws Exception {
        String yaml = withSites(a -> {
            try {
                a.add(Manifests.YAML.readTree(EAST));
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });
        SiteList list = SiteList.parse(yaml);
        assertEquals(List.of(), list.problems());
        Path out = copy(dir, yaml);
        new FleetGenerator(list, topicsYml()).write(out);
        try (Stream<Path> s = Files.walk(out.resolve("base"))) {
            for (Path p : s.filter(Files::isRegularFile).toList()) {
                assertEquals(Files.readString(k8s.resolve(out.relativize(p).toString())), Files.readString(p), p + " changed");
            }
        }
        // Every generated file of the east site binds to its model.
        try (Stream<Path> s = Files.walk(out.resolve("overlays/site-east"))) {
            for (Path p : s.filter(f -> f.toString().endsWith(".yaml") && !Manifests.isKustomization(f)).toList()) {
                Manifests.load(p);
            }
        }
        Map<String, Manifests.Doc> r = byId(ManifestsTest.render(out.resolve("fleet")));
        DaemonSet ds = r.get("DaemonSet/privface-agent-east").as(DaemonSet.class);
        assertEquals("privface/agent:0.0.9", ds.getSpec().getTemplate().getSpec().getContainers().get(0).getImage(),
                "east runs its own agent tag (staged rollout)");
        assertEquals("privface/agent:0.1.0", r.get("DaemonSet/privface-agent-north").as(DaemonSet.class)
                .getSpec().getTemplate().getSpec().getContainers().get(0).getImage(), "north keeps its tag");
        assertEquals("east", ds.getSpec().getTemplate().getSpec().getNodeSelector().get(SITE_LABEL));
        ConfigMap cm = r.get("ConfigMap/privface-agent-site-east").as(ConfigMap.class);
        assertEquals("10", cm.getData().get("AGENT_EPSILON"));
        assertEquals("both", cm.getData().get("AGENT_ANSWER_RELEASE"));
        assertEquals("rtsp://10.30.5.7:554/main", cm.getData().get("AGENT_CAMERAS_DOCK_URL"));
        assertTrue(r.containsKey("ConfigMap/privface-operator-keys-east"));
        assertEquals("10.30.5.0/24", r.get("NetworkPolicy/privface-agent-cameras-east").as(NetworkPolicy.class)
                .getSpec().getEgress().get(0).getTo().get(0).getIpBlock().getCidr());
        for (String kind : List.of("enrollment", "query", "control", "status", "gallery", "answer")) {
            assertTrue(r.containsKey("KafkaTopic/privface-east-" + kind), kind);
        }
        KafkaUser rec = r.get("KafkaUser/recognizer").as(KafkaUser.class);
        assertTrue(KafkaAcls.allowsTopic(rec, "privface.east.gallery", AclOperation.WRITE), "the recognizer's gallery grant");
        assertEquals(List.of(), Policies.recognizerUser(rec, java.util.Set.of("north", "south", "east"), recognizerGroupId()));
        KafkaUser gw = r.get("KafkaUser/gateway-east-dock-box").as(KafkaUser.class);
        assertEquals(List.of(), Policies.gatewayUser(gw, java.util.Set.of("north", "south", "east")));
        // The console hq manages north and south only: east's control topic stays out of its reach.
        KafkaUser hq = r.get("KafkaUser/console-hq").as(KafkaUser.class);
        assertFalse(KafkaAcls.allowsTopic(hq, "privface.east.control", AclOperation.WRITE));
        var peers = r.get("Kafka/privface").as(Kafka.class).getSpec().getKafka().getListeners().get(1).getNetworkPolicyPeers();
        assertEquals(List.of("100.64.10.0/28", "100.64.20.0/28"), peers.stream().map(p -> p.getIpBlock().getCidr()).toList(),
                "the external listener admits exactly the listed uplinks");
        assertEquals(List.of(), Fleets.unnamedObjects(List.copyOf(r.values()), out.resolve("fleet/preflight.sh")));
    }

    @Test
    void removingASiteIsOneListEntry(@TempDir Path dir) throws Exception {
        ObjectNode root = (ObjectNode) Manifests.YAML.readTree(k8s.resolve("sites.yaml").toFile());
        ((ArrayNode) root.get("sites")).remove(1);
        root.remove("consoles");
        String yaml = Manifests.YAML.writeValueAsString(root);
        SiteList list = SiteList.parse(yaml);
        assertEquals(List.of(), list.problems());
        Path out = copy(dir, yaml);
        Files.createDirectories(out.resolve("overlays/site-south/agent"));
        Files.writeString(out.resolve("overlays/site-south/agent/site-config.yaml"), "stale");
        assertEquals(List.of("overlays/site-south"), new FleetGenerator(list, topicsYml()).write(out));
        assertFalse(Files.exists(out.resolve("overlays/site-south")));
        assertFalse(Files.readString(out.resolve("fleet/kustomization.yaml")).contains("site-south"));
        assertFalse(Files.readString(out.resolve("fleet/recognizer-kafkauser.yaml")).contains("privface.south."));
    }

    /** What copying an overlay let through (issue 42): each is refused by name. */
    @Test
    void theOldWaysPitfallsAreRefused() throws IOException {
        Map<String, String> cases = new java.util.LinkedHashMap<>();
        // north copied as east, networks and cameras left as they were
        cases.put("""
                id: east
                cameraNetworks: [10.20.1.0/24]
                cameras: {lobby: "rtsp://10.20.1.11:554/stream1"}
                operatorKeys: ["console: MCowBQYDK2VwAyEABe6ZtogSLJeoAre+IVp/raLwntOTP/RHDRW120lsKmo="]
                """, "overlaps 10.20.1.0/24 of site north|is already camera north/lobby");
        cases.put("""
                id: east
                cameraNetworks: [192.0.2.0/24]
                cameras: {dock: "rtsp://cam.example.com/main"}
                operatorKeys: ["console: MCowBQYDK2VwAyEABe6ZtogSLJeoAre+IVp/raLwntOTP/RHDRW120lsKmo="]
                """, "documentation range 192.0.2.0/24|placeholder host");
        cases.put("""
                id: east
                cameraNetworks: [10.30.5.0/24]
                cameras: {dock: "rtsp://admin:secret@10.30.6.7/main"}
                """, "carries credentials|lies in none of the site's cameraNetworks|no operatorKeys");
        cases.put("""
                id: east
                cameraNetworks: [10.30.5.0/24]
                cameras: {dock: "rtsp://10.30.5.7/main"}
                epsilon: 30
                floor: {min: 1, max: 20}
                gateways: [box]
                operatorKeys: ["console: MCowBQYDK2VwAyEABe6ZtogSLJeoAre+IVp/raLwntOTP/RHDRW120lsKmo="]
                """, "outside the floor|no uplinks");
        cases.put("""
                id: north
                cameraNetworks: [10.30.5.0/24]
                cameras: {dock: "rtsp://10.30.5.7/main"}
                operatorKeys: ["console: MCowBQYDK2VwAyEABe6ZtogSLJeoAre+IVp/raLwntOTP/RHDRW120lsKmo="]
                """, "listed twice");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            String yaml = withSites(a -> {
                try {
                    a.add(Manifests.YAML.readTree(c.getKey()));
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            List<String> problems = SiteList.parse(yaml).problems();
            for (String want : c.getValue().split("\\|")) {
                assertTrue(problems.stream().anyMatch(p -> p.contains(want)), "'" + want + "' not among " + problems);
            }
        }
        String unknownSite = Files.readString(k8s.resolve("sites.yaml")).replace("sites: [north, south]", "sites: [north, west]");
        assertTrue(SiteList.parse(unknownSite).problems().stream().anyMatch(p -> p.contains("manages site west, which is not in the list")));
    }
}
