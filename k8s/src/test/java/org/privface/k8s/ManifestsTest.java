package org.privface.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.kafka.KafkaAuthorizationSimple;
import io.strimzi.api.kafka.model.kafka.listener.GenericKafkaListener;
import io.strimzi.api.kafka.model.kafka.listener.KafkaListenerAuthenticationScramSha512;
import io.strimzi.api.kafka.model.kafka.listener.KafkaListenerType;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.nodepool.ProcessRoles;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.strimzi.api.kafka.model.user.KafkaUser;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Validates every manifest under k8s/ without a cluster: each document binds to the Strimzi 0.47
 * or fabric8 model of its kind with unknown fields rejected, each kustomization refers only to
 * what exists, and the deployment's rules hold (ACLs per principal, resources and probes, gateway
 * scheduling, topic settings equal to broker-config/topics.yml, ports and group id equal to the
 * services' own configuration, default-deny network policies). Where kubectl is installed, the
 * overlays are also rendered by its built-in kustomize and the output checked again.
 */
class ManifestsTest {
    private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
    private static final Pattern LABEL_VALUE = Pattern.compile("(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?");
    private static final String GATEWAY_LABEL = "privface.io/gateway";
    private static final String SITE_LABEL = "privface.io/site";

    private static Path k8s;
    private static Path repo;
    /** Every document of every manifest file (kustomizations aside), bound. */
    private static final List<Manifests.Doc> DOCS = new ArrayList<>();
    /** Documents that are whole resources (not patches). */
    private static final List<Manifests.Doc> RESOURCES = new ArrayList<>();
    private static final List<String> LOAD_ERRORS = new ArrayList<>();
    private static final List<Path> KUSTOMIZATIONS = new ArrayList<>();
    /** overlay folder per site id. */
    private static final Map<String, Path> OVERLAYS = new LinkedHashMap<>();
    /** namePrefix and nameSuffix of the kustomization that lists a file, which rename it. */
    private static final Map<Path, String[]> AFFIXES = new HashMap<>();

    @BeforeAll
    static void load() throws IOException {
        k8s = Manifests.root();
        repo = k8s.getParent();
        Set<Path> patches = new LinkedHashSet<>();
        for (Path f : Manifests.yamlFiles(k8s)) {
            if (Manifests.isKustomization(f)) {
                KUSTOMIZATIONS.add(f);
                patches.addAll(Kustomizations.patchFiles(f));
                JsonNode k = Kustomizations.read(f);
                String[] affix = {k.path("namePrefix").asText(""), k.path("nameSuffix").asText("")};
                Kustomizations.referencedFiles(f).forEach(r -> AFFIXES.put(r, affix));
            }
        }
        for (Path f : Manifests.yamlFiles(k8s)) {
            if (Manifests.isKustomization(f)) {
                continue;
            }
            try {
                List<Manifests.Doc> docs = Manifests.load(f);
                if (docs.isEmpty()) {
                    LOAD_ERRORS.add(f + ": no document");
                }
                DOCS.addAll(docs);
                if (!patches.contains(f)) {
                    RESOURCES.addAll(docs);
                }
            } catch (IllegalArgumentException | IOException e) {
                LOAD_ERRORS.add(e.getMessage());
            }
        }
        try (var s = Files.list(k8s.resolve("overlays"))) {
            s.filter(Files::isDirectory).sorted().forEach(d -> {
                String n = d.getFileName().toString();
                if (n.startsWith("site-")) {
                    OVERLAYS.put(n.substring("site-".length()), d);
                }
            });
        }
    }

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
        for (Map.Entry<String, Path> o : OVERLAYS.entrySet()) {
            Set<String> ids = Kustomizations.resourceIds(o.getValue());
            for (String id : List.of("Kafka/privface", "Deployment/privface-recognizer", "DaemonSet/privface-agent",
                    "KafkaUser/agent-" + o.getKey(), "KafkaUser/recognizer", "NetworkPolicy/default-deny")) {
                assertTrue(ids.contains(id), o.getValue() + " does not deploy " + id);
            }
        }
    }

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
    void recognizerReadsEverySiteButWritesOnlyResultsAndDeadLetters() throws IOException {
        List<KafkaUser> r = users().stream().filter(u -> u.getMetadata().getName().equals(Policies.RECOGNIZER)).toList();
        assertEquals(1, r.size(), "one recognizer principal");
        List<String> v = Policies.recognizerUser(r.get(0), OVERLAYS.keySet(), recognizerGroupId());
        assertTrue(v.isEmpty(), () -> String.join("\n", v));
    }

    @Test
    void operatorUsersWriteOnlyTheirSitesControlTopic() {
        List<String> v = new ArrayList<>();
        Set<String> seen = new TreeSet<>();
        for (KafkaUser u : users()) {
            String n = u.getMetadata().getName();
            if (Policies.OPERATOR.matcher(n).matches()) {
                seen.add(n);
                v.addAll(Policies.operatorUser(u, OVERLAYS.keySet()));
            } else if (!n.equals(Policies.RECOGNIZER) && !Policies.AGENT.matcher(n).matches()) {
                v.add(n + ": a principal no rule covers (agent-<site>, operator-<site>, recognizer)");
            }
        }
        for (String site : OVERLAYS.keySet()) {
            if (!seen.contains("operator-" + site)) {
                v.add("site " + site + " has no operator principal for its control topic");
            }
        }
        assertTrue(v.isEmpty(), () -> String.join("\n", v));
    }

    // ---------------------------------------------------------------- workloads

    @Test
    void everyContainerHasResourcesProbesAndARestrictedSecurityContext() {
        List<String> v = new ArrayList<>();
        int workloads = 0;
        for (Manifests.Doc d : RESOURCES) {
            PodSpec spec = podSpec(d.model());
            if (spec != null) {
                workloads++;
                v.addAll(Policies.podSpec(d.where(), spec));
            }
        }
        assertTrue(workloads >= 2, "workloads found: " + workloads);
        for (KafkaNodePool p : of(KafkaNodePool.class)) {
            var res = p.getSpec().getResources();
            if (res == null || res.getRequests().get("memory") == null || res.getLimits().get("memory") == null
                    || res.getRequests().get("cpu") == null || res.getLimits().get("cpu") == null) {
                v.add("KafkaNodePool " + p.getMetadata().getName() + ": needs cpu and memory requests and limits");
            }
        }
        for (Kafka k : of(Kafka.class)) {
            var eo = k.getSpec().getEntityOperator();
            if (eo == null || eo.getTopicOperator() == null || eo.getUserOperator() == null
                    || eo.getTopicOperator().getResources() == null || eo.getUserOperator().getResources() == null) {
                v.add("Kafka " + k.getMetadata().getName() + ": topic and user operators need resources");
            }
        }
        assertTrue(v.isEmpty(), () -> String.join("\n", v));
    }

    @Test
    void agentRunsOnGatewaysOnlyWithAPersistentDataDirectory() {
        List<DaemonSet> ds = of(DaemonSet.class).stream().filter(d -> d.getSpec() != null && d.getSpec().getSelector() != null).toList();
        assertEquals(1, ds.size(), "one agent DaemonSet template in base");
        DaemonSet agent = ds.get(0);
        PodSpec spec = agent.getSpec().getTemplate().getSpec();
        assertEquals("true", spec.getNodeSelector().get(GATEWAY_LABEL), "nodeSelector " + GATEWAY_LABEL + "=\"true\"");
        assertTrue(spec.getTolerations().stream().anyMatch(t -> GATEWAY_LABEL.equals(t.getKey())
                && "NoSchedule".equals(t.getEffect())), "tolerates the gateway taint");
        Container c = spec.getContainers().get(0);
        String dataDir = env(c, "AGENT_DATA_DIR");
        assertEquals("/var/lib/privface-agent", dataDir);
        var mount = c.getVolumeMounts().stream().filter(m -> m.getMountPath().equals(dataDir)).findFirst().orElseThrow(
                () -> new AssertionError("nothing mounted at the data dir"));
        var volume = spec.getVolumes().stream().filter(vol -> vol.getName().equals(mount.getName())).findFirst().orElseThrow();
        assertTrue(volume.getHostPath() != null || volume.getPersistentVolumeClaim() != null,
                "the spool and audit log need a hostPath or PVC, not " + volume);
        assertEquals("gateway", env(c, "MICRONAUT_ENVIRONMENTS"));
        assertTrue(c.getEnvFrom().stream().anyMatch(e -> e.getConfigMapRef() != null), "settings come from the site ConfigMap");

        // Each overlay pins its agents to its own site's gateways and its own Secrets.
        for (Map.Entry<String, Path> o : OVERLAYS.entrySet()) {
            String site = o.getKey();
            List<DaemonSet> patches = DOCS.stream().filter(d -> d.file().startsWith(o.getValue()) && d.kind().equals("DaemonSet"))
                    .map(d -> d.as(DaemonSet.class)).toList();
            assertEquals(1, patches.size(), o.getValue() + ": one DaemonSet patch");
            PodSpec p = patches.get(0).getSpec().getTemplate().getSpec();
            assertEquals(site, p.getNodeSelector().get(SITE_LABEL), o.getValue() + ": nodeSelector " + SITE_LABEL);
            Container pc = p.getContainers().get(0);
            assertEquals("agent-" + site, secretOf(pc, "KAFKA_SASL_JAAS_CONFIG"), o.getValue() + ": SCRAM Secret");
            assertEquals("privface-agent-control-" + site, secretOf(pc, "AGENT_CONTROL_TOKEN"), o.getValue() + ": control token Secret");
        }
    }

    /**
     * Control records are signed: the console reads its private key from the console Secret, and
     * each site's gateways read the public keys they obey from their own site's ConfigMap.
     */
    @Test
    void theConsoleSignsWithAMountedKeyAndEachSitesGatewaysReadTheirOwnOperatorKeys() {
        Deployment rec = of(Deployment.class).stream().filter(d -> d.getMetadata().getName().equals("privface-recognizer"))
                .findFirst().orElseThrow();
        PodSpec rs = rec.getSpec().getTemplate().getSpec();
        String keyFile = env(rs.getContainers().get(0), "RECOGNIZER_CONSOLE_SIGNING_KEY_FILE");
        assertEquals("privface-console", mountedFrom(rs, keyFile, true), "the signing key comes from the console Secret");

        DaemonSet agent = of(DaemonSet.class).stream().filter(d -> d.getSpec() != null && d.getSpec().getSelector() != null)
                .findFirst().orElseThrow();
        PodSpec as = agent.getSpec().getTemplate().getSpec();
        String keysFile = env(as.getContainers().get(0), "AGENT_CONTROL_KEYS_FILE");
        String volume = mountedFrom(as, keysFile, false);
        for (Map.Entry<String, Path> o : OVERLAYS.entrySet()) {
            PodSpec p = DOCS.stream().filter(d -> d.file().startsWith(o.getValue()) && d.kind().equals("DaemonSet"))
                    .map(d -> d.as(DaemonSet.class)).findFirst().orElseThrow().getSpec().getTemplate().getSpec();
            String cm = p.getVolumes() == null ? null : p.getVolumes().stream().filter(v -> v.getName().equals(volume)
                    && v.getConfigMap() != null).map(v -> v.getConfigMap().getName()).findFirst().orElse(null);
            assertEquals("privface-operator-keys-" + o.getKey(), cm, o.getValue() + ": the site's own operator keys");
        }
    }

    /** The Secret (or, for {@code secret == false}, the volume whose ConfigMap) holding the file at {@code path}. */
    private static String mountedFrom(PodSpec spec, String path, boolean secret) {
        Container c = spec.getContainers().get(0);
        var mount = c.getVolumeMounts().stream().filter(m -> path.startsWith(m.getMountPath() + "/")).findFirst()
                .orElseThrow(() -> new AssertionError(path + " is not under any mount"));
        var vol = spec.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
        String file = path.substring(mount.getMountPath().length() + 1);
        if (secret) {
            assertTrue(vol.getSecret() != null && vol.getSecret().getItems().stream().anyMatch(i -> i.getPath().equals(file)),
                    path + " is not an item of a Secret volume");
            return vol.getSecret().getSecretName();
        }
        assertTrue(vol.getConfigMap() != null && vol.getConfigMap().getItems().stream().anyMatch(i -> i.getPath().equals(file)),
                path + " is not an item of a ConfigMap volume");
        return vol.getName();
    }

    @Test
    void siteConfigMapsHoldSettingsTheAgentAcceptsAtStart() {
        List<String> v = new ArrayList<>();
        Pattern budget = Pattern.compile("once|max-k:k=[1-9][0-9]*,every=[0-9]+|every-n:n=[1-9][0-9]*,epsilon=[0-9.]+");
        Map<String, Set<String>> modes = Map.of("peep", Set.of("vector", "l1-clip"), "rdp", Set.of("strict"),
                "gaussian", Set.of("gdp"));
        for (Map.Entry<String, Path> o : OVERLAYS.entrySet()) {
            String site = o.getKey();
            List<ConfigMap> cms = RESOURCES.stream().filter(d -> d.file().startsWith(o.getValue()) && d.kind().equals("ConfigMap"))
                    .map(d -> d.as(ConfigMap.class)).toList();
            if (cms.size() != 1) {
                v.add(o.getValue() + ": expected one site ConfigMap, found " + cms.size());
                continue;
            }
            Map<String, String> data = cms.get(0).getData();
            String at = o.getValue() + " ConfigMap: ";
            data.keySet().stream().filter(key -> !key.matches("AGENT_[A-Z0-9_]+")).forEach(key -> v.add(at + key + " is not an AGENT_ setting"));
            if (!site.equals(data.get("AGENT_SITE_ID"))) {
                v.add(at + "AGENT_SITE_ID " + data.get("AGENT_SITE_ID") + " is not the overlay's site " + site);
            }
            String mech = data.get("AGENT_MECHANISM");
            if (!modes.containsKey(mech)) {
                v.add(at + "mechanism " + mech);
            } else if (!modes.get(mech).contains(data.get("AGENT_SENSITIVITY_MODE"))) {
                v.add(at + "mode " + data.get("AGENT_SENSITIVITY_MODE") + " is not a published mode of " + mech);
            }
            if (data.get("AGENT_BUDGET") == null || !budget.matcher(data.get("AGENT_BUDGET")).matches()) {
                v.add(at + "budget " + data.get("AGENT_BUDGET"));
            }
            try {
                double eps = Double.parseDouble(data.get("AGENT_EPSILON"));
                double min = Double.parseDouble(data.get("AGENT_FLOOR_EPSILON_MIN"));
                double max = Double.parseDouble(data.get("AGENT_FLOOR_EPSILON_MAX"));
                if (!(0 < min && min <= eps && eps <= max)) {
                    v.add(at + "epsilon " + eps + " outside its floor [" + min + ", " + max + "]: the agent refuses to start");
                }
            } catch (NullPointerException | NumberFormatException e) {
                v.add(at + "epsilon and floor must be numbers: " + e.getMessage());
            }
            if (data.keySet().stream().noneMatch(key -> key.matches("AGENT_CAMERAS_[A-Z0-9]+_URL"))) {
                v.add(at + "no camera");
            }
        }
        assertTrue(v.isEmpty(), () -> String.join("\n", v));
    }

    @Test
    void portsAndGroupIdMatchTheServicesOwnConfiguration() throws IOException {
        Deployment rec = of(Deployment.class).stream().filter(d -> d.getMetadata().getName().equals("privface-recognizer"))
                .findFirst().orElseThrow();
        Container c = rec.getSpec().getTemplate().getSpec().getContainers().get(0);
        String recognizerYml = Files.readString(repo.resolve("recognizer/src/main/resources/application.yml"));
        int port = c.getPorts().get(0).getContainerPort();
        assertTrue(recognizerYml.contains("${RECOGNIZER_HTTP_PORT:"), "the recognizer reads RECOGNIZER_HTTP_PORT");
        assertEquals(String.valueOf(port), env(c, "RECOGNIZER_HTTP_PORT"), "container port = RECOGNIZER_HTTP_PORT");
        assertEquals("0.0.0.0", env(c, "MICRONAUT_SERVER_HOST"), "application.yml binds loopback; the pod must not");
        assertEquals(recognizerGroupId(), env(c, "RECOGNIZER_GROUP_ID"));
        assertTrue(env(c, "KAFKA_BOOTSTRAP_SERVERS").startsWith("privface-kafka-bootstrap:9093"));
        Service svc = of(Service.class).stream().filter(s -> s.getMetadata().getName().equals("privface-recognizer")).findFirst().orElseThrow();
        var target = svc.getSpec().getPorts().get(0).getTargetPort();
        assertTrue(target.getStrVal() != null ? target.getStrVal().equals(c.getPorts().get(0).getName()) : target.getIntVal() == port,
                "the Service reaches the container's port");
        assertEquals(rec.getSpec().getSelector().getMatchLabels(), svc.getSpec().getSelector());
        HorizontalPodAutoscaler hpa = of(HorizontalPodAutoscaler.class).get(0);
        assertEquals("Deployment", hpa.getSpec().getScaleTargetRef().getKind());
        assertEquals("privface-recognizer", hpa.getSpec().getScaleTargetRef().getName());
        assertTrue(hpa.getSpec().getMetrics().stream().anyMatch(m -> m.getResource() != null && "cpu".equals(m.getResource().getName())));
        assertTrue(rec.getSpec().getTemplate().getSpec().getVolumes().stream().anyMatch(vol -> vol.getPersistentVolumeClaim() != null),
                "models on a PVC");
        assertEquals(env(c, "RECOGNIZER_MODEL_DIR"), c.getVolumeMounts().stream()
                .filter(m -> m.getName().equals("models")).findFirst().orElseThrow().getMountPath());

        DaemonSet agent = of(DaemonSet.class).stream().filter(d -> d.getSpec().getSelector() != null).findFirst().orElseThrow();
        Container a = agent.getSpec().getTemplate().getSpec().getContainers().get(0);
        String agentYml = Files.readString(repo.resolve("agent/src/main/resources/application.yml"));
        assertTrue(agentYml.contains("${AGENT_HTTP_PORT:"), "the agent reads AGENT_HTTP_PORT");
        assertEquals(String.valueOf(a.getPorts().get(0).getContainerPort()), env(a, "AGENT_HTTP_PORT"));
        assertTrue(Files.readString(repo.resolve("agent/src/main/resources/application-gateway.yml")).contains("0.0.0.0"),
                "the gateway environment listens beyond loopback");
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

    // ---------------------------------------------------------------- network policies

    @Test
    void networkPoliciesDenyByDefaultAndOpenOnlyWhatEachPartNeeds() {
        List<NetworkPolicy> nps = of(NetworkPolicy.class);
        NetworkPolicy deny = nps.stream().filter(n -> n.getMetadata().getName().equals("default-deny")).findFirst().orElseThrow();
        assertTrue(deny.getSpec().getPodSelector().getMatchLabels().isEmpty() && deny.getSpec().getPodSelector().getMatchExpressions().isEmpty(),
                "default-deny selects every pod");
        assertEquals(Set.of("Ingress", "Egress"), Set.copyOf(deny.getSpec().getPolicyTypes()));
        assertTrue(deny.getSpec().getIngress().isEmpty() && deny.getSpec().getEgress().isEmpty(), "default-deny allows nothing");

        List<String> v = new ArrayList<>();
        for (NetworkPolicy np : nps) {
            String n = np.getMetadata().getName();
            Map<String, String> sel = np.getSpec().getPodSelector().getMatchLabels();
            boolean all = sel.isEmpty() && np.getSpec().getPodSelector().getMatchExpressions().isEmpty();
            if (all && !n.equals("default-deny") && !n.equals("allow-dns")) {
                v.add(n + ": only default-deny and allow-dns may select every pod");
            }
            if (n.equals("allow-dns")) {
                for (NetworkPolicyEgressRule r : np.getSpec().getEgress()) {
                    if (r.getPorts().stream().anyMatch(p -> p.getPort() == null || p.getPort().getIntVal() == null || p.getPort().getIntVal() != 53)) {
                        v.add(n + ": opens more than port 53");
                    }
                }
                if (!np.getSpec().getIngress().isEmpty()) {
                    v.add(n + ": opens ingress");
                }
            }
            if ("privface-agent".equals(sel.get("app.kubernetes.io/name"))) {
                for (NetworkPolicyEgressRule r : np.getSpec().getEgress()) {
                    for (NetworkPolicyPeer peer : r.getTo()) {
                        boolean kafka = peer.getPodSelector() != null && "privface".equals(peer.getPodSelector().getMatchLabels().get("strimzi.io/cluster"))
                                && peer.getNamespaceSelector() == null;
                        boolean cameras = peer.getIpBlock() != null && sel.get(SITE_LABEL) != null && !peer.getIpBlock().getCidr().equals("0.0.0.0/0");
                        if (!kafka && !cameras) {
                            v.add(n + ": agent egress to " + peer + " is neither Kafka nor the site's cameras");
                        }
                    }
                    if (r.getTo().isEmpty()) {
                        v.add(n + ": agent egress to anywhere");
                    }
                }
                for (var r : np.getSpec().getIngress()) {
                    if (r.getFrom().isEmpty() || r.getPorts().isEmpty()) {
                        v.add(n + ": agent ingress from anywhere or on any port");
                    }
                }
            }
            if ("privface-recognizer".equals(sel.get("app.kubernetes.io/name"))) {
                for (var r : np.getSpec().getIngress()) {
                    if (r.getFrom().isEmpty() || r.getPorts().size() != 1 || r.getPorts().get(0).getPort().getIntVal() == null
                            || r.getPorts().get(0).getPort().getIntVal() != 8082) {
                        v.add(n + ": recognizer ingress must be its HTTP port (8082) from named sources only");
                    }
                    for (NetworkPolicyPeer peer : r.getFrom()) {
                        if (peer.getNamespaceSelector() == null || peer.getIpBlock() != null) {
                            v.add(n + ": recognizer ingress from " + peer + " is not an operator or ingress namespace");
                        }
                    }
                }
                for (NetworkPolicyEgressRule r : np.getSpec().getEgress()) {
                    for (NetworkPolicyPeer peer : r.getTo()) {
                        if (peer.getPodSelector() == null || !"privface".equals(peer.getPodSelector().getMatchLabels().get("strimzi.io/cluster"))) {
                            v.add(n + ": recognizer egress to " + peer + " is not Kafka");
                        }
                    }
                }
            }
        }
        for (Map.Entry<String, Path> o : OVERLAYS.entrySet()) {
            List<NetworkPolicy> cams = RESOURCES.stream().filter(d -> d.file().startsWith(o.getValue()) && d.kind().equals("NetworkPolicy"))
                    .map(d -> d.as(NetworkPolicy.class)).toList();
            if (cams.stream().noneMatch(np -> o.getKey().equals(np.getSpec().getPodSelector().getMatchLabels().get(SITE_LABEL))
                    && np.getSpec().getEgress().stream().anyMatch(r -> r.getTo().stream().anyMatch(p -> p.getIpBlock() != null)))) {
                v.add(o.getValue() + ": no camera egress policy for the site's agents");
            }
        }
        assertTrue(v.isEmpty(), () -> String.join("\n", v));
    }

    // ---------------------------------------------------------------- rendered overlays

    @Test
    void renderedOverlaysBindAndResolveEveryReference() throws Exception {
        Path kubectl = onPath("kubectl");
        Assumptions.assumeTrue(kubectl != null, "kubectl is not installed: the overlays were checked file by file only");
        List<String> v = new ArrayList<>();
        Map<String, String> daemonSets = new HashMap<>();
        for (Map.Entry<String, Path> o : OVERLAYS.entrySet()) {
            String site = o.getKey();
            Process p = new ProcessBuilder(kubectl.toString(), "kustomize", o.getValue().toString()).redirectErrorStream(false).start();
            byte[] out = p.getInputStream().readAllBytes();
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "kubectl kustomize timed out");
            assertEquals(0, p.exitValue(), () -> "kubectl kustomize " + o.getValue() + ": " + err);
            List<Manifests.Doc> docs = Manifests.load(Path.of("rendered:site-" + site), new String(out, StandardCharsets.UTF_8));
            Map<String, HasMetadata> byId = new HashMap<>();
            for (Manifests.Doc d : docs) {
                byId.put(d.kind() + "/" + d.name(), d.model());
                if (!d.kind().equals("Namespace") && !"privface".equals(d.model().getMetadata().getNamespace())) {
                    v.add(d.where() + ": namespace " + d.model().getMetadata().getNamespace());
                }
                PodSpec spec = podSpec(d.model());
                if (spec != null) {
                    v.addAll(Policies.podSpec(d.where(), spec));
                }
            }
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
            Deployment rec = (Deployment) byId.get("Deployment/privface-recognizer");
            rec.getSpec().getTemplate().getSpec().getVolumes().stream().filter(vol -> vol.getPersistentVolumeClaim() != null)
                    .forEach(vol -> {
                        if (!byId.containsKey("PersistentVolumeClaim/" + vol.getPersistentVolumeClaim().getClaimName())) {
                            v.add("recognizer: claim " + vol.getPersistentVolumeClaim().getClaimName() + " is not rendered");
                        }
                    });
            for (String kind : List.of("enrollment", "query", "control", "status")) {
                if (!byId.containsKey("KafkaTopic/privface-" + site + "-" + kind)) {
                    v.add("site " + site + ": topic " + kind + " is not rendered");
                }
            }
            for (HasMetadata m : byId.values()) {
                if (m instanceof KafkaUser u) {
                    String n = u.getMetadata().getName();
                    if (Policies.AGENT.matcher(n).matches()) {
                        v.addAll(Policies.agentUser(u, OVERLAYS.keySet()));
                    } else if (Policies.OPERATOR.matcher(n).matches()) {
                        v.addAll(Policies.operatorUser(u, OVERLAYS.keySet()));
                    } else {
                        v.addAll(Policies.recognizerUser(u, OVERLAYS.keySet(), recognizerGroupId()));
                    }
                }
            }
        }
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

        String recognizerWrites = """
                apiVersion: kafka.strimzi.io/v1beta2
                kind: KafkaUser
                metadata:
                  name: recognizer
                spec:
                  authentication: {type: scram-sha-512}
                  authorization:
                    type: simple
                    acls:
                      - resource: {type: topic, name: privface., patternType: prefix}
                        operations: [All]
                      - resource: {type: group, name: privface-recognizer}
                        operations: [Read]
                """;
        KafkaUser r = Manifests.load(Path.of("inline"), recognizerWrites).get(0).as(KafkaUser.class);
        List<String> rv = Policies.recognizerUser(r, Set.of("north"), "privface-recognizer");
        assertTrue(rv.stream().anyMatch(s -> s.contains("WRITE privface.north.enrollment")), String.join("\n", rv));
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

    // ---------------------------------------------------------------- helpers

    private static IllegalArgumentException rejected(String yaml) {
        try {
            Manifests.load(Path.of("inline"), yaml);
        } catch (IllegalArgumentException e) {
            return e;
        } catch (IOException e) {
            return new IllegalArgumentException(e.getMessage(), e);
        }
        return fail("accepted:\n" + yaml);
    }

    private static List<KafkaUser> users() {
        return of(KafkaUser.class);
    }

    private static <T> List<T> of(Class<T> type) {
        return RESOURCES.stream().filter(d -> type.isInstance(d.model())).map(d -> type.cast(d.model())).toList();
    }

    private static Path fileOf(HasMetadata m) {
        return RESOURCES.stream().filter(d -> d.model() == m).findFirst().orElseThrow().file();
    }

    private static PodSpec podSpec(HasMetadata m) {
        if (m instanceof Deployment d && d.getSpec() != null && d.getSpec().getTemplate() != null) {
            return d.getSpec().getTemplate().getSpec();
        }
        if (m instanceof DaemonSet d && d.getSpec() != null && d.getSpec().getTemplate() != null) {
            return d.getSpec().getTemplate().getSpec();
        }
        if (m instanceof StatefulSet s && s.getSpec() != null && s.getSpec().getTemplate() != null) {
            return s.getSpec().getTemplate().getSpec();
        }
        return null;
    }

    private static String env(Container c, String name) {
        return c.getEnv().stream().filter(e -> e.getName().equals(name)).map(EnvVar::getValue).findFirst()
                .orElseThrow(() -> new AssertionError(c.getName() + ": no " + name));
    }

    private static String secretOf(Container c, String name) {
        return c.getEnv().stream().filter(e -> e.getName().equals(name) && e.getValueFrom() != null
                        && e.getValueFrom().getSecretKeyRef() != null)
                .map(e -> e.getValueFrom().getSecretKeyRef().getName()).findFirst()
                .orElseThrow(() -> new AssertionError(c.getName() + ": " + name + " is not from a Secret"));
    }

    /** recognizer.group-id from the recognizer's application.yml. */
    private static String recognizerGroupId() throws IOException {
        JsonNode yml = Manifests.YAML.readTree(repo.resolve("recognizer/src/main/resources/application.yml").toFile());
        String id = yml.path("recognizer").path("group-id").asText();
        assertFalse(id.isBlank(), "recognizer.group-id in application.yml");
        return id;
    }

    private static Path onPath(String exe) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator)) {
            Path p = Path.of(dir, exe);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }
}
