package org.privface.k8s;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.strimzi.api.kafka.model.user.KafkaUser;
import org.junit.jupiter.api.BeforeAll;
import org.privface.k8s.fleet.SiteList;

/**
 * What the manifest tests share: every manifest under k8s/ without a cluster: each document binds to the Strimzi 0.47
 * or fabric8 model of its kind with unknown fields rejected, each kustomization refers only to
 * what exists, and the deployment's rules hold (ACLs per principal, resources and probes, gateway
 * scheduling, topic settings equal to broker-config/topics.yml, ports and group id equal to the
 * services' own configuration, default-deny network policies). Where kubectl is installed, the
 * overlays are also rendered by its built-in kustomize and the output checked again.
 */
abstract class ManifestsFixture {
    static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
    static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
    static final Pattern LABEL_VALUE = Pattern.compile("(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?");
    static final String GATEWAY_LABEL = "privface.io/gateway";
    static final String SITE_LABEL = "privface.io/site";

    static Path k8s;
    static Path repo;
    /** Every document of every manifest file (kustomizations aside), bound. */
    static final List<Manifests.Doc> DOCS = new ArrayList<>();
    /** Documents that are whole resources (not patches). */
    static final List<Manifests.Doc> RESOURCES = new ArrayList<>();
    static final List<String> LOAD_ERRORS = new ArrayList<>();
    static final List<Path> KUSTOMIZATIONS = new ArrayList<>();
    /** overlay folder per site id. */
    static final Map<String, Path> OVERLAYS = new LinkedHashMap<>();
    /** k8s/sites.yaml, the list every site overlay and k8s/fleet are generated from. */
    static SiteList SITES;
    /** namePrefix and nameSuffix of the kustomization that lists a file, which rename it. */
    static final Map<Path, String[]> AFFIXES = new HashMap<>();

    @BeforeAll
    static void load() throws IOException {
        if (k8s != null) {
            return; // loaded once for all the manifest test classes of this JVM
        }
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
        SITES = SiteList.read(k8s.resolve("sites.yaml"));
        try (var s = Files.list(k8s.resolve("overlays"))) {
            s.filter(Files::isDirectory).sorted().forEach(d -> {
                String n = d.getFileName().toString();
                if (n.startsWith("site-")) {
                    OVERLAYS.put(n.substring("site-".length()), d);
                }
            });
        }
    }

    // ---------------------------------------------------------------- helpers

    /** The rules of a principal by its kind: agent-, gateway-, operator-, console- (sites from the list) or the recognizer. */
    static List<String> userProblems(KafkaUser u) throws IOException {
        Set<String> sites = OVERLAYS.keySet();
        String n = u.getMetadata().getName();
        if (Policies.AGENT.matcher(n).matches()) {
            return Policies.agentUser(u, sites);
        } else if (Policies.GATEWAY.matcher(n).matches()) {
            return Policies.gatewayUser(u, sites);
        } else if (Policies.OPERATOR.matcher(n).matches()) {
            return Policies.operatorUser(u, sites);
        } else if (Policies.CONSOLE.matcher(n).matches()) {
            var c = SITES.consoles().stream().filter(x -> ("console-" + x.name()).equals(n)).findFirst();
            return c.isEmpty() ? List.of(n + ": no console of that name in k8s/sites.yaml")
                    : Policies.consoleUser(u, Set.copyOf(c.get().sites()), sites);
        } else if (n.equals(Policies.RECOGNIZER)) {
            return Policies.recognizerUser(u, sites, recognizerGroupId());
        }
        return List.of(n + ": a principal no rule covers (agent-<site>, gateway-<site>-<name>, operator-<site>, console-<name>, recognizer)");
    }

    static IllegalArgumentException rejected(String yaml) {
        try {
            Manifests.load(Path.of("inline"), yaml);
        } catch (IllegalArgumentException e) {
            return e;
        } catch (IOException e) {
            return new IllegalArgumentException(e.getMessage(), e);
        }
        return fail("accepted:\n" + yaml);
    }

    static List<KafkaUser> users() {
        return of(KafkaUser.class);
    }

    static <T> List<T> of(Class<T> type) {
        return RESOURCES.stream().filter(d -> type.isInstance(d.model())).map(d -> type.cast(d.model())).toList();
    }

    static Path fileOf(HasMetadata m) {
        return RESOURCES.stream().filter(d -> d.model() == m).findFirst().orElseThrow().file();
    }

    static PodSpec podSpec(HasMetadata m) {
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

    static String env(Container c, String name) {
        return c.getEnv().stream().filter(e -> e.getName().equals(name)).map(EnvVar::getValue).findFirst()
                .orElseThrow(() -> new AssertionError(c.getName() + ": no " + name));
    }

    static String secretOf(Container c, String name) {
        return c.getEnv().stream().filter(e -> e.getName().equals(name) && e.getValueFrom() != null
                        && e.getValueFrom().getSecretKeyRef() != null)
                .map(e -> e.getValueFrom().getSecretKeyRef().getName()).findFirst()
                .orElseThrow(() -> new AssertionError(c.getName() + ": " + name + " is not from a Secret"));
    }

    /** recognizer.group-id from the recognizer's application.yml. */
    static String recognizerGroupId() throws IOException {
        JsonNode yml = Manifests.YAML.readTree(repo.resolve("recognizer/src/main/resources/application.yml").toFile());
        String id = yml.path("recognizer").path("group-id").asText();
        assertFalse(id.isBlank(), "recognizer.group-id in application.yml");
        return id;
    }

    static Path onPath(String exe) {
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
