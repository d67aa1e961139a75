package org.privface.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import io.fabric8.openshift.api.model.monitoring.v1.Rule;
import io.fabric8.openshift.api.model.monitoring.v1.RuleGroup;
import io.strimzi.api.kafka.model.kafka.Kafka;
import org.junit.jupiter.api.Test;

/**
 * Fleet observability: the Kafka CR exports broker metrics and runs Kafka Exporter; every alert and
 * every dashboard panel parses as PromQL; every metric they name is exported by some endpoint
 * Prometheus scrapes (the agents' and recognizer's meters as Micrometer names them, the brokers'
 * JMX rules applied to documented MBeans, Kafka Exporter, the Strimzi operator); and the rules
 * cover what issue 42 asks for.
 */
class MonitoringTest extends ManifestsFixture {

    @Test
    void theKafkaClusterExportsBrokerMetricsAndConsumerLag() {
        Kafka kafka = of(Kafka.class).get(0);
        var mc = kafka.getSpec().getKafka().getMetricsConfig();
        assertTrue(mc instanceof io.strimzi.api.kafka.model.common.metrics.JmxPrometheusExporterMetrics, "metricsConfig: " + mc);
        var ref = ((io.strimzi.api.kafka.model.common.metrics.JmxPrometheusExporterMetrics) mc).getValueFrom().getConfigMapKeyRef();
        var cm = of(io.fabric8.kubernetes.api.model.ConfigMap.class).stream()
                .filter(c -> c.getMetadata().getName().equals(ref.getName())).findFirst()
                .orElseThrow(() -> new AssertionError("no ConfigMap " + ref.getName()));
        assertTrue(cm.getData().containsKey(ref.getKey()), "the metrics ConfigMap holds " + ref.getKey());
        assertTrue(kafka.getSpec().getKafkaExporter() != null, "Kafka Exporter (consumer lag)");
        assertTrue("privface.north.query".matches(kafka.getSpec().getKafkaExporter().getTopicRegex()), "exporter topics");
    }

    /** Every metric name some scraped endpoint exports. */
    static Set<String> exported() throws IOException {
        Set<String> out = new TreeSet<>();
        JsonNode third = Manifests.YAML.readTree(MonitoringTest.class.getResource("/third-party-metrics.yaml"));
        third.path("kafka-exporter").forEach(n -> out.add(n.asText()));
        third.path("strimzi-cluster-operator").forEach(n -> out.add(n.asText()));
        JsonNode cm = Manifests.YAML.readTree(k8s.resolve("base/kafka/kafka-metrics.yaml").toFile());
        JsonNode rules = Manifests.YAML.readTree(cm.path("data").path("kafka-metrics-config.yml").asText());
        for (JsonNode mbean : third.path("kafka-mbeans")) {
            String name = jmxName(rules, mbean.asText());
            assertTrue(name != null, "no JMX exporter rule names " + mbean.asText());
            out.add(name);
        }
        out.addAll(privfaceMeters());
        return out;
    }

    /** What the JMX exporter names an MBean attribute: the first rule whose pattern matches, its name filled in. */
    static String jmxName(JsonNode config, String mbean) {
        for (JsonNode r : config.path("rules")) {
            Matcher m = Pattern.compile(r.path("pattern").asText()).matcher(mbean);
            if (m.matches()) {
                String name = r.path("name").asText();
                for (int g = m.groupCount(); g >= 1; g--) {
                    name = name.replace("$" + g, m.group(g));
                }
                name = name.replaceAll("[^a-zA-Z0-9:_]", "_");
                return config.path("lowercaseOutputName").asBoolean() ? name.toLowerCase() : name;
            }
        }
        return null;
    }

    /**
     * The agent's and recognizer's meters, named as Micrometer's Prometheus convention exports them:
     * dots to underscores, the base unit appended, {@code _total} on counters, {@code _count/_sum/_max}
     * on timers (seconds) and summaries. RecognizerServiceTest scrapes the fleet gauges for real.
     */
    static Set<String> privfaceMeters() throws IOException {
        Set<String> out = new TreeSet<>();
        Pattern builder = Pattern.compile("(Counter|Gauge|Timer|DistributionSummary)\\.builder\\(\"([a-z.]+)\"");
        Pattern shortcut = Pattern.compile("\\.(counter|gauge)\\(\"([a-z.]+)\"");
        Pattern fleet = Pattern.compile("gauge\\(registry, \"([a-z.]+)\", (?:null|\"([a-z]+)\")");
        for (String module : List.of("agent", "recognizer")) {
            try (Stream<Path> s = Files.walk(repo.resolve(module + "/src/main/java"))) {
                for (Path f : s.filter(p -> p.toString().endsWith(".java")).toList()) {
                    String src = Files.readString(f);
                    Matcher m = builder.matcher(src);
                    while (m.find()) {
                        String base = m.group(2).replace('.', '_');
                        String unit = baseUnitAfter(src, m.end());
                        switch (m.group(1)) {
                            case "Counter" -> out.add(base + "_total");
                            case "Gauge" -> out.add(unit == null || base.endsWith("_" + unit) ? base : base + "_" + unit);
                            case "Timer" -> List.of("_count", "_sum", "_max").forEach(x -> out.add(base + "_seconds" + x));
                            default -> List.of("_count", "_sum", "_max").forEach(x -> out.add(base + x));
                        }
                    }
                    m = shortcut.matcher(src);
                    while (m.find()) {
                        String base = m.group(2).replace('.', '_');
                        out.add(m.group(1).equals("counter") ? base + "_total" : base);
                    }
                    m = fleet.matcher(src);
                    while (m.find()) {
                        String base = m.group(1).replace('.', '_');
                        out.add(m.group(2) == null ? base : base + "_" + m.group(2));
                    }
                }
            }
        }
        return out;
    }

    /** A .baseUnit("...") in the same builder chain (before its register). */
    private static String baseUnitAfter(String src, int from) {
        int end = src.indexOf("register(", from);
        String chain = end < 0 ? "" : src.substring(from, end);
        Matcher u = Pattern.compile("\\.baseUnit\\(\"([a-z]+)\"\\)").matcher(chain);
        if (u.find()) {
            return u.group(1);
        }
        return chain.contains("BaseUnits.BYTES") ? "bytes" : null;
    }

    /** alert name → expression, for every rule of every PrometheusRule; and each dashboard panel's targets. */
    static Map<String, String> expressions() throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        for (PrometheusRule pr : of(PrometheusRule.class)) {
            for (RuleGroup g : pr.getSpec().getGroups()) {
                for (Rule r : g.getRules()) {
                    out.put(pr.getMetadata().getName() + "/" + (r.getAlert() != null ? r.getAlert() : r.getRecord()),
                            r.getExpr().getStrVal());
                }
            }
        }
        try (Stream<Path> s = Files.walk(k8s.resolve("monitoring/dashboards"))) {
            for (Path f : s.filter(p -> p.toString().endsWith(".json")).toList()) {
                JsonNode d = new com.fasterxml.jackson.databind.ObjectMapper().readTree(f.toFile());
                for (JsonNode p : d.path("panels")) {
                    for (JsonNode t : p.path("targets")) {
                        out.put(f.getFileName() + "/" + p.path("title").asText() + "/" + t.path("refId").asText(), t.path("expr").asText());
                    }
                }
            }
        }
        return out;
    }

    @Test
    void everyRuleAndPanelParsesAndNamesOnlyExportedMetrics() throws IOException {
        Set<String> exported = exported();
        List<String> v = new ArrayList<>();
        Map<String, String> exprs = expressions();
        assertTrue(exprs.size() >= 20, "rules and panels: " + exprs.keySet());
        for (Map.Entry<String, String> e : exprs.entrySet()) {
            try {
                Set<String> names = PromQl.metrics(e.getValue());
                if (names.isEmpty()) {
                    v.add(e.getKey() + ": selects no metric");
                }
                for (String n : names) {
                    if (!exported.contains(n)) {
                        v.add(e.getKey() + ": " + n + " is exported by no endpoint");
                    }
                }
            } catch (IllegalArgumentException ex) {
                v.add(e.getKey() + ": " + ex.getMessage());
            }
        }
        assertTrue(v.isEmpty(), () -> String.join("\n", v) + "\nexported: " + exported);
    }

    @Test
    void theRulesCoverWhatAFleetOperatorWatches() throws IOException {
        Set<String> named = new TreeSet<>();
        expressions().forEach((k, e) -> {
            if (k.startsWith("privface-fleet/")) {
                named.addAll(PromQl.metrics(e));
            }
        });
        for (String m : List.of("kafka_server_replicamanager_underreplicatedpartitions",
                "kafka_controller_kafkacontroller_offlinepartitionscount", "kafka_consumergroup_lag",
                "strimzi_certificate_expiration_timestamp_ms", "privface_gateway_last_report_timestamp_seconds",
                "privface_gateway_spool_depth", "privface_model_enrollments_pending", "privface_gallery_enrollments_pending",
                "privface_gallery_calibrated_fpir", "privface_recognizer_answers_unknown_total")) {
            assertTrue(named.contains(m), "no alert on " + m);
        }
    }

    /** The parser is a check only if it refuses what Prometheus refuses, and reads what it reads. */
    @Test
    void theParserRefusesBrokenPromQl() {
        assertEquals(Set.of("a_total", "b"), PromQl.metrics(
                "sum by (site) (rate(a_total{x=~\"p\\\\..+\",y!=\"z\"}[5m] offset 1h)) / on(site) group_left b > bool 0.5 and time() - 3 ^ 2 ^ 1"));
        assertEquals(Set.of("m"), PromQl.metrics("max_over_time(m[1h:5m]) unless -m"));
        for (String bad : List.of("sum(rate(a[5m])", "rate(a[5x])", "a >", "frobnicate(a)", "a{x=1}", "a{x=~\"(\"}",
                "sum by site (a)", "(a + )", "a[5m", "a b")) {
            assertThrows(RuntimeException.class, () -> PromQl.metrics(bad), bad);
        }
    }
}
