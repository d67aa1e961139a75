package org.privface.recognizer.ingest;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.privface.recognizer.ownership.SiteOwnership;

/**
 * Keeps a worker's consumer assigned to the partitions of one per-site topic for exactly the
 * sites this replica owns ({@link SiteOwnership}), and tells the ownership when a change has
 * been applied, so a revoked site is let go of before its new owner takes it.
 */
final class OwnedPartitions {
    /** What one {@link #sync} changed: partitions to start reading, partitions let go of. */
    record Change(Set<TopicPartition> added, Set<TopicPartition> removed) {
        boolean isEmpty() {
            return added.isEmpty() && removed.isEmpty();
        }
    }

    /** Partitions of owned sites' topics are looked up again this often (a topic may gain partitions). */
    private static final long REFRESH_MS = 5_000;

    private final SiteOwnership ownership;
    private final String worker;
    private final Function<String, String> topicOf;
    private Set<TopicPartition> current = Set.of();
    private long applied = -1;
    private long nextRefresh;

    OwnedPartitions(SiteOwnership ownership, String worker, Function<String, String> topicOf) {
        this.ownership = ownership;
        this.worker = worker;
        this.topicOf = topicOf;
        // Registered from the start: a revocation waits for this worker from now on.
        ownership.reconciled(worker, -1);
    }

    /**
     * Applies the owned set: assigns the owned sites' partitions on {@code consumer} and returns
     * what changed. The caller must have finished (and committed) the work of the partitions it
     * had before calling this.
     */
    Change sync(Consumer<?, ?> consumer) {
        long change = ownership.changes();
        long now = System.currentTimeMillis();
        if (change == applied && now < nextRefresh) {
            ownership.reconciled(worker, change);
            return new Change(Set.of(), Set.of());
        }
        Set<TopicPartition> wanted = SiteOwnership.partitionsOf(consumer, ownership.sites(), topicOf);
        Set<TopicPartition> added = new HashSet<>(wanted);
        added.removeAll(current);
        Set<TopicPartition> removed = new HashSet<>(current);
        removed.removeAll(wanted);
        if (!added.isEmpty() || !removed.isEmpty()) {
            consumer.assign(List.copyOf(wanted));
            current = Set.copyOf(wanted);
        }
        applied = change;
        nextRefresh = now + REFRESH_MS;
        ownership.reconciled(worker, change);
        return new Change(added, removed);
    }

    Set<TopicPartition> assigned() {
        return current;
    }

    /** Stops holding anything (the worker's consumer is closing). */
    void clear() {
        current = Set.of();
        ownership.reconciled(worker, Long.MAX_VALUE);
    }
}
