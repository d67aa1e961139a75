package org.privface.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import org.junit.jupiter.api.Test;

/**
 * The retention table of docs/operations.md ("Retention") against broker-config/topics.yml, the
 * Strimzi topics of every overlay and the recognizer's Deployment (issue 43): one row per topic
 * whose settings cell is exactly that topic's retention settings, no topic kept forever, and the
 * model versions kept as the Deployment sets them.
 */
class RetentionTableTest extends ManifestsFixture {
    /** The topic settings that decide how long a record stays. */
    static final Set<String> RETENTION = Set.of("retention.ms", "cleanup.policy", "segment.ms", "max.compaction.lag.ms",
            "min.compaction.lag.ms", "delete.retention.ms", "retention.bytes");

    @Test
    void theTableIsWhatTopicsYmlTheManifestsAndTheDeploymentSay() throws IOException {
        Map<String, Map<String, String>> table = table();
        JsonNode defs = Manifests.YAML.readTree(repo.resolve("broker-config/topics.yml").toFile()).path("topics");
        List<String> v = new ArrayList<>();
        Map<String, Map<String, String>> declared = new TreeMap<>();
        for (JsonNode t : defs) {
            String name = t.path("name").asText().replace("{site}", "<site>");
            Map<String, String> want = new TreeMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = t.path("config").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                if (RETENTION.contains(e.getKey())) {
                    want.put(e.getKey(), e.getValue().asText());
                }
            }
            declared.put(name, want);
            if ("-1".equals(want.get("retention.ms")) || want.isEmpty()) {
                v.add(name + ": kept forever (no retention.ms and no compaction)");
            }
            if (!table.containsKey(name)) {
                v.add(name + ": no row in docs/operations.md's retention table");
            } else if (!new TreeMap<>(table.get(name)).equals(want)) {
                v.add(name + ": the table says " + new TreeMap<>(table.get(name)) + ", topics.yml " + want);
            }
        }
        for (String row : table.keySet()) {
            if (row.startsWith("privface.") && !declared.containsKey(row)) {
                v.add(row + ": in the table, not in topics.yml");
            }
        }
        // Every Strimzi topic's retention settings are its topics.yml entry's.
        for (KafkaTopic t : of(KafkaTopic.class)) {
            String name = t.getSpec().getTopicName();
            String template = name.matches("privface\\.[A-Za-z0-9_-]+\\.[a-z-]+") && !name.equals("privface.dead-letter")
                    ? name.replaceFirst("^privface\\.[A-Za-z0-9_-]+\\.", "privface.<site>.") : name;
            Map<String, String> have = new TreeMap<>();
            if (t.getSpec().getConfig() != null) {
                t.getSpec().getConfig().forEach((k, val) -> {
                    if (RETENTION.contains(k)) {
                        have.put(k, String.valueOf(val));
                    }
                });
            }
            if (!have.equals(declared.get(template))) {
                v.add("KafkaTopic " + name + ": " + have + ", the table and topics.yml say " + declared.get(template));
            }
        }
        Deployment rec = of(Deployment.class).stream().filter(d -> d.getMetadata().getName().equals("privface-recognizer"))
                .findFirst().orElseThrow();
        Container c = rec.getSpec().getTemplate().getSpec().getContainers().get(0);
        Map<String, String> models = table.get("model versions (`recognizer.model-dir`)");
        if (models == null || !models.equals(Map.of("RECOGNIZER_MODEL_VERSIONS_KEPT", env(c, "RECOGNIZER_MODEL_VERSIONS_KEPT")))) {
            v.add("model versions: the table says " + models + ", the Deployment RECOGNIZER_MODEL_VERSIONS_KEPT="
                    + env(c, "RECOGNIZER_MODEL_VERSIONS_KEPT"));
        }
        assertTrue(v.isEmpty(), () -> String.join("\n", v));
        assertTrue(table.size() >= declared.size() + 1, "every topic and the stores");
    }

    /** Rows of the table under "## Retention": first cell (backquotes of a plain name removed) → settings cell as a map. */
    static Map<String, Map<String, String>> table() throws IOException {
        List<String> lines = Files.readAllLines(repo.resolve("docs/operations.md"));
        int at = lines.indexOf("## Retention");
        assertTrue(at >= 0, "docs/operations.md has a '## Retention' section");
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        boolean inTable = false;
        for (String l : lines.subList(at + 1, lines.size())) {
            if (l.startsWith("## ")) {
                break;
            }
            if (!l.startsWith("|")) {
                if (inTable) {
                    break;
                }
                continue;
            }
            inTable = true;
            String[] cells = l.split("\\|", -1);
            String first = cells[1].strip();
            if (first.equals("store") || first.startsWith("---")) {
                continue;
            }
            String name = first.matches("`[^`]+`") ? first.substring(1, first.length() - 1) : first;
            Map<String, String> settings = new LinkedHashMap<>();
            String s = cells[4].strip();
            if (s.matches("`[^`]+`") && s.contains("=")) { // a checked cell; `agent.spool.*` and the like are prose
                for (String kv : s.substring(1, s.length() - 1).split(",\\s*")) {
                    String[] p = kv.split("=", 2);
                    assertEquals(2, p.length, name + ": '" + kv + "' is not key=value");
                    settings.put(p[0].strip(), p[1].strip());
                }
            }
            out.put(name, settings);
        }
        return out;
    }
}
