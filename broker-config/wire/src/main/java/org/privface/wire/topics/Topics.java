package org.privface.wire.topics;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.privface.wire.WireLimits;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Topic names and definitions. The naming convention lives here and in topics.yml only:
 * per site {@code privface.<site>.enrollment} and {@code privface.<site>.query}, shared
 * {@code privface.results} and {@code privface.dead-letter}. Per site, compacted, also
 * {@code privface.<site>.control} (policy changes for the site's gateways, key = site) and
 * {@code privface.<site>.status} (each gateway's report of the policy in force, key = gateway).
 */
public final class Topics {
    public static final String RESULTS = "privface.results";
    public static final String DEAD_LETTER = "privface.dead-letter";
    /** Subscriptions the recognizer uses to follow every site, present and future. */
    public static final Pattern ALL_ENROLLMENT = Pattern.compile("privface\\.[A-Za-z0-9_-]+\\.enrollment");
    public static final Pattern ALL_QUERY = Pattern.compile("privface\\.[A-Za-z0-9_-]+\\.query");

    private static final Pattern SITE = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    private Topics() {
    }

    public static String enrollment(String site) {
        return "privface." + checkSite(site) + ".enrollment";
    }

    public static String query(String site) {
        return "privface." + checkSite(site) + ".query";
    }

    public static String control(String site) {
        return "privface." + checkSite(site) + ".control";
    }

    public static String status(String site) {
        return "privface." + checkSite(site) + ".status";
    }

    /** Per site, compacted (key = site): the signed gallery model the site's gateways decode queries against. */
    public static String gallery(String site) {
        return "privface." + checkSite(site) + ".gallery";
    }

    /** Per site: the gateways' answer records (FaceAnswer), key = camera id. */
    public static String answer(String site) {
        return "privface." + checkSite(site) + ".answer";
    }

    public static final Pattern ALL_ANSWER = Pattern.compile("privface\\.[A-Za-z0-9_-]+\\.answer");

    public static final Pattern ALL_STATUS = Pattern.compile("privface\\.[A-Za-z0-9_-]+\\.status");

    /**
     * Per site: signed erasure commands (the operator's, key = the person's pseudonym) and each
     * component's completion report (key = the same pseudonym); the erasure audit trail
     * (docs/operations.md, "Forgetting a person").
     */
    public static String erasure(String site) {
        return "privface." + checkSite(site) + ".erasure";
    }

    public static final Pattern ALL_ERASURE = Pattern.compile("privface\\.[A-Za-z0-9_-]+\\.erasure");

    /** The site a per-site topic belongs to: {@code privface.<site>.query} gives {@code <site>}. */
    public static String siteOf(String topic) {
        int last = topic.lastIndexOf('.');
        if (!topic.startsWith("privface.") || last <= "privface.".length()) {
            throw new IllegalArgumentException("not a per-site topic: " + topic);
        }
        return topic.substring("privface.".length(), last);
    }

    /** Site ids become part of topic names, so they must not contain dots. */
    public static String checkSite(String site) {
        if (site == null || !SITE.matcher(site).matches()) {
            throw new IllegalArgumentException("site id must match " + SITE.pattern() + ": " + site);
        }
        return site;
    }

    /** The definitions in the bundled topics.yml, expanded for the given sites. */
    public static List<TopicSpec> definitions(List<String> sites) {
        try (InputStream in = Topics.class.getResourceAsStream("/org/privface/wire/topics.yml")) {
            if (in == null) {
                throw new IllegalStateException("topics.yml is not on the classpath");
            }
            return parse(in, sites);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @SuppressWarnings("unchecked")
    static List<TopicSpec> parse(InputStream yaml, List<String> sites) {
        Map<String, Object> doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
        List<Map<String, Object>> topics = (List<Map<String, Object>>) doc.get("topics");
        if (topics == null) {
            throw new IllegalArgumentException("topics.yml has no 'topics' list");
        }
        Map<String, TopicSpec> out = new LinkedHashMap<>();
        for (Map<String, Object> t : topics) {
            String template = String.valueOf(t.get("name"));
            int partitions = ((Number) t.getOrDefault("partitions", 1)).intValue();
            short rf = ((Number) t.getOrDefault("replicationFactor", 1)).shortValue();
            Map<String, String> config = new LinkedHashMap<>();
            Map<String, Object> raw = (Map<String, Object>) t.getOrDefault("config", Map.of());
            raw.forEach((k, v) -> config.put(k, String.valueOf(v)));
            List<String> names = new ArrayList<>();
            if (template.contains("{site}")) {
                for (String site : sites) {
                    names.add(template.replace("{site}", checkSite(site)));
                }
            } else {
                names.add(template);
            }
            for (String name : names) {
                if (name.length() > WireLimits.MAX_ID_LENGTH) {
                    throw new IllegalArgumentException("topic name too long: " + name);
                }
                out.put(name, new TopicSpec(name, partitions, rf, config));
            }
        }
        return List.copyOf(out.values());
    }
}
