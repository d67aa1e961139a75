package org.privface.k8s;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.strimzi.api.kafka.model.user.KafkaUser;
import io.strimzi.api.kafka.model.user.KafkaUserScramSha512ClientAuthentication;
import io.strimzi.api.kafka.model.user.acl.AclOperation;
import io.strimzi.api.kafka.model.user.acl.AclResourcePatternType;
import io.strimzi.api.kafka.model.user.acl.AclRule;
import io.strimzi.api.kafka.model.user.acl.AclRuleType;

/**
 * The deployment's rules, each as a list of violations (empty when the rule holds), so that a
 * test can assert both that the manifests keep them and that a broken manifest is caught.
 */
final class Policies {
    static final Pattern AGENT = Pattern.compile("agent-([a-z0-9][a-z0-9-]*)");
    static final Pattern OPERATOR = Pattern.compile("operator-([a-z0-9][a-z0-9-]*)");
    static final Pattern GATEWAY = Pattern.compile("gateway-([a-z0-9][a-z0-9-]*)");
    static final Pattern CONSOLE = Pattern.compile("console-([a-z0-9][a-z0-9-]*)");
    static final String RECOGNIZER = "recognizer";
    /** A site nobody has configured yet: prefix ACLs must not reach it either. */
    static final String LATER_SITE = "site-added-later";
    private static final Set<AclOperation> WRITE_DESCRIBE = EnumSet.of(AclOperation.WRITE, AclOperation.DESCRIBE);
    private static final Set<AclOperation> READ_DESCRIBE = EnumSet.of(AclOperation.READ, AclOperation.DESCRIBE);
    private static final Set<AclOperation> READ_WRITE_DESCRIBE = EnumSet.of(AclOperation.READ, AclOperation.WRITE,
            AclOperation.DESCRIBE);
    private static final List<AclOperation> CHANGING = List.of(AclOperation.WRITE, AclOperation.CREATE,
            AclOperation.DELETE, AclOperation.ALTER, AclOperation.ALTERCONFIGS);

    private Policies() {}

    static String topic(String site, String kind) {
        return "privface." + site + "." + kind;
    }

    /**
     * agent-SITE: exactly WRITE (and DESCRIBE) on its site's enrollment, query, answer and status
     * topics and READ (and DESCRIBE) on its control and gallery topics, by literal name, and nothing else anywhere.
     */
    static List<String> agentUser(KafkaUser user, Set<String> sites) {
        String name = user.getMetadata().getName();
        Matcher m = AGENT.matcher(name);
        if (!m.matches()) {
            return List.of(name + ": not an agent principal (agent-<site>)");
        }
        return siteAcls(user, m.group(1), sites);
    }

    /**
     * gateway-SITE-NAME: one off-cluster gateway's own principal, labelled with its site, with
     * exactly an agent's ACLs on that site (so revoking it touches no other gateway).
     */
    static List<String> gatewayUser(KafkaUser user, Set<String> sites) {
        String name = user.getMetadata().getName();
        String site = user.getMetadata().getLabels() == null ? null : user.getMetadata().getLabels().get("privface.io/site");
        if (site == null || !sites.contains(site) || !name.startsWith("gateway-" + site + "-")
                || name.length() == ("gateway-" + site + "-").length()) {
            return List.of(name + ": not a gateway principal gateway-<site>-<name> labelled privface.io/site with a listed site");
        }
        return siteAcls(user, site, sites);
    }

    private static List<String> siteAcls(KafkaUser user, String site, Set<String> sites) {
        List<String> out = new ArrayList<>();
        String name = user.getMetadata().getName();
        scram(user, out);
        Map<String, Set<AclOperation>> allowed = Map.of(
                topic(site, "enrollment"), WRITE_DESCRIBE,
                topic(site, "query"), WRITE_DESCRIBE,
                topic(site, "status"), WRITE_DESCRIBE,
                topic(site, "answer"), WRITE_DESCRIBE,
                topic(site, "control"), READ_DESCRIBE,
                topic(site, "gallery"), READ_DESCRIBE,
                // erasure (#43): reads signed commands, writes its completion report
                topic(site, "erasure"), READ_WRITE_DESCRIBE);
        for (AclRule r : KafkaAcls.rules(user)) {
            String what = name + ": ACL " + KafkaAcls.type(r.getResource()) + " " + KafkaAcls.name(r.getResource())
                    + " " + KafkaAcls.operations(r);
            if (r.getType() == AclRuleType.DENY) {
                continue;
            }
            if (!"topic".equals(KafkaAcls.type(r.getResource()))) {
                out.add(what + ": an agent needs no ACL on anything but its topics");
            } else if (KafkaAcls.patternType(r.getResource()) != AclResourcePatternType.LITERAL
                    || KafkaAcls.name(r.getResource()).equals("*")) {
                out.add(what + ": an agent's topics are named literally, never by prefix or wildcard");
            } else if (!allowed.containsKey(KafkaAcls.name(r.getResource()))) {
                out.add(what + ": not one of site " + site + "'s topics");
            } else if (!allowed.get(KafkaAcls.name(r.getResource())).containsAll(KafkaAcls.operations(r))) {
                out.add(what + ": allowed here are only " + allowed.get(KafkaAcls.name(r.getResource())));
            }
            if (r.getHost() != null && !r.getHost().equals("*")) {
                out.add(what + ": host restriction " + r.getHost() + " would break gateways behind NAT");
            }
        }
        for (String kind : List.of("enrollment", "query", "answer", "status")) {
            if (!KafkaAcls.allowsTopic(user, topic(site, kind), AclOperation.WRITE)) {
                out.add(name + ": cannot write " + topic(site, kind));
            }
        }
        if (!KafkaAcls.allowsTopic(user, topic(site, "control"), AclOperation.READ)) {
            out.add(name + ": cannot read " + topic(site, "control"));
        }
        if (!KafkaAcls.allowsTopic(user, topic(site, "gallery"), AclOperation.READ)) {
            out.add(name + ": cannot read " + topic(site, "gallery"));
        }
        for (String other : union(sites, LATER_SITE)) {
            if (other.equals(site)) {
                continue;
            }
            for (String kind : List.of("enrollment", "query", "answer", "status", "control", "gallery")) {
                for (AclOperation op : AclOperation.values()) {
                    if (KafkaAcls.allowsTopic(user, topic(other, kind), op)) {
                        out.add(name + ": may " + op + " site " + other + "'s topic " + topic(other, kind));
                    }
                }
            }
        }
        for (String shared : List.of("privface.results", "privface.dead-letter", "privface.fleet-sites")) {
            if (KafkaAcls.allowsTopic(user, shared, AclOperation.READ) || KafkaAcls.allowsTopic(user, shared, AclOperation.WRITE)) {
                out.add(name + ": may use " + shared + ", which carries every site's results");
            }
        }
        return out;
    }

    /**
     * recognizer: reads every site's enrollment, query, answer and status topics (present and
     * future) and its consumer group; writes results, dead letters and each configured site's
     * gallery, literally named, and nothing else: above all no enrollment topic, which is the
     * training set of record, and no answer topic.
     */
    static List<String> recognizerUser(KafkaUser user, Set<String> sites, String groupId) {
        List<String> out = new ArrayList<>();
        String name = user.getMetadata().getName();
        scram(user, out);
        for (String site : union(sites, LATER_SITE)) {
            for (String kind : List.of("enrollment", "query", "answer", "status")) {
                if (!KafkaAcls.allowsTopic(user, topic(site, kind), AclOperation.READ)) {
                    out.add(name + ": cannot read " + topic(site, kind));
                }
            }
            for (String kind : List.of("enrollment", "query", "answer", "status", "control")) {
                for (AclOperation op : CHANGING) {
                    if (KafkaAcls.allowsTopic(user, topic(site, kind), op)) {
                        out.add(name + ": may " + op + " " + topic(site, kind));
                    }
                }
            }
        }
        for (String site : sites) {
            if (!KafkaAcls.allowsTopic(user, topic(site, "gallery"), AclOperation.WRITE)) {
                out.add(name + ": cannot write " + topic(site, "gallery") + " (site " + site + "'s gateways get no gallery)");
            }
        }
        Set<String> galleries = new java.util.HashSet<>();
        sites.forEach(site -> galleries.add(topic(site, "gallery")));
        // Each site's erasure topic: the recognizer's completion reports (#43), literally named.
        sites.forEach(site -> galleries.add(topic(site, "erasure")));
        for (String shared : List.of("privface.results", "privface.dead-letter", "privface.fleet-sites")) {
            if (!KafkaAcls.allowsTopic(user, shared, AclOperation.WRITE)) {
                out.add(name + ": cannot write " + shared);
            }
        }
        for (String group : List.of(groupId, groupId + ".owners", groupId + ".answers")) {
            if (!KafkaAcls.allows(user, "group", group, AclOperation.READ)) {
                out.add(name + ": cannot join its consumer group " + group);
            }
        }
        for (AclRule r : KafkaAcls.rules(user)) {
            String target = KafkaAcls.name(r.getResource());
            boolean literal = KafkaAcls.patternType(r.getResource()) == AclResourcePatternType.LITERAL;
            boolean literalShared = literal && Set.of("privface.results", "privface.dead-letter", "privface.fleet-sites").contains(target);
            boolean literalGallery = literal && galleries.contains(target);
            if (r.getType() != AclRuleType.DENY && "topic".equals(KafkaAcls.type(r.getResource())) && !literalShared
                    && !(literalGallery && WRITE_DESCRIBE.containsAll(KafkaAcls.operations(r)))
                    && KafkaAcls.operations(r).stream().anyMatch(g -> CHANGING.stream().anyMatch(c -> KafkaAcls.implies(g, c)))) {
                out.add(name + ": ACL " + target + " " + KafkaAcls.operations(r)
                        + " changes topics other than results, dead letters and the sites' galleries");
            }
            if ("cluster".equals(KafkaAcls.type(r.getResource()))) {
                out.add(name + ": needs no cluster ACL");
            }
        }
        return out;
    }

    /** operator-SITE: writes its site's control topic and reads its status topic, nothing else. */
    static List<String> operatorUser(KafkaUser user, Set<String> sites) {
        String name = user.getMetadata().getName();
        Matcher m = OPERATOR.matcher(name);
        if (!m.matches()) {
            return List.of(name + ": not an operator principal (operator-<site>)");
        }
        return consoleUser(user, Set.of(m.group(1)), sites);
    }

    /**
     * An operator console's principal (operator-SITE, or console-NAME for many sites): writes the
     * control topics and reads the status topics of exactly the sites it manages, nothing else.
     */
    static List<String> consoleUser(KafkaUser user, Set<String> managed, Set<String> sites) {
        List<String> out = new ArrayList<>();
        String name = user.getMetadata().getName();
        scram(user, out);
        Map<String, Set<AclOperation>> allowed = new java.util.HashMap<>();
        for (String site : managed) {
            allowed.put(topic(site, "control"), WRITE_DESCRIBE);
            allowed.put(topic(site, "status"), READ_DESCRIBE);
            // a signed erasure command, and the components' reports (#43)
            allowed.put(topic(site, "erasure"), READ_WRITE_DESCRIBE);
        }
        for (AclRule r : KafkaAcls.rules(user)) {
            String target = KafkaAcls.name(r.getResource());
            if (r.getType() == AclRuleType.DENY) {
                continue;
            }
            if (!"topic".equals(KafkaAcls.type(r.getResource()))
                    || KafkaAcls.patternType(r.getResource()) != AclResourcePatternType.LITERAL
                    || !allowed.containsKey(target) || !allowed.get(target).containsAll(KafkaAcls.operations(r))) {
                out.add(name + ": ACL " + KafkaAcls.type(r.getResource()) + " " + target + " " + KafkaAcls.operations(r)
                        + " is more than " + allowed);
            }
        }
        for (String site : managed) {
            if (!KafkaAcls.allowsTopic(user, topic(site, "control"), AclOperation.WRITE)) {
                out.add(name + ": cannot write " + topic(site, "control"));
            }
            if (!KafkaAcls.allowsTopic(user, topic(site, "status"), AclOperation.READ)) {
                out.add(name + ": cannot read " + topic(site, "status"));
            }
        }
        for (String other : union(sites, LATER_SITE)) {
            for (String kind : List.of("enrollment", "query", "answer", "gallery")) {
                if (KafkaAcls.allowsTopic(user, topic(other, kind), AclOperation.WRITE)) {
                    out.add(name + ": may write " + topic(other, kind));
                }
            }
            if (!managed.contains(other)) {
                for (AclOperation op : AclOperation.values()) {
                    if (KafkaAcls.allowsTopic(user, topic(other, "control"), op) || KafkaAcls.allowsTopic(user, topic(other, "status"), op)) {
                        out.add(name + ": may " + op + " site " + other + ", which it does not manage");
                    }
                }
            }
        }
        return out;
    }

    private static void scram(KafkaUser user, List<String> out) {
        if (!(user.getSpec().getAuthentication() instanceof KafkaUserScramSha512ClientAuthentication)) {
            out.add(user.getMetadata().getName() + ": authentication must be scram-sha-512");
        }
    }

    /**
     * Every container: CPU and memory requests and limits (request no larger than limit); no
     * privilege escalation and all capabilities dropped. Every long-running container also:
     * liveness and readiness probes on /health through a named port, a read-only root
     * filesystem, and a pod that runs as non-root.
     */
    static List<String> podSpec(String where, PodSpec spec) {
        List<String> out = new ArrayList<>();
        if (spec == null) {
            return List.of(where + ": no pod spec");
        }
        boolean podNonRoot = spec.getSecurityContext() != null && Boolean.TRUE.equals(spec.getSecurityContext().getRunAsNonRoot());
        if (!podNonRoot) {
            out.add(where + ": pod securityContext.runAsNonRoot must be true");
        }
        List<Container> all = new ArrayList<>(spec.getContainers());
        all.addAll(spec.getInitContainers());
        for (Container c : all) {
            boolean init = spec.getInitContainers().contains(c);
            String at = where + " container " + c.getName();
            resources(at, c.getResources(), out);
            if (c.getImage() == null || c.getImage().endsWith(":latest") || !c.getImage().contains(":")) {
                out.add(at + ": image needs a fixed tag, not " + c.getImage());
            }
            SecurityContext sc = c.getSecurityContext();
            if (sc == null || !Boolean.FALSE.equals(sc.getAllowPrivilegeEscalation())) {
                out.add(at + ": allowPrivilegeEscalation must be false");
            }
            if (sc == null || sc.getCapabilities() == null || !sc.getCapabilities().getDrop().contains("ALL")) {
                out.add(at + ": must drop ALL capabilities");
            }
            if (init) {
                continue;
            }
            if (sc == null || !Boolean.TRUE.equals(sc.getReadOnlyRootFilesystem())) {
                out.add(at + ": readOnlyRootFilesystem must be true");
            }
            if (sc != null && (Boolean.FALSE.equals(sc.getRunAsNonRoot()) || Long.valueOf(0).equals(sc.getRunAsUser()))) {
                out.add(at + ": runs as root");
            }
            if (sc != null && sc.getCapabilities() != null && !sc.getCapabilities().getAdd().isEmpty()) {
                out.add(at + ": adds capabilities " + sc.getCapabilities().getAdd());
            }
            probe(at + " liveness", c.getLivenessProbe(), c.getPorts(), out);
            probe(at + " readiness", c.getReadinessProbe(), c.getPorts(), out);
            if (c.getStartupProbe() != null) {
                probe(at + " startup", c.getStartupProbe(), c.getPorts(), out);
            }
        }
        return out;
    }

    private static void resources(String at, ResourceRequirements r, List<String> out) {
        if (r == null) {
            out.add(at + ": no resources");
            return;
        }
        for (String res : List.of("cpu", "memory")) {
            Quantity req = r.getRequests().get(res);
            Quantity lim = r.getLimits().get(res);
            if (req == null) {
                out.add(at + ": no " + res + " request");
            }
            if (lim == null) {
                out.add(at + ": no " + res + " limit");
            }
            if (req != null && lim != null && req.getNumericalAmount().compareTo(lim.getNumericalAmount()) > 0) {
                out.add(at + ": " + res + " request " + req + " exceeds its limit " + lim);
            }
        }
    }

    private static void probe(String at, Probe p, List<ContainerPort> ports, List<String> out) {
        if (p == null) {
            out.add(at + " probe missing");
            return;
        }
        if (p.getHttpGet() == null) {
            out.add(at + " probe must be an HTTP GET on /health");
            return;
        }
        String path = p.getHttpGet().getPath();
        if (path == null || !(path.equals("/health") || path.startsWith("/health/"))) {
            out.add(at + " probe path " + path + " is not /health");
        }
        var port = p.getHttpGet().getPort();
        boolean known = port != null && ports.stream().anyMatch(cp -> port.getStrVal() != null
                ? port.getStrVal().equals(cp.getName())
                : port.getIntVal() != null && port.getIntVal().equals(cp.getContainerPort()));
        if (!known) {
            out.add(at + " probe port " + port + " is none of the container's ports");
        }
    }

    static Set<String> union(Set<String> sites, String extra) {
        Set<String> s = new java.util.TreeSet<>(sites);
        s.add(extra);
        return s;
    }
}
