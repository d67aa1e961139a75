package org.privface.k8s;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.cfg.MapperConfig;
import com.fasterxml.jackson.databind.introspect.Annotated;
import com.fasterxml.jackson.databind.introspect.JacksonAnnotationIntrospector;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.strimzi.api.kafka.model.user.KafkaUser;

/**
 * Reads the manifests under k8s/ and binds each document to the Strimzi or fabric8 model class of
 * its kind, strictly: a field the model does not know fails the binding.
 *
 * <p>Both model libraries keep unknown fields in an {@code additionalProperties} map through
 * {@code @JsonAnySetter}, which would make {@code FAIL_ON_UNKNOWN_PROPERTIES} a no-op. The strict
 * mapper's introspector therefore ignores any-setters (and {@code ignoreUnknown}), so Jackson sees
 * an unknown field as unknown. It also refuses to turn a YAML number or boolean into a string
 * field, or a quoted string into a number or boolean field, as the API server does
 * ({@code value: 8081} in an EnvVar, {@code true} unquoted in a nodeSelector,
 * {@code containerPort: "8081"}), and an enum value the model does not know.
 */
final class Manifests {
    /** One kind: its model class and the only apiVersion these manifests may use for it. */
    record Kind(Class<? extends HasMetadata> model, String apiVersion) {}

    static final Map<String, Kind> KINDS = Map.ofEntries(
            Map.entry("Kafka", new Kind(Kafka.class, "kafka.strimzi.io/v1beta2")),
            Map.entry("KafkaNodePool", new Kind(KafkaNodePool.class, "kafka.strimzi.io/v1beta2")),
            Map.entry("KafkaTopic", new Kind(KafkaTopic.class, "kafka.strimzi.io/v1beta2")),
            Map.entry("KafkaUser", new Kind(KafkaUser.class, "kafka.strimzi.io/v1beta2")),
            Map.entry("Deployment", new Kind(Deployment.class, "apps/v1")),
            Map.entry("StatefulSet", new Kind(StatefulSet.class, "apps/v1")),
            Map.entry("DaemonSet", new Kind(DaemonSet.class, "apps/v1")),
            Map.entry("Service", new Kind(Service.class, "v1")),
            Map.entry("ConfigMap", new Kind(ConfigMap.class, "v1")),
            Map.entry("Secret", new Kind(Secret.class, "v1")),
            Map.entry("PersistentVolumeClaim", new Kind(PersistentVolumeClaim.class, "v1")),
            Map.entry("ServiceAccount", new Kind(ServiceAccount.class, "v1")),
            Map.entry("Namespace", new Kind(Namespace.class, "v1")),
            Map.entry("HorizontalPodAutoscaler", new Kind(HorizontalPodAutoscaler.class, "autoscaling/v2")),
            Map.entry("NetworkPolicy", new Kind(NetworkPolicy.class, "networking.k8s.io/v1")),
            Map.entry("PodMonitor", new Kind(io.fabric8.openshift.api.model.monitoring.v1.PodMonitor.class, "monitoring.coreos.com/v1")),
            Map.entry("PrometheusRule", new Kind(io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule.class, "monitoring.coreos.com/v1")));

    /** One YAML document of a file, as a tree and bound to its model. */
    record Doc(Path file, int index, JsonNode tree, HasMetadata model) {
        String kind() {
            return tree.path("kind").asText();
        }

        String name() {
            return tree.path("metadata").path("name").asText();
        }

        String where() {
            return file + " #" + index + " (" + kind() + " " + name() + ")";
        }

        @SuppressWarnings("unchecked")
        <T> T as(Class<T> type) {
            return (T) model;
        }
    }

    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
    static final ObjectMapper STRICT = strictMapper();

    private Manifests() {}

    private static ObjectMapper strictMapper() {
        ObjectMapper m = new ObjectMapper(new YAMLFactory());
        m.setAnnotationIntrospector(new JacksonAnnotationIntrospector() {
            @Override
            public Boolean hasAnySetter(Annotated a) {
                return Boolean.FALSE;
            }

            @Override
            public JsonIgnoreProperties.Value findPropertyIgnoralByName(MapperConfig<?> config, Annotated a) {
                return super.findPropertyIgnoralByName(config, a).withoutIgnoreUnknown();
            }
        });
        m.enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        m.coercionConfigFor(LogicalType.Textual)
                .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
        for (LogicalType t : List.of(LogicalType.Integer, LogicalType.Float, LogicalType.Boolean)) {
            m.coercionConfigFor(t).setCoercion(CoercionInputShape.String, CoercionAction.Fail);
        }
        m.registerModule(new SimpleModule("unknown-enum-values").setDeserializerModifier(new BeanDeserializerModifier() {
            @Override
            public JsonDeserializer<?> modifyEnumDeserializer(DeserializationConfig config, JavaType type,
                                                              BeanDescription beanDesc, JsonDeserializer<?> deserializer) {
                return new KnownEnumValue(deserializer, type.getRawClass());
            }
        }));
        return m;
    }

    /**
     * Strimzi's enums ({@code type: internal}, ACL operations, node roles) are read by a
     * {@code forValue} factory that answers null for a value it does not know; the API server's
     * CRD schema would refuse it, so this does too.
     */
    private static final class KnownEnumValue extends DelegatingDeserializer {
        private final Class<?> type;

        KnownEnumValue(JsonDeserializer<?> delegate, Class<?> type) {
            super(delegate);
            this.type = type;
        }

        @Override
        protected JsonDeserializer<?> newDelegatingInstance(JsonDeserializer<?> newDelegatee) {
            return new KnownEnumValue(newDelegatee, type);
        }

        @Override
        public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            String text = p.currentToken() == JsonToken.VALUE_NULL ? null : p.getText();
            Object v = super.deserialize(p, ctxt);
            if (v == null && text != null) {
                throw InvalidFormatException.from(p, "'" + text + "' is no value of " + type.getSimpleName(), text, type);
            }
            return v;
        }
    }

    /** The k8s/ folder of the repository. */
    static Path root() {
        String configured = System.getProperty("privface.root");
        Path repo = configured != null ? Path.of(configured) : Path.of("").toAbsolutePath().getParent();
        Path k8s = repo.resolve("k8s").normalize().toAbsolutePath();
        if (!Files.isDirectory(k8s.resolve("base"))) {
            throw new IllegalStateException("no k8s/base under " + repo);
        }
        return k8s;
    }

    /**
     * Every YAML file under k8s/, leaving out the Maven modules' own folders (this one's and local-stack/)
     * and the site list (sites.yaml, the generator's input, checked by FleetTest).
     */
    static List<Path> yamlFiles(Path k8s) {
        try (Stream<Path> s = Files.walk(k8s)) {
            return s.filter(Files::isRegularFile)
                    .filter(p -> !k8s.relativize(p).startsWith("target") && !k8s.relativize(p).startsWith("src")
                            && !k8s.relativize(p).startsWith("local-stack") && !k8s.relativize(p).toString().equals("sites.yaml"))
                    .filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".yml"))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static boolean isKustomization(Path file) {
        String n = file.getFileName().toString();
        return n.equals("kustomization.yaml") || n.equals("kustomization.yml") || n.equals("Kustomization");
    }

    /** The non-empty documents of a multi-document YAML text. */
    static List<JsonNode> trees(String yaml) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        try (MappingIterator<JsonNode> it = YAML.readerFor(JsonNode.class).readValues(yaml)) {
            while (it.hasNext()) {
                JsonNode n = it.next();
                if (n != null && !n.isNull() && !n.isMissingNode() && !(n.isObject() && n.isEmpty())) {
                    out.add(n);
                }
            }
        }
        return out;
    }

    /** Reads and binds every document of a manifest file; any problem is an exception naming the document. */
    static List<Doc> load(Path file) throws IOException {
        return load(file, Files.readString(file));
    }

    static List<Doc> load(Path file, String yaml) throws IOException {
        List<Doc> docs = new ArrayList<>();
        List<JsonNode> trees = trees(yaml);
        for (int i = 0; i < trees.size(); i++) {
            docs.add(bind(file, i, trees.get(i)));
        }
        return docs;
    }

    static Doc bind(Path file, int index, JsonNode tree) {
        String where = file + " #" + index;
        if (!tree.isObject()) {
            throw new IllegalArgumentException(where + ": not a mapping");
        }
        String apiVersion = text(tree, "apiVersion", where);
        String kind = text(tree, "kind", where);
        String name = text(tree.path("metadata"), "name", where + " metadata");
        Kind k = KINDS.get(kind);
        if (k == null) {
            throw new IllegalArgumentException(where + ": kind " + kind + " has no model here; add it to Manifests.KINDS");
        }
        if (!k.apiVersion().equals(apiVersion)) {
            throw new IllegalArgumentException(where + ": " + kind + " " + name + " has apiVersion " + apiVersion
                    + ", expected " + k.apiVersion());
        }
        HasMetadata model;
        try {
            model = STRICT.treeToValue(tree, k.model());
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException(where + ": " + kind + " " + name + " does not bind to "
                    + k.model().getSimpleName() + ": " + e.getOriginalMessage() + " at " + path(e), e);
        }
        return new Doc(file, index, tree, model);
    }

    private static String path(IOException e) {
        if (e instanceof com.fasterxml.jackson.databind.JsonMappingException jm) {
            return jm.getPathReference();
        }
        return "?";
    }

    private static String text(JsonNode node, String field, String where) {
        JsonNode v = node.get(field);
        if (v == null || !v.isTextual() || v.asText().isBlank()) {
            throw new IllegalArgumentException(where + ": missing " + field);
        }
        return v.asText();
    }
}
