package org.privface.wire.security;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.privface.wire.topics.TopicSpec;
import org.privface.wire.topics.Topics;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Principals and ACLs as data: broker-config/security.yml, expanded for the given sites. The
 * format is described in that file; the applier is {@link SecurityApplier}.
 */
public final class Security {
    /** SCRAM user names: what may follow {@code User:} without quoting trouble in JAAS or ACLs. */
    private static final Pattern USER = Pattern.compile("[A-Za-z0-9_.-]{1,128}");
    /** Vendor names become part of group and topic names; no dots, so one vendor's prefix never covers another's. */
    private static final Pattern VENDOR = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final Set<AclOperation> GRANTABLE = Set.of(AclOperation.READ, AclOperation.WRITE,
            AclOperation.DESCRIBE, AclOperation.CREATE, AclOperation.DELETE, AclOperation.ALTER,
            AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE,
            AclOperation.CLUSTER_ACTION);

    private Security() {
    }

    public static String principal(String user) {
        return "User:" + user;
    }

    /** The definitions in the bundled security.yml, expanded for the given sites. */
    public static List<PrincipalSpec> definitions(List<String> sites) {
        try (InputStream in = Security.class.getResourceAsStream("/org/privface/wire/security.yml")) {
            if (in == null) {
                throw new IllegalStateException("security.yml is not on the classpath");
            }
            return parse(in, sites);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @SuppressWarnings("unchecked")
    public static List<PrincipalSpec> parse(InputStream yaml, List<String> sites) {
        Map<String, Object> doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
        List<Map<String, Object>> principals = doc == null ? null : (List<Map<String, Object>>) doc.get("principals");
        if (principals == null) {
            throw new IllegalArgumentException("security.yml has no 'principals' list");
        }
        sites.forEach(Topics::checkSite);
        Map<String, PrincipalSpec> out = new LinkedHashMap<>();
        for (Map<String, Object> p : principals) {
            String template = String.valueOf(p.get("name"));
            List<Map<String, Object>> acls = (List<Map<String, Object>>) p.getOrDefault("acls", List.of());
            if (template.contains("{site}")) {
                for (String site : sites) {
                    add(out, new PrincipalSpec(user(template.replace("{site}", site)), bindings(
                            user(template.replace("{site}", site)), acls, List.of(site))));
                }
            } else {
                add(out, new PrincipalSpec(user(template), bindings(user(template), acls, sites)));
            }
        }
        List<Map<String, Object>> vendors = (List<Map<String, Object>>) doc.getOrDefault("vendors", List.of());
        for (Map<String, Object> v : vendors == null ? List.<Map<String, Object>>of() : vendors) {
            vendor(v, sites).ifPresent(p -> add(out, p));
        }
        List<Object> retired = (List<Object>) doc.getOrDefault("retired", List.of());
        for (Object r : retired == null ? List.of() : retired) {
            add(out, new PrincipalSpec(user(String.valueOf(r)), List.of(), true));
        }
        return List.copyOf(out.values());
    }

    /** A vendor's consumer groups must start with this; no vendor's prefix is a prefix of another's. */
    public static String vendorGroupPrefix(String vendor) {
        return "vendor." + vendor + ".";
    }

    /** The topic a vendor that answers may write its results to. */
    public static String vendorResultsTopic(String vendor) {
        return "vendor." + vendor + ".results";
    }

    /**
     * A third-party recognizer: READ on the enrollment, query and answer topics of its sites (those of
     * {@code sites} it lists), its own consumer-group prefix, and WRITE on its own results topic if
     * it answers. Nothing else, whatever the entry says; absent when it lists none of {@code sites}.
     */
    @SuppressWarnings("unchecked")
    private static java.util.Optional<PrincipalSpec> vendor(Map<String, Object> v, List<String> sites) {
        String name = String.valueOf(v.get("name"));
        if (!VENDOR.matcher(name).matches()) {
            throw new IllegalArgumentException("vendor name must match " + VENDOR.pattern() + ": " + name);
        }
        Set<String> known = Set.of("name", "sites", "results");
        for (String key : v.keySet()) {
            if (!known.contains(key)) {
                throw new IllegalArgumentException("vendor " + name + ": unknown key " + key + " (allowed: " + known + ")");
            }
        }
        Object listed = v.get("sites");
        if (!(listed instanceof List<?> l) || l.isEmpty()) {
            throw new IllegalArgumentException("vendor " + name + ": 'sites' must list at least one site");
        }
        List<String> own = new ArrayList<>();
        for (Object s : (List<Object>) listed) {
            String site = Topics.checkSite(String.valueOf(s));
            if (sites.contains(site)) {
                own.add(site);
            }
        }
        if (own.isEmpty()) {
            return java.util.Optional.empty();
        }
        Object results = v.getOrDefault("results", false);
        if (!(results instanceof Boolean)) {
            throw new IllegalArgumentException("vendor " + name + ": 'results' must be true or false");
        }
        List<Map<String, Object>> grants = new ArrayList<>();
        grants.add(Map.of("type", "topic", "name", "privface.{site}.enrollment", "operations", List.of("READ", "DESCRIBE")));
        grants.add(Map.of("type", "topic", "name", "privface.{site}.query", "operations", List.of("READ", "DESCRIBE")));
        grants.add(Map.of("type", "topic", "name", "privface.{site}.answer", "operations", List.of("READ", "DESCRIBE")));
        grants.add(Map.of("type", "group", "name", vendorGroupPrefix(name), "pattern", "prefixed",
                "operations", List.of("READ")));
        if ((Boolean) results) {
            grants.add(Map.of("type", "topic", "name", vendorResultsTopic(name), "operations", List.of("WRITE", "DESCRIBE")));
        }
        return java.util.Optional.of(new PrincipalSpec(name, bindings(name, grants, own)));
    }

    /** The results topics of the vendors among {@code principals} that answer, defined like privface.results. */
    public static List<TopicSpec> vendorTopics(List<PrincipalSpec> principals) {
        TopicSpec results = Topics.definitions(List.of()).stream().filter(t -> t.name().equals(Topics.RESULTS))
                .findFirst().orElseThrow(() -> new IllegalStateException("topics.yml defines no " + Topics.RESULTS));
        return principals.stream()
                .filter(p -> p.acls().stream().anyMatch(b -> b.pattern().resourceType() == ResourceType.TOPIC
                        && b.pattern().name().equals(vendorResultsTopic(p.name()))
                        && b.entry().operation() == AclOperation.WRITE))
                .map(p -> new TopicSpec(vendorResultsTopic(p.name()), results.partitions(), results.replicationFactor(),
                        results.config()))
                .toList();
    }

    private static void add(Map<String, PrincipalSpec> out, PrincipalSpec p) {
        if (out.putIfAbsent(p.name(), p) != null) {
            throw new IllegalArgumentException("principal declared twice: " + p.name());
        }
    }

    private static String user(String name) {
        if (!USER.matcher(name).matches()) {
            throw new IllegalArgumentException("principal name must match " + USER.pattern() + ": " + name);
        }
        return name;
    }

    /** One binding per (resource, operation); a grant naming {site} is repeated for each of {@code sites}. */
    @SuppressWarnings("unchecked")
    private static List<AclBinding> bindings(String user, List<Map<String, Object>> grants, List<String> sites) {
        Set<AclBinding> out = new LinkedHashSet<>();
        for (Map<String, Object> g : grants) {
            ResourceType type = enumOf(ResourceType.class, String.valueOf(g.get("type")), "resource type", user);
            if (type == ResourceType.ANY || type == ResourceType.UNKNOWN) {
                throw new IllegalArgumentException(user + ": resource type must be concrete: " + g.get("type"));
            }
            String template = String.valueOf(g.get("name"));
            if (template.isBlank() || "null".equals(template)) {
                throw new IllegalArgumentException(user + ": a grant without a resource name");
            }
            PatternType pattern = enumOf(PatternType.class, String.valueOf(g.getOrDefault("pattern", "literal")),
                    "pattern", user);
            if (pattern != PatternType.LITERAL && pattern != PatternType.PREFIXED) {
                throw new IllegalArgumentException(user + ": pattern must be literal or prefixed: " + g.get("pattern"));
            }
            List<String> names = new ArrayList<>();
            if (template.contains("{site}")) {
                sites.forEach(s -> names.add(template.replace("{site}", s)));
            } else {
                names.add(template);
            }
            List<Object> ops = (List<Object>) g.get("operations");
            if (ops == null || ops.isEmpty()) {
                throw new IllegalArgumentException(user + ": a grant on " + template + " without operations");
            }
            for (String name : names) {
                if (name.contains("*") || name.contains("{")) {
                    throw new IllegalArgumentException(user + ": no wildcards in resource names: " + name);
                }
                for (Object o : ops) {
                    AclOperation op = enumOf(AclOperation.class, String.valueOf(o), "operation", user);
                    if (!GRANTABLE.contains(op)) {
                        throw new IllegalArgumentException(user + ": operation " + o + " cannot be granted here");
                    }
                    out.add(new AclBinding(new ResourcePattern(type, name, pattern),
                            new AccessControlEntry(principal(user), "*", op, AclPermissionType.ALLOW)));
                }
            }
        }
        return List.copyOf(out);
    }

    private static <E extends Enum<E>> E enumOf(Class<E> type, String value, String what, String user) {
        try {
            return Enum.valueOf(type, value.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(user + ": unknown " + what + " " + value);
        }
    }
}
