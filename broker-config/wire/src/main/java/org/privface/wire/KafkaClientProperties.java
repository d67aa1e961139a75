package org.privface.wire;

import java.util.Collection;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * Kafka client settings shared by every client a service creates: the services' {@code kafka.*}
 * configuration (bootstrap servers, and on a secured cluster {@code security.protocol},
 * {@code sasl.mechanism}, {@code sasl.jaas.config}, {@code ssl.*}), flattened to Kafka's own
 * property names. Only names the client type knows are kept, so unrelated keys under
 * {@code kafka} (and the spelling variants Micronaut derives from {@code KAFKA_*} environment
 * variables, such as {@code sasl.jaas-config}) never reach a client. A component applies these
 * first and its own settings after them, so the settings its guarantees rest on (acks,
 * idempotence, group id, commits) cannot be overridden from configuration.
 */
public final class KafkaClientProperties {
    private final Map<String, String> values;

    private KafkaClientProperties(Map<String, String> values) {
        this.values = Map.copyOf(values);
    }

    /**
     * From a flat map of Kafka property names to values (Micronaut's {@code kafka} prefix with
     * the prefix removed); lists become comma-separated, as Kafka expects.
     */
    public static KafkaClientProperties of(Map<String, ?> flat) {
        Map<String, String> v = new java.util.TreeMap<>();
        flat.forEach((k, val) -> {
            if (k != null && val != null) {
                v.put(k, val instanceof Collection<?> c
                        ? c.stream().map(String::valueOf).collect(Collectors.joining(","))
                        : String.valueOf(val));
            }
        });
        return new KafkaClientProperties(v);
    }

    /** Nothing but the bootstrap servers (tests, tools). */
    public static KafkaClientProperties bootstrap(String bootstrapServers) {
        return of(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers));
    }

    public Properties producer() {
        Properties p = select(ProducerConfig.configNames());
        p.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
        return p;
    }

    /** Without {@code group.id}: whether a consumer joins a group is the component's decision. */
    public Properties consumer() {
        Properties p = select(ConsumerConfig.configNames());
        p.remove(ConsumerConfig.GROUP_ID_CONFIG);
        p.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        return p;
    }

    public Properties admin() {
        return select(AdminClientConfig.configNames());
    }

    /** The bootstrap servers, or null when none is configured. */
    public String bootstrapServers() {
        return values.get(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG);
    }

    /** Property names only (values may be secrets), for logging what was applied. */
    public Set<String> names() {
        return values.keySet();
    }

    private Properties select(Set<String> known) {
        Properties p = new Properties();
        values.forEach((k, v) -> {
            if (known.contains(k)) {
                p.put(k, v);
            }
        });
        return p;
    }

    @Override
    public String toString() {
        return "KafkaClientProperties" + names(); // never the values: sasl.jaas.config holds a password
    }
}
