package org.privface.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.strimzi.api.kafka.model.user.KafkaUser;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every manifest under k8s/ binds to its model with unknown fields rejected, names are valid,
 * kustomizations refer only to what exists, the overlays render (where kubectl is installed), and the
 * checks reject what they should. The deployment's rules are in {@link KafkaManifestsTest} and
 * {@link WorkloadManifestsTest}; what they share is {@link ManifestsFixture}.
 */
class ManifestsTest extends ManifestsFixture {

    // ---------------------------------------------------------------- parsing and binding

    @Test
    void everyManifestBindsToItsModelWithNoUnknownField() {
        assertTrue(LOAD_ERRORS.isEmpty(), () -> String.join("\n", LOAD_ERRORS));
        assertTrue(DOCS.size() > 30, "expected the whole deployment, found " + DOCS.size() + " documents");
        Set<String> kinds = DOCS.stream().map(Manifests.Doc::kind).collect(Collectors.toCollection(TreeSet::new));
        for (String k : List.of("Kafka", "KafkaNodePool", "KafkaTopic", "KafkaUser", "Deployment", "DaemonSet",
                "Service", "ConfigMap", "PersistentVolumeClaim", "HorizontalPodAutoscaler", "NetworkPolicy",
                "ServiceAccount")) {
            assertTrue(kinds.contains(k), "no " + k + " among " + kinds);
        }
    }

    @Test
    void namesAndLabelsAreValidKubernetesNames() {
        List<String> bad = new ArrayList<>();
        for (Manifests.Doc d : DOCS) {
            String name = d.name();
            boolean label = d.kind().equals("Service") || d.kind().equals("Namespace");
            if (!(label ? DNS_LABEL : DNS_SUBDOMAIN).matcher(name).matches()) {
                bad.add(d.where() + ": name is not a DNS " + (label ? "label" : "subdomain"));
            }
            Map<String, String> labels = d.model().getMetadata().getLabels();
            if (labels != null) {
                labels.forEach((k, v) -> {
                    if (!LABEL_VALUE.matcher(v).matches()) {
                        bad.add(d.where() + ": label " + k + "=" + v + " is not a valid label value");
                    }
                });
            }
        }
        // Unique after the renames of the kustomization that lists each file (the site suffix).
        Map<String, List<String>> ids = new HashMap<>();
        for (Manifests.Doc d : RESOURCES) {
            String[] affix = AFFIXES.getOrDefault(d.file(), new String[] {"", ""});
            ids.computeIfAbsent(d.kind() + "/" + affix[0] + d.name() + affix[1], x -> new ArrayList<>()).add(d.where());
        }
        ids.forEach((id, where) -> {
            if (where.size() > 1) {
                bad.add(id + " defined more than once: " + where);
            }
        });
        assertTrue(bad.isEmpty(), () -> String.join("\n", bad));
    }

    @Test
    void kustomizationsReferOnlyToFilesThatExist() {
        assertTrue(KUSTOMIZATIONS.size() >= 6, "kustomizations found: " + KUSTOMIZATIONS);
        List<String> problems = new ArrayList<>();
        for (Path k : KUSTOMIZATIONS) {
            problems.addAll(Kustomizations.problems(k));
        }
        assertTrue(problems.isEmpty(), () -> String.join("\n", problems));
    }

    @Test
    void everyManifestIsPartOfAKustomization() {
        Set<Path> referenced = new LinkedHashSet<>();
        for (Path k : KUSTOMIZATIONS) {
            referenced.addAll(Kustomizations.referencedFiles(k));
        }
        List<Path> orphans = Manifests.yamlFiles(k8s).stream()
                .filter(f -> !Manifests.isKustomization(f) && !referenced.contains(f))
                .toList();
        assertTrue(orphans.isEmpty(), () -> "files no kustomization applies: " + orphans);
        // The fleet deploys the cloud side once and every site; a site overlay only its own resources.
        Set<String> fleet = Kustomizations.resourceIds(k8s.resolve("fleet"));
        for (String id : List.of("Kafka/privface", "Deployment/privface-recognizer", "KafkaUser/recognizer",
                "NetworkPolicy/default-deny")) {
            assertTrue(fleet.contains(id), "k8s/fleet does not deploy " + id);
        }
        for (Map.Entry<String, Path> o : OVERLAYS.entrySet()) {
            Set<String> ids = Kustomizations.resourceIds(o.getValue());
            for (String id : List.of("DaemonSet/privface-agent", "KafkaUser/agent-" + o.getKey())) {
                assertTrue(ids.contains(id), o.getValue() + " does not deploy " + id);
                assertTrue(fleet.contains(id), "k8s/fleet does not deploy site " + o.getKey() + "'s " + id);
            }
            assertFalse(ids.contains("Kafka/privface") || ids.contains("Deployment/privface-recognizer"),
                    o.getValue() + " deploys the cloud side (deleting the site would delete it)");
        }
    }

    // ---------------------------------------------------------------- rendered overlays

    /** kubectl kustomize of a folder, bound; the test is skipped without kubectl. */
    static List<Manifests.Doc> render(Path folder) throws Exception {
        Path kubectl = onPath("kubectl");
        Assumptions.assumeTrue(kubectl != null, "kubectl is not installed: the overlays were checked file by file only");
        Process p = new ProcessBuilder(kubectl.toString(), "kustomize", folder.toString()).redirectErrorStream(false).start();
        byte[] out = p.getInputStream().readAllBytes();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "kubectl kustomize timed out");
        assertEquals(0, p.exitValue(), () -> "kubectl kustomize " + folder + ": " + err);
        return Manifests.load(Path.of("rendered:" + folder.getFileName()), new String(out, StandardCharsets.UTF_8));
    }

    /** Each site overlay renders alone with nothing of the cloud side, so it can be applied and deleted alone. */
    @Test
    void eachSiteOverlayRendersOnlyItsOwnResources() throws Exception {
        List<String> v = new ArrayList<>();
        for (Map.Entry<String, Path> o : OVERLAYS.entrySet()) {
            for (Manifests.Doc d : render(o.getValue())) {
                var labels = d.model().getMetadata().getLabels();
                if (labels == null || !o.getKey().equals(labels.get(SITE_LABEL))) {
                    if (!(d.kind().equals("KafkaTopic") && d.name().startsWith("privface-" + o.getKey() + "-"))
                            && !(d.kind().equals("NetworkPolicy") && d.name().endsWith("-" + o.getKey()))) {
                        v.add("site " + o.getKey() + " renders " + d.kind() + " " + d.name() + ", which is not the site's");
                    }
                }
            }
        }
        assertTrue(v.isEmpty(), () -> String.join("\n", v));
    }

    @Test
    void renderedFleetBindsAndResolvesEveryReference() throws Exception {
        List<String> v = new ArrayList<>();
        Map<String, String> daemonSets = new HashMap<>();
        List<Manifests.Doc> docs = render(k8s.resolve("fleet"));
        Map<String, HasMetadata> byId = new HashMap<>();
        for (Manifests.Doc d : docs) {
            if (byId.put(d.kind() + "/" + d.name(), d.model()) != null) {
                v.add("fleet: " + d.kind() + " " + d.name() + " rendered twice");
            }
            if (!d.kind().equals("Namespace") && !"privface".equals(d.model().getMetadata().getNamespace())) {
                v.add(d.where() + ": namespace " + d.model().getMetadata().getNamespace());
            }
            PodSpec spec = podSpec(d.model());
            if (spec != null) {
                v.addAll(Policies.podSpec(d.where(), spec));
            }
            if (d.model() instanceof KafkaUser u) {
                v.addAll(userProblems(u));
            }
        }
        Deployment rec = (Deployment) byId.get("Deployment/privface-recognizer");
        rec.getSpec().getTemplate().getSpec().getVolumes().stream().filter(vol -> vol.getPersistentVolumeClaim() != null)
                .forEach(vol -> {
                    if (!byId.containsKey("PersistentVolumeClaim/" + vol.getPersistentVolumeClaim().getClaimName())) {
                        v.add("recognizer: claim " + vol.getPersistentVolumeClaim().getClaimName() + " is not rendered");
                    }
                });
        for (String site : OVERLAYS.keySet()) {
            String dsName = "privface-agent-" + site;
            DaemonSet ds = (DaemonSet) byId.get("DaemonSet/" + dsName);
            if (ds == null) {
                v.add("site " + site + ": no DaemonSet " + dsName + " in " + byId.keySet());
                continue;
            }
            daemonSets.put(site, dsName);
            PodSpec spec = ds.getSpec().getTemplate().getSpec();
            if (!"true".equals(spec.getNodeSelector().get(GATEWAY_LABEL)) || !site.equals(spec.getNodeSelector().get(SITE_LABEL))) {
                v.add(dsName + ": nodeSelector " + spec.getNodeSelector());
            }
            if (!site.equals(ds.getSpec().getSelector().getMatchLabels().get(SITE_LABEL))
                    || !site.equals(ds.getSpec().getTemplate().getMetadata().getLabels().get(SITE_LABEL))) {
                v.add(dsName + ": pods not labelled with their site (the camera policy selects on it)");
            }
            Container c = spec.getContainers().get(0);
            for (var ef : c.getEnvFrom()) {
                if (ef.getConfigMapRef() != null) {
                    ConfigMap cm = (ConfigMap) byId.get("ConfigMap/" + ef.getConfigMapRef().getName());
                    if (cm == null) {
                        v.add(dsName + ": ConfigMap " + ef.getConfigMapRef().getName() + " is not rendered");
                    } else if (!site.equals(cm.getData().get("AGENT_SITE_ID"))) {
                        v.add(dsName + ": reads ConfigMap of site " + cm.getData().get("AGENT_SITE_ID"));
                    }
                }
            }
            spec.getVolumes().stream().filter(vol -> vol.getConfigMap() != null && vol.getName().equals("operator-keys"))
                    .forEach(vol -> {
                        if (!("privface-operator-keys-" + site).equals(vol.getConfigMap().getName())
                                || !byId.containsKey("ConfigMap/" + vol.getConfigMap().getName())) {
                            v.add(dsName + ": operator keys from " + vol.getConfigMap().getName() + ", not the site's rendered ConfigMap");
                        }
                    });
            String scram = secretOf(c, "KAFKA_SASL_JAAS_CONFIG");
            if (!byId.containsKey("KafkaUser/" + scram) || !scram.equals("agent-" + site)) {
                v.add(dsName + ": SCRAM Secret " + scram + " is not the one Strimzi writes for KafkaUser agent-" + site);
            }
            if (c.getEnv().stream().map(EnvVar::getName).distinct().count() != c.getEnv().size()) {
                v.add(dsName + ": an environment variable is set twice");
            }
            if (!byId.containsKey("ServiceAccount/" + spec.getServiceAccountName())) {
                v.add(dsName + ": ServiceAccount " + spec.getServiceAccountName() + " is not rendered");
            }
            for (String kind : List.of("enrollment", "query", "control", "status", "gallery", "answer")) {
                if (!byId.containsKey("KafkaTopic/privface-" + site + "-" + kind)) {
                    v.add("site " + site + ": topic " + kind + " is not rendered");
                }
            }
            for (String gw : SITES.site(site).gateways()) {
                if (!byId.containsKey("KafkaUser/gateway-" + site + "-" + gw)) {
                    v.add("site " + site + ": off-cluster gateway " + gw + " has no principal of its own");
                }
            }
        }
        v.addAll(Fleets.unnamedObjects(docs, k8s.resolve("fleet/preflight.sh")));
        assertEquals(OVERLAYS.size(), Set.copyOf(daemonSets.values()).size(), "each site its own DaemonSet name");
        assertTrue(v.isEmpty(), () -> String.join("\n", v));
    }

    // ---------------------------------------------------------------- the checks catch what they should

    @Test
    void aManifestWithAnUnknownFieldIsRejected() {
        String deployment = """
                apiVersion: apps/v1
                kind: Deployment
                metadata:
                  name: x
                spec:
                  selector:
                    matchLabels: {app: x}
                  template:
                    metadata:
                      labels: {app: x}
                    spec:
                      containers:
                        - name: x
                          image: x:1
                          livenesProbe:
                            httpGet: {path: /health, port: 8080}
                """;
        IllegalArgumentException e = rejected(deployment);
        assertTrue(e.getMessage().contains("livenesProbe"), e.getMessage());

        String kafkaUser = """
                apiVersion: kafka.strimzi.io/v1beta2
                kind: KafkaUser
                metadata:
                  name: agent-x
                spec:
                  authentication: {type: scram-sha-512}
                  authorization:
                    type: simple
                    acls:
                      - resource: {type: topic, name: privface.x.query, patternType: literal}
                        operations: [Write]
                        hosts: ["*"]
                """;
        assertTrue(rejected(kafkaUser).getMessage().contains("hosts"));
        assertTrue(rejected(deployment.replace("  selector:", "  replicaz: 2\n  selector:")).getMessage().contains("replicaz"));
        String topic = """
                apiVersion: kafka.strimzi.io/v1beta2
                kind: KafkaTopic
                metadata:
                  name: t
                spec:
                  partition: 3
                """;
        assertTrue(rejected(topic).getMessage().contains("partition"));
        String kafka = """
                apiVersion: kafka.strimzi.io/v1beta2
                kind: Kafka
                metadata:
                  name: k
                spec:
                  kafka:
                    listeners:
                      - {name: tls, port: 9093, type: internl, tls: true}
                """;
        assertTrue(rejected(kafka).getMessage().contains("internl"), "an enum value Strimzi does not know");
    }

    @Test
    void aNumberOrBooleanWhereKubernetesWantsAStringIsRejected() {
        String configMap = """
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: c
                data:
                  AGENT_EPSILON: 8
                """;
        assertTrue(rejected(configMap).getMessage().contains("AGENT_EPSILON"), "unquoted number in ConfigMap data");
        String ds = """
                apiVersion: apps/v1
                kind: DaemonSet
                metadata:
                  name: d
                spec:
                  template:
                    spec:
                      nodeSelector:
                        privface.io/gateway: true
                """;
        assertTrue(rejected(ds).getMessage().contains("privface.io/gateway"), "unquoted boolean in a nodeSelector");
        assertTrue(rejected(ds.replace("privface.io/gateway: true", "x: \"y\"\n      hostNetwork: \"true\""))
                .getMessage().contains("hostNetwork"), "quoted boolean in a boolean field");
        String wrongVersion = """
                apiVersion: autoscaling/v1
                kind: HorizontalPodAutoscaler
                metadata:
                  name: h
                """;
        assertTrue(rejected(wrongVersion).getMessage().contains("autoscaling/v2"));
        assertTrue(rejected("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n").getMessage().contains("no model"));
        assertTrue(rejected("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n").getMessage().contains("name"));
    }

    @Test
    void theAclRulesCatchAnAgentThatReachesBeyondItsSite() throws IOException {
        String tooWide = """
                apiVersion: kafka.strimzi.io/v1beta2
                kind: KafkaUser
                metadata:
                  name: agent-north
                spec:
                  authentication: {type: scram-sha-512}
                  authorization:
                    type: simple
                    acls:
                      - resource: {type: topic, name: privface.north., patternType: prefix}
                        operations: [Write, Read]
                      - resource: {type: topic, name: privface.south.query, patternType: literal}
                        operations: [Write]
                """;
        KafkaUser u = Manifests.load(Path.of("inline"), tooWide).get(0).as(KafkaUser.class);
        List<String> v = Policies.agentUser(u, Set.of("north", "south"));
        assertTrue(v.stream().anyMatch(s -> s.contains("prefix")), String.join("\n", v));
        assertTrue(v.stream().anyMatch(s -> s.contains("privface.south.query")), String.join("\n", v));

        KafkaUser r = recognizer("""
                      - resource: {type: topic, name: privface., patternType: prefix}
                        operations: [All]
                      - resource: {type: group, name: privface-recognizer}
                        operations: [Read]
                """);
        List<String> rv = Policies.recognizerUser(r, Set.of("north"), "privface-recognizer");
        assertTrue(rv.stream().anyMatch(s -> s.contains("WRITE privface.north.enrollment")), String.join("\n", rv));

        // Galleries: written per site, literally; a recognizer that cannot, or that writes answers, is caught.
        KafkaUser ng = recognizer("""
                      - resource: {type: topic, name: privface., patternType: prefix}
                        operations: [Read, Describe]
                      - resource: {type: group, name: privface-recognizer}
                        operations: [Read]
                      - resource: {type: topic, name: privface.results, patternType: literal}
                        operations: [Write]
                      - resource: {type: topic, name: privface.dead-letter, patternType: literal}
                        operations: [Write]
                      - resource: {type: topic, name: privface.north.gallery, patternType: literal}
                        operations: [Write]
                      - resource: {type: topic, name: privface.north.answer, patternType: literal}
                        operations: [Write]
                """);
        List<String> gv = Policies.recognizerUser(ng, Set.of("north", "south"), "privface-recognizer");
        assertTrue(gv.stream().anyMatch(s -> s.contains("cannot write privface.south.gallery")), String.join("\n", gv));
        assertTrue(gv.stream().noneMatch(s -> s.contains("privface.north.gallery")), String.join("\n", gv));
        assertTrue(gv.stream().anyMatch(s -> s.contains("WRITE privface.north.answer")), String.join("\n", gv));
    }

    /** A recognizer KafkaUser with the given ACL list items (YAML, indented as under {@code acls:}). */
    private static KafkaUser recognizer(String acls) throws IOException {
        String yaml = """
                apiVersion: kafka.strimzi.io/v1beta2
                kind: KafkaUser
                metadata:
                  name: recognizer
                spec:
                  authentication: {type: scram-sha-512}
                  authorization:
                    type: simple
                    acls:
                """ + acls;
        return Manifests.load(Path.of("inline"), yaml).get(0).as(KafkaUser.class);
    }

    @Test
    void aKustomizationThatNamesAMissingFileIsRejected(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("present.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n");
        Files.writeString(dir.resolve("kustomization.yaml"), """
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                resources:
                  - present.yaml
                  - missing.yaml
                patches:
                  - path: patch.yaml
                """);
        Files.writeString(dir.resolve("patch.yaml"), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: absent\n");
        List<String> p = Kustomizations.problems(dir.resolve("kustomization.yaml"));
        assertTrue(p.stream().anyMatch(s -> s.contains("missing.yaml")), String.join("\n", p));
        assertTrue(p.stream().anyMatch(s -> s.contains("Deployment/absent")), String.join("\n", p));
    }
}
