package org.privface.k8s.fleet;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Writes every per-site resource from k8s/sites.yaml: one overlay per site (its topics from
 * broker-config/topics.yml, principals, camera egress, operator keys and agent DaemonSet, with its
 * own agent image tag), and the fleet kustomization that joins the cloud base to every site, with
 * the resources that depend on the whole list: the recognizer's per-site gallery grants, the
 * console principals, the external listener's uplink ranges and the preflight list of objects made
 * by hand.
 *
 * <p>Kustomize cannot loop over a list (a component instantiated per site still needs one folder
 * and one edit per site, and nothing can aggregate per-site grants into the one recognizer
 * KafkaUser), hence a small generator whose output is committed and checked by the k8s tests.
 *
 * <p>Run: {@code mvn -B -pl k8s compile exec:java} (writes under k8s/; refuses an invalid list).
 */
public final class FleetGenerator {
    static final String HEADER = "# Generated from k8s/sites.yaml by org.privface.k8s.fleet.FleetGenerator\n"
            + "# (mvn -B -pl k8s compile exec:java). Do not edit: edit the list and run the generator.\n";

    private final SiteList list;
    private final JsonNode topics;

    public FleetGenerator(SiteList list, JsonNode topicsYml) {
        this.list = list;
        this.topics = topicsYml;
    }

    public static void main(String[] args) throws IOException {
        Path k8s = Path.of(args.length > 0 ? args[0] : "k8s").toAbsolutePath().normalize();
        if (!Files.isDirectory(k8s.resolve("base")) && Files.isDirectory(k8s.resolve("../k8s/base"))) {
            k8s = k8s.resolve("../k8s").normalize(); // run from inside the module
        }
        SiteList list = SiteList.read(k8s.resolve("sites.yaml"));
        List<String> problems = list.problems();
        if (!problems.isEmpty()) {
            System.err.println("k8s/sites.yaml is refused:\n  " + String.join("\n  ", problems));
            System.exit(2);
        }
        FleetGenerator g = new FleetGenerator(list, SiteList.YAML.readTree(k8s.resolve("../broker-config/topics.yml").toFile()));
        for (String removed : g.write(k8s)) {
            System.out.println("removed " + removed);
        }
        System.out.println("wrote " + g.render().size() + " files for sites " + list.sites().stream().map(SiteList.Site::id).toList());
    }

    /** Writes the rendered files and removes the overlays of sites no longer listed; answers what it removed. */
    public List<String> write(Path k8s) throws IOException {
        Map<String, String> files = render();
        List<String> removed = new ArrayList<>();
        try (Stream<Path> s = Files.list(k8s.resolve("overlays"))) {
            for (Path d : s.filter(Files::isDirectory).sorted().toList()) {
                String n = d.getFileName().toString();
                if (n.startsWith("site-") && list.site(n.substring(5)) == null) {
                    try (Stream<Path> w = Files.walk(d)) {
                        for (Path p : w.sorted(Comparator.reverseOrder()).toList()) {
                            Files.delete(p);
                        }
                    }
                    removed.add("overlays/" + n);
                }
            }
        }
        for (Map.Entry<String, String> f : files.entrySet()) {
            Path p = k8s.resolve(f.getKey());
            Files.createDirectories(p.getParent());
            Files.writeString(p, f.getValue());
            if (p.toString().endsWith(".sh")) {
                p.toFile().setExecutable(true);
            }
        }
        return removed;
    }

    /** Path under k8s/ to content, for every generated file. */
    public Map<String, String> render() {
        Map<String, String> out = new LinkedHashMap<>();
        for (SiteList.Site s : list.sites()) {
            String dir = "overlays/site-" + s.id() + "/";
            out.put(dir + "kustomization.yaml", siteKustomization(s));
            out.put(dir + "topics.yaml", topics(s));
            out.put(dir + "kafkausers.yaml", kafkaUsers(s));
            out.put(dir + "networkpolicy-cameras.yaml", cameraPolicy(s));
            out.put(dir + "agent/kustomization.yaml", agentKustomization(s));
            out.put(dir + "agent/site-config.yaml", siteConfig(s));
            out.put(dir + "agent/operator-keys.yaml", operatorKeys(s));
            out.put(dir + "agent/daemonset-site.yaml", daemonSetPatch(s));
        }
        out.put("fleet/kustomization.yaml", fleetKustomization());
        out.put("fleet/recognizer-kafkauser.yaml", recognizerUser());
        if (!list.consoles().isEmpty()) {
            out.put("fleet/consoles.yaml", consoles());
        }
        out.put("fleet/preflight.sh", preflight());
        return out;
    }

    // ---------------------------------------------------------------- one site

    private String siteKustomization(SiteList.Site s) {
        return HEADER + """
                # Site "%1$s" alone: its topics, principals, agents and camera egress, nothing of the cloud
                # side (k8s/fleet joins base and every site). Its own agent tag allows a staged rollout.
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                namespace: privface
                resources:
                  - agent
                  - topics.yaml
                  - kafkausers.yaml
                  - networkpolicy-cameras.yaml
                images:
                  - name: privface/agent
                    newTag: %2$s
                """.formatted(s.id(), s.agentTag());
    }

    private String topics(SiteList.Site s) {
        StringBuilder b = new StringBuilder(HEADER).append("# Site ").append(s.id())
                .append("'s topics: broker-config/topics.yml with {site} = ").append(s.id()).append(".\n");
        boolean first = true;
        for (JsonNode t : topics.path("topics")) {
            String name = t.path("name").asText();
            if (!name.contains("{site}")) {
                continue;
            }
            String topic = name.replace("{site}", s.id());
            b.append(first ? "" : "---\n");
            first = false;
            b.append("""
                    apiVersion: kafka.strimzi.io/v1beta2
                    kind: KafkaTopic
                    metadata:
                      name: %s
                      labels:
                        strimzi.io/cluster: privface
                    spec:
                      topicName: %s
                      partitions: %d
                      replicas: %d
                    """.formatted(topic.replace('.', '-'), topic, t.path("partitions").asInt(), t.path("replicationFactor").asInt()));
            if (t.path("config").size() > 0) {
                b.append("  config:\n");
                t.path("config").fields().forEachRemaining(e -> {
                    String v = e.getValue().asText();
                    b.append("    ").append(e.getKey()).append(": ").append(v.matches("-?\\d+") ? v : plain(v)).append('\n');
                });
            }
        }
        return b.toString();
    }

    private static String plain(String v) {
        return v.matches("[A-Za-z][A-Za-z0-9_.-]*") && !v.matches("(?i)true|false|yes|no|on|off|null") ? v : "\"" + v + "\"";
    }

    /** The ACLs of one agent principal: its site's seven topics, literally, nothing else. */
    private static String agentAcls(String site) {
        StringBuilder b = new StringBuilder();
        for (String[] t : new String[][] {{"enrollment", "Write"}, {"query", "Write"}, {"status", "Write"},
                {"answer", "Write"}, {"control", "Read"}, {"gallery", "Read"}}) {
            b.append(acl("privface." + site + "." + t[0], t[1]));
        }
        // erasure (#43): reads the signed commands, writes its completion reports
        return b.append(acl("privface." + site + ".erasure", "Read", "Write")).toString();
    }

    private static String acl(String topic, String... ops) {
        StringBuilder b = new StringBuilder("""
                      - resource:
                          type: topic
                          name: %s
                          patternType: literal
                        operations:
                """.formatted(topic));
        for (String op : ops) {
            b.append("          - ").append(op).append('\n');
        }
        return b.append("          - Describe\n").toString();
    }

    private static String user(String name, String site, String comment, String acls) {
        return comment + """
                apiVersion: kafka.strimzi.io/v1beta2
                kind: KafkaUser
                metadata:
                  name: %s
                  labels:
                    strimzi.io/cluster: privface
                %s
                spec:
                  authentication:
                    type: scram-sha-512
                  authorization:
                    type: simple
                    acls:
                %s""".formatted(name, site == null ? "" : "    privface.io/site: " + site, acls)
                .replace("\n\n", "\n");
    }

    private String kafkaUsers(SiteList.Site s) {
        String id = s.id();
        StringBuilder b = new StringBuilder(HEADER);
        b.append(user("agent-" + id, id, """
                # agent-%1$s: the site's on-cluster gateways (its DaemonSet). Writes the site's enrollments,
                # queries, answers and status reports; reads its control and gallery topics by assignment.
                """.formatted(id), agentAcls(id)));
        for (String g : s.gateways()) {
            b.append("---\n").append(user("gateway-" + id + "-" + g, id, """
                    # gateway-%1$s-%2$s: off-cluster gateway %2$s of site %1$s, its own identity (revoke it alone by
                    # removing it from the list), through the external listener. The same ACLs as agent-%1$s.
                    """.formatted(id, g), agentAcls(id)));
        }
        b.append("---\n").append(user("operator-" + id, id, """
                # operator-%1$s: an operator of this site alone: writes its control topic, reads its status.
                """.formatted(id), acl("privface." + id + ".control", "Write") + acl("privface." + id + ".status", "Read")
                + acl("privface." + id + ".erasure", "Read", "Write")));
        return b.toString();
    }

    private String cameraPolicy(SiteList.Site s) {
        StringBuilder to = new StringBuilder();
        for (String cidr : s.cameraNetworks()) {
            to.append("        - ipBlock:\n            cidr: ").append(cidr).append('\n');
        }
        return HEADER + """
                # Site %1$s's agents may open their cameras (RTSP over TCP, HTTP MJPEG) on its camera networks.
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata:
                  name: privface-agent-cameras-%1$s
                spec:
                  podSelector:
                    matchLabels:
                      app.kubernetes.io/name: privface-agent
                      privface.io/site: %1$s
                  policyTypes:
                    - Egress
                  egress:
                    - to:
                %2$s      ports:
                        - protocol: TCP
                          port: 554
                        - protocol: TCP
                          port: 80
                        - protocol: TCP
                          port: 443
                """.formatted(s.id(), to);
    }

    private String agentKustomization(SiteList.Site s) {
        return HEADER + """
                # Site %1$s's agents: the base template renamed privface-agent-%1$s, labelled with the site, on
                # the site's gateways only, with its settings, operator keys and Secrets.
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                nameSuffix: -%1$s
                labels:
                  - pairs:
                      privface.io/site: %1$s
                      app.kubernetes.io/part-of: privface
                    includeSelectors: true
                    includeTemplates: true
                resources:
                  - ../../../base/agent
                  - site-config.yaml
                  - operator-keys.yaml
                patches:
                  - path: daemonset-site.yaml
                """.formatted(s.id());
    }

    private String siteConfig(SiteList.Site s) {
        Map<String, String> d = new LinkedHashMap<>();
        d.put("AGENT_SITE_ID", s.id());
        // The deep stack (docs/frontier.md, "Recommended ε"); a site's agent: entries override these.
        d.put("AGENT_DETECTOR", "yunet");
        d.put("AGENT_EMBEDDER_NETWORK", "dlib");
        d.put("AGENT_MECHANISM", "embedding");
        d.put("AGENT_SENSITIVITY_MODE", "sign-cap");
        d.put("AGENT_EPSILON", s.epsilon());
        d.put("AGENT_BUDGET", "once");
        d.put("AGENT_WINDOW", "10m");
        d.put("AGENT_FLOOR_EPSILON_MIN", s.floorMin());
        d.put("AGENT_FLOOR_EPSILON_MAX", s.floorMax());
        d.put("AGENT_SPOOL_MAX_BYTES", "268435456");
        d.put("AGENT_SPOOL_DROP_POLICY", "DROP_OLDEST");
        d.put("AGENT_ENROLL_FOLDER", "/var/lib/privface-agent-enroll");
        d.put("AGENT_BASIS_FIT", "private");
        d.put("AGENT_LOG_FORMAT", "json");
        if (!s.release().equals("vector")) {
            d.put("AGENT_ANSWER_RELEASE", s.release());
        }
        d.putAll(s.agent());
        s.cameras().forEach((name, url) -> d.put("AGENT_CAMERAS_" + name.toUpperCase(java.util.Locale.ROOT) + "_URL", url));
        StringBuilder b = new StringBuilder(HEADER).append("""
                # Site %s's gateway settings as AGENT_* variables (docs/agent.md, "Configuration"): the deep stack
                # (YuNet, dlib, EMBEDDING sign-cap) unless the list's agent: entries say otherwise. Every gateway
                # of the site gets the same values; each gateway's floor bounds what the control topic may set.
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: privface-agent-site
                data:
                """.formatted(s.id()));
        d.forEach((k, v) -> b.append("  ").append(k).append(": \"").append(v.replace("\\", "\\\\").replace("\"", "\\\""))
                .append("\"\n"));
        return b.toString();
    }

    private String operatorKeys(SiteList.Site s) {
        StringBuilder b = new StringBuilder(HEADER).append("""
                # The operator public keys whose signed control records site %s's gateways obey ("key-id: base64"
                # lines, docs/agent.md "Signed control records"). Public halves only; the list refuses a site without.
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: privface-operator-keys
                data:
                  operator-keys: |
                """.formatted(s.id()));
        s.operatorKeys().forEach(k -> b.append("    ").append(k.trim()).append('\n'));
        return b.toString();
    }

    private String daemonSetPatch(SiteList.Site s) {
        return HEADER + """
                apiVersion: apps/v1
                kind: DaemonSet
                metadata:
                  name: privface-agent
                spec:
                  template:
                    spec:
                      nodeSelector:
                        privface.io/site: %1$s
                      containers:
                        - name: agent
                          env:
                            - name: KAFKA_SASL_JAAS_CONFIG
                              valueFrom:
                                secretKeyRef:
                                  name: agent-%1$s
                                  key: sasl.jaas.config
                %2$s            - name: AGENT_CONTROL_TOKEN
                              valueFrom:
                                secretKeyRef:
                                  name: privface-agent-control-%1$s
                                  key: token
                                  optional: true
                """.formatted(s.id(), s.release().equals("vector") ? "" : GALLERY_KEY);
    }

    /** An answering site's gateways trust the recognizer's gallery key (public half) under the id "recognizer". */
    private static final String GALLERY_KEY =
            "            # The recognizer's gallery key (public half), trusted under the id \"recognizer\".\n"
            + "            - name: AGENT_ANSWER_GALLERY_KEYS_RECOGNIZER\n"
            + "              valueFrom:\n"
            + "                configMapKeyRef:\n"
            + "                  name: privface-gallery-keys\n"
            + "                  key: recognizer\n";

    // ---------------------------------------------------------------- the whole fleet

    private String fleetKustomization() {
        StringBuilder b = new StringBuilder(HEADER).append("""
                # The whole deployment: the cloud side (base) once, every listed site, and what depends on the
                # whole list. Apply with: kubectl apply -k k8s/fleet (a site alone: -k k8s/overlays/site-<id>).
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                namespace: privface
                resources:
                  - ../base
                  - recognizer-kafkauser.yaml
                """);
        if (!list.consoles().isEmpty()) {
            b.append("  - consoles.yaml\n");
        }
        for (SiteList.Site s : list.sites()) {
            b.append("  - ../overlays/site-").append(s.id()).append('\n');
        }
        b.append("""
                # The recognizer goes first in an upgrade (docs/operations.md, "Upgrades"); each site's agent
                # tag is in its own overlay.
                images:
                  - name: privface/recognizer
                    newTag: %s
                """.formatted(list.recognizerTag()));
        TreeSet<String> uplinks = new TreeSet<>();
        list.sites().forEach(s -> uplinks.addAll(s.uplinks()));
        if (!uplinks.isEmpty()) {
            b.append("""
                    # The external listener admits the off-cluster gateways' uplink ranges, and only those.
                    patches:
                      - target:
                          kind: Kafka
                          name: privface
                        patch: |-
                          - op: test
                            path: /spec/kafka/listeners/1/name
                            value: external
                          - op: replace
                            path: /spec/kafka/listeners/1/networkPolicyPeers
                            value:
                    """);
            uplinks.forEach(c -> b.append("              - ipBlock:\n                  cidr: ").append(c).append('\n'));
        }
        return b.toString();
    }

    private String recognizerUser() {
        StringBuilder acls = new StringBuilder("""
                      - resource:
                          type: topic
                          name: privface.
                          patternType: prefix
                        operations:
                          - Read
                          - Describe
                      # The query consumer group (recognizer.group-id). Enrollments are read without a group.
                      - resource:
                          type: group
                          name: privface-recognizer
                          patternType: literal
                        operations:
                          - Read
                      # Site ownership (recognizer.group-id + ".owners", members assigned the gallery topics) and
                      # the answers' committed offsets (+ ".answers"); docs/architecture.md, "Ownership".
                      - resource:
                          type: group
                          name: privface-recognizer.owners
                          patternType: literal
                        operations:
                          - Read
                      - resource:
                          type: group
                          name: privface-recognizer.answers
                          patternType: literal
                        operations:
                          - Read
                """);
        acls.append(acl("privface.results", "Write")).append(acl("privface.dead-letter", "Write"));
        acls.append("      # The fleet's per-site counts: each owner replica writes its sites' rows (docs/architecture.md).\n");
        acls.append(acl("privface.fleet-sites", "Write"));
        acls.append("      # Each site's gallery model (GalleryService), signed; only that site's gateways read it.\n");
        list.sites().forEach(s -> acls.append(acl("privface." + s.id() + ".gallery", "Write")));
        acls.append("      # Each site's erasure topic (recognizer/erase/ErasureService): its completion reports.\n");
        list.sites().forEach(s -> acls.append(acl("privface." + s.id() + ".erasure", "Write")));
        return user("recognizer", null, HEADER + """
                # The recognizer's principal (Secret "recognizer" from the User Operator). It reads the prefix
                # "privface." (every site's enrollment, query, answer and status, including sites added later;
                # Kafka ACLs have no suffix match) and writes results, dead letters and each listed site's
                # gallery, literally: a prefix reaching privface.<site>.gallery would reach the site's other
                # topics. Those per-site grants are why this user is generated from the list.
                """, acls.toString());
    }

    private String consoles() {
        StringBuilder b = new StringBuilder(HEADER);
        boolean first = true;
        for (SiteList.Console c : list.consoles()) {
            StringBuilder acls = new StringBuilder();
            for (String site : c.sites()) {
                acls.append(acl("privface." + site + ".control", "Write")).append(acl("privface." + site + ".status", "Read"))
                        .append(acl("privface." + site + ".erasure", "Read", "Write"));
            }
            b.append(first ? "" : "---\n");
            first = false;
            b.append(user("console-" + c.name(), null, """
                    # console-%s: one operator console for sites %s: writes their control topics and reads their
                    # status, nothing of any other site (its Secret's sasl.jaas.config goes into privface-console).
                    """.formatted(c.name(), String.join(", ", c.sites())), acls.toString()));
        }
        return b.toString();
    }

    private String preflight() {
        StringBuilder b = new StringBuilder("#!/bin/sh\n").append(HEADER).append("""
                # Before kubectl apply -k k8s/fleet: the Secrets and ConfigMaps the fleet's pods name that no
                # manifest makes (made by hand, k8s/README.md "Deploy"). Exits 1 naming each required one missing.
                set -u
                ns=${NAMESPACE:-privface}
                missing=0
                need() { kubectl -n "$ns" get "$1" "$2" >/dev/null 2>&1 || { echo "missing $1/$2: $3"; missing=1; }; }
                may() { kubectl -n "$ns" get "$1" "$2" >/dev/null 2>&1 || echo "absent (optional) $1/$2: $3"; }
                need configmap privface-face-models "YuNet for every gateway (k8s/README.md, Face models)"
                may secret privface-console "the console's signing key, operators and Kafka credentials"
                may secret privface-recognizer-admin "the recognizer's retrain token"
                need secret privface-recognizer-gallery "the recognizer's gallery signing key (k8s/README.md, Deploy)"
                """);
        if (list.sites().stream().anyMatch(s -> !s.release().equals("vector"))) {
            b.append("need configmap privface-gallery-keys \"the gallery key's public half, for the answering sites\"\n");
        }
        for (SiteList.Site s : list.sites()) {
            b.append("may secret privface-agent-control-").append(s.id()).append(" \"site ").append(s.id())
                    .append("'s REST control token\"\n");
        }
        b.append("""
                [ "$missing" = 0 ] && echo "preflight: every required object is present"
                exit "$missing"
                """);
        return b.toString();
    }
}
