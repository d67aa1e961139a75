package org.privface.wire.topics;

import java.util.Map;

/** One topic as declared in broker-config/topics.yml, with the site already substituted. */
public record TopicSpec(String name, int partitions, short replicationFactor, Map<String, String> config) {
    public TopicSpec {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("topic name missing");
        }
        if (partitions < 1) {
            throw new IllegalArgumentException("topic " + name + ": partitions must be >= 1");
        }
        if (replicationFactor < 1) {
            throw new IllegalArgumentException("topic " + name + ": replicationFactor must be >= 1");
        }
        config = Map.copyOf(config);
    }
}
