package org.privface.recognizer.ingest;

import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.inject.Singleton;
import org.apache.kafka.common.TopicPartition;
import org.privface.wire.topics.Topics;

/**
 * Which query partitions this replica holds in the consumer group. The replica that holds
 * partition 0 of a site's query topic is that site's one trainer; Kafka's group protocol
 * guarantees at most one holder at a time.
 */
@Singleton
public class PartitionOwnership {
    private final Set<TopicPartition> held = ConcurrentHashMap.newKeySet();

    void assigned(Collection<TopicPartition> partitions) {
        held.addAll(partitions);
    }

    void revoked(Collection<TopicPartition> partitions) {
        held.removeAll(partitions);
    }

    /** True while this replica is the trainer for the site. */
    public boolean trains(String site) {
        return held.contains(new TopicPartition(Topics.query(site), 0));
    }
}
