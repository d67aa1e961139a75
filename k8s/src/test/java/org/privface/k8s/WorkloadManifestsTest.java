package org.privface.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import org.junit.jupiter.api.Test;

/**
 * The workloads: resources, probes and security contexts, gateway scheduling, mounted keys, site
 * settings, ports and group ids equal to the services' own configuration, default-deny network policies.
 */
class WorkloadManifestsTest extends ManifestsFixture {

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
        assertEquals("privface-operator-keys", as.getVolumes().stream().filter(v -> v.getName().equals(volume))
                .findFirst().orElseThrow().getConfigMap().getName(), "the template's operator keys ConfigMap");
        // Each overlay's agent kustomization holds that ConfigMap with keys, renamed with the site's suffix
        // (kustomize renames the volume's reference with it; the rendered test checks the result).
        for (Map.Entry<String, Path> o : OVERLAYS.entrySet()) {
            Manifests.Doc keys = RESOURCES.stream().filter(d -> d.file().startsWith(o.getValue()) && d.kind().equals("ConfigMap")
                    && d.name().equals("privface-operator-keys")).findFirst()
                    .orElseThrow(() -> new AssertionError(o.getValue() + ": no operator keys ConfigMap"));
            assertEquals("-" + o.getKey(), AFFIXES.get(keys.file())[1], o.getValue() + ": the site's own operator keys");
            String lines = keys.as(ConfigMap.class).getData().get("operator-keys");
            assertTrue(lines != null && lines.lines().anyMatch(l -> l.matches("[A-Za-z0-9._-]+: [A-Za-z0-9+/=]{20,}")),
                    o.getValue() + ": operator keys hold no 'key-id: base64' line: " + lines);
        }
    }

    /**
     * Every site runs the deep stack the frontier measured (YuNet, dlib, EMBEDDING sign-cap at ε 20 per
     * face, one release per appearance), and its gateways read YuNet from the shared ConfigMap at the
     * path they name, under the folder the image's FACE_MODELS points to; the pod template repeats the
     * hash pinned in the agent's code, which the agent checks at start-up.
     */
    @Test
    void everySiteDeploysTheDeepStackWithAMountedPinnedYunet() throws IOException {
        DaemonSet agent = of(DaemonSet.class).stream().filter(d -> d.getSpec() != null && d.getSpec().getSelector() != null)
                .findFirst().orElseThrow();
        PodSpec as = agent.getSpec().getTemplate().getSpec();
        Container c = as.getContainers().get(0);
        String model = env(c, "AGENT_YUNET_MODEL");
        String faceModels = matchIn(repo.resolve("agent/pom.xml"), "<FACE_MODELS>([^<]+)</FACE_MODELS>");
        String yunetFile = matchIn(FACE_MODELS_JAVA, "YUNET_FILE = \"([^\"]+)\"");
        assertEquals(faceModels + "/" + yunetFile, model, "YuNet where the image's FACE_MODELS looks for it");
        String volume = mountedFrom(as, model, false);
        var vol = as.getVolumes().stream().filter(v -> v.getName().equals(volume)).findFirst().orElseThrow();
        assertEquals("privface-face-models", vol.getConfigMap().getName());
        assertTrue(vol.getConfigMap().getOptional() == null || !vol.getConfigMap().getOptional(),
                "a gateway without YuNet must not start (it would fall back to UltraFace unseen)");
        assertTrue(c.getVolumeMounts().stream().filter(m -> m.getName().equals(volume)).allMatch(m -> Boolean.TRUE.equals(m.getReadOnly())),
                "the model is mounted read-only");
        assertEquals(matchIn(FACE_MODELS_JAVA, "YUNET_SHA256 = \"([0-9a-f]{64})\""),
                agent.getSpec().getTemplate().getMetadata().getAnnotations().get("privface.io/yunet-sha256"),
                "the pod template's hash is the one the agent checks");

        for (Map.Entry<String, Path> o : OVERLAYS.entrySet()) {
            Map<String, String> data = RESOURCES.stream().filter(d -> d.file().startsWith(o.getValue()) && d.kind().equals("ConfigMap")
                            && d.name().equals("privface-agent-site"))
                    .map(d -> d.as(ConfigMap.class)).findFirst().orElseThrow().getData();
            String at = o.getValue() + ": ";
            assertEquals("yunet", data.get("AGENT_DETECTOR"), at + "detector");
            assertEquals("dlib", data.get("AGENT_EMBEDDER_NETWORK"), at + "embedding network (docs/face-stack.md)");
            assertEquals("embedding", data.get("AGENT_MECHANISM"), at + "mechanism");
            assertEquals("sign-cap", data.get("AGENT_SENSITIVITY_MODE"), at + "mode");
            assertEquals(20.0, Double.parseDouble(data.get("AGENT_EPSILON")), at + "ε per face (docs/frontier.md)");
            assertEquals("once", data.get("AGENT_BUDGET"), at + "one release per appearance: ε per track is ε per face");
            // The overlay's DaemonSet keeps the base's models volume (a patch could replace the list).
            PodSpec p = DOCS.stream().filter(d -> d.file().startsWith(o.getValue()) && d.kind().equals("DaemonSet"))
                    .map(d -> d.as(DaemonSet.class)).findFirst().orElseThrow().getSpec().getTemplate().getSpec();
            assertTrue(p.getVolumes() == null || p.getVolumes().stream().noneMatch(v -> v.getName().equals(volume)),
                    at + "the site patch must not replace the shared models volume");
        }
    }

    /**
     * The answer release runs on Kubernetes (issue 38): the recognizer reads its gallery signing key
     * from the Secret privface-recognizer-gallery (not optional: without it no gallery is
     * published), and the public strangers file from a read-only claim, pinned by the SHA-256 in its
     * pod template's annotation; at least one site answers, its gateways trusting the gallery key
     * from the ConfigMap privface-gallery-keys under the id the recognizer signs with.
     */
    @Test
    void theRecognizerSignsGalleriesCalibratesOnPinnedStrangersAndASiteAnswers() {
        Deployment rec = of(Deployment.class).stream().filter(d -> d.getMetadata().getName().equals("privface-recognizer"))
                .findFirst().orElseThrow();
        PodSpec rs = rec.getSpec().getTemplate().getSpec();
        Container rc = rs.getContainers().get(0);
        String keyFile = env(rc, "RECOGNIZER_ANSWER_SIGNING_KEY_FILE");
        assertEquals("privface-recognizer-gallery", mountedFrom(rs, keyFile, true), "the gallery key comes from its Secret");
        var keyVolume = rs.getVolumes().stream().filter(v -> v.getSecret() != null
                && "privface-recognizer-gallery".equals(v.getSecret().getSecretName())).findFirst().orElseThrow();
        assertTrue(keyVolume.getSecret().getOptional() == null || !keyVolume.getSecret().getOptional(),
                "without the key no gallery is published: the Secret is not optional");
        String keyId = env(rc, "RECOGNIZER_ANSWER_KEY_ID");

        String strangers = env(rc, "RECOGNIZER_ANSWER_STRANGERS_FILE");
        var mount = rc.getVolumeMounts().stream().filter(m -> strangers.startsWith(m.getMountPath() + "/")).findFirst()
                .orElseThrow(() -> new AssertionError(strangers + " is not under any mount"));
        assertEquals(Boolean.TRUE, mount.getReadOnly(), "the strangers file is mounted read-only");
        var vol = rs.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
        String claim = vol.getPersistentVolumeClaim().getClaimName();
        var pvc = of(io.fabric8.kubernetes.api.model.PersistentVolumeClaim.class).stream()
                .filter(c -> c.getMetadata().getName().equals(claim)).findFirst()
                .orElseThrow(() -> new AssertionError("no claim " + claim));
        assertEquals(List.of("ReadOnlyMany"), pvc.getSpec().getAccessModes(), "every replica mounts the same file");
        var sha = rc.getEnv().stream().filter(e -> e.getName().equals("RECOGNIZER_ANSWER_STRANGERS_SHA256")).findFirst()
                .orElseThrow(() -> new AssertionError("the strangers file is not pinned"));
        String annotation = sha.getValueFrom().getFieldRef().getFieldPath();
        assertEquals("metadata.annotations['privface.io/strangers-sha256']", annotation);
        assertTrue(rec.getSpec().getTemplate().getMetadata().getAnnotations().get("privface.io/strangers-sha256")
                .matches("[0-9a-f]{64}"), "the pod template pins a SHA-256");

        int answering = 0;
        for (Map.Entry<String, Path> o : OVERLAYS.entrySet()) {
            // The site's settings, not its operator keys (both are ConfigMaps of the overlay).
            Map<String, String> data = RESOURCES.stream().filter(d -> d.file().startsWith(o.getValue()) && d.kind().equals("ConfigMap"))
                    .map(d -> d.as(ConfigMap.class)).filter(m -> m.getMetadata().getName().equals("privface-agent-site"))
                    .findFirst().orElseThrow().getData();
            String release = data.getOrDefault("AGENT_ANSWER_RELEASE", "vector");
            assertTrue(Set.of("vector", "answer", "both").contains(release), o.getValue() + ": release " + release);
            if (release.equals("vector")) {
                continue;
            }
            answering++;
            Container c = DOCS.stream().filter(d -> d.file().startsWith(o.getValue()) && d.kind().equals("DaemonSet"))
                    .map(d -> d.as(DaemonSet.class)).findFirst().orElseThrow().getSpec().getTemplate().getSpec()
                    .getContainers().get(0);
            var trusted = c.getEnv().stream().filter(e -> e.getName().equals("AGENT_ANSWER_GALLERY_KEYS_"
                    + keyId.toUpperCase(java.util.Locale.ROOT))).findFirst()
                    .orElseThrow(() -> new AssertionError(o.getValue() + ": answers but trusts no gallery key " + keyId));
            assertEquals("privface-gallery-keys", trusted.getValueFrom().getConfigMapKeyRef().getName());
            assertEquals(keyId, trusted.getValueFrom().getConfigMapKeyRef().getKey());
            assertEquals("embedding", data.get("AGENT_MECHANISM"), o.getValue() + ": answers decode embeddings");
        }
        assertTrue(answering >= 1, "no site runs the answer release");
    }

    /**
     * Issue 44: the gateway's JVM is sized for a small box, the same way in the DaemonSet and in the
     * off-cluster bundle: a fixed heap well inside the memory limit, the serial GC, JavaCPP's cap left
     * to the limit, and dlib's graph cached on the data directory (which outlives the pod).
     */
    @Test
    void theAgentsMemorySettingsFitASmallBoxAlikeInTheDaemonSetAndTheBundle() throws IOException {
        DaemonSet agent = of(DaemonSet.class).stream().filter(d -> d.getSpec() != null && d.getSpec().getSelector() != null)
                .findFirst().orElseThrow();
        Container c = agent.getSpec().getTemplate().getSpec().getContainers().get(0);
        Map<String, String> env = new java.util.HashMap<>();
        c.getEnv().stream().filter(e -> e.getValue() != null).forEach(e -> env.put(e.getName(), e.getValue()));
        String jvm = env.getOrDefault("JAVA_TOOL_OPTIONS", "");
        var xmx = Pattern.compile("-Xmx(\\d+)m").matcher(jvm);
        assertTrue(xmx.find(), "the DaemonSet states the agent's heap: " + jvm);
        long heapMiB = Long.parseLong(xmx.group(1));
        long limitMiB = io.fabric8.kubernetes.api.model.Quantity.getAmountInBytes(c.getResources().getLimits().get("memory"))
                .longValue() >> 20;
        // dlib's graph needs 180 MiB of heap the one time it is written; natives need about as much again as the heap.
        assertTrue(heapMiB >= 192 && 2 * heapMiB + 256 <= limitMiB, "heap " + heapMiB + " MiB against a limit of " + limitMiB);
        for (String flag : List.of("-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError", "-Dorg.bytedeco.javacpp.maxPhysicalBytes=0")) {
            assertTrue(jvm.contains(flag), "the DaemonSet's JVM lacks " + flag);
        }
        assertTrue(env.getOrDefault("FACE_MODEL_CACHE", "").startsWith(env.get("AGENT_DATA_DIR") + "/"),
                "dlib's graph is cached on the data directory");
        String unit = Files.readString(repo.resolve("k8s/gateway/privface-agent.service"));
        assertTrue(unit.contains("JAVA_TOOL_OPTIONS=" + jvm + "'"), "the bundle's JVM flags are the DaemonSet's");
        assertTrue(unit.contains("--memory " + (limitMiB % 1024 == 0 ? (limitMiB / 1024) + "g" : limitMiB + "m")),
                "the bundle's memory limit is the DaemonSet's");
        assertTrue(unit.contains("MALLOC_ARENA_MAX=" + env.get("MALLOC_ARENA_MAX")), "the bundle bounds glibc's arenas alike");
        assertTrue(unit.contains("FACE_MODEL_CACHE=" + env.get("FACE_MODEL_CACHE")), "the bundle caches dlib's graph alike");
    }

    private static final Path FACE_MODELS_JAVA = Path.of("agent/src/main/java/org/privface/agent/detect/FaceModels.java");

    /** The first group of {@code regex} in a repository file. */
    private static String matchIn(Path file, String regex) throws IOException {
        Path f = file.isAbsolute() ? file : repo.resolve(file);
        var m = Pattern.compile(regex).matcher(Files.readString(f));
        assertTrue(m.find(), regex + " not found in " + f);
        return m.group(1);
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
        Map<String, Set<String>> modes = Map.of("embedding", Set.of("sign-cap"), "fisher", Set.of("l1-clip"),
                "peep", Set.of("vector", "l1-clip"), "rdp", Set.of("strict"), "gaussian", Set.of("gdp"));
        for (Map.Entry<String, Path> o : OVERLAYS.entrySet()) {
            String site = o.getKey();
            List<ConfigMap> cms = RESOURCES.stream().filter(d -> d.file().startsWith(o.getValue()) && d.kind().equals("ConfigMap")
                            && d.name().equals("privface-agent-site"))
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
}
