package org.privface.agent.publish;

import java.util.Arrays;
import java.util.Objects;

/**
 * One spooled Kafka record: an already-perturbed, encoded value, never image data. The value array
 * is not copied; callers must not change it after appending.
 *
 * @param key may be null (Kafka's default partitioning then applies)
 * @param eventId the record's event id, which lets consumers drop the duplicates that
 *     at-least-once replay can produce
 */
public record SpoolEntry(String topic, String key, byte[] value, String eventId, long createdAtMillis) {

    public SpoolEntry {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(eventId, "eventId");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SpoolEntry e
                && createdAtMillis == e.createdAtMillis
                && topic.equals(e.topic)
                && Objects.equals(key, e.key)
                && eventId.equals(e.eventId)
                && Arrays.equals(value, e.value);
    }

    @Override
    public int hashCode() {
        return Objects.hash(topic, key, eventId, createdAtMillis) * 31 + Arrays.hashCode(value);
    }

    /** Leaves the value out: logs get its size only. */
    @Override
    public String toString() {
        return "SpoolEntry[topic=" + topic + ", key=" + key + ", eventId=" + eventId
                + ", createdAtMillis=" + createdAtMillis + ", value=" + value.length + " bytes]";
    }
}
