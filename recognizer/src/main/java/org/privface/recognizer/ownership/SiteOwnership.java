package org.privface.recognizer.ownership;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.regex.Pattern;

import jakarta.inject.Singleton;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.privface.recognizer.RecognizerSettings;
import org.privface.recognizer.polling.PollingWorker;
import org.privface.wire.FaceRecords;
import org.privface.wire.InvalidRecordException;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.topics.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which sites this replica owns. The key space is the sites' gallery topics: one partition per
 * site, written only by the recognizer. The replicas form one consumer group
 * ({@code <group-id>.owners}) subscribed to every gallery topic with Kafka's
 * {@link CooperativeStickyAssignor}, so each site has at most one owner at a time, owners are
 * spread evenly (partition counts within one), and a site moves only when it must. The owner
 * alone replays the site's enrollments, trains, builds and publishes its gallery, answers its
 * queries and turns its answers into results; the other replicas hold nothing of it
 * (docs/architecture.md, "Ownership, state and failover").
 *
 * <p>The owner reads its gallery partition from the beginning to the end offset captured at
 * assignment before the site is {@link #ready}: the last gallery version there, with the group
 * generation at which this replica acquired the site (its epoch), gives the next version, so
 * versions grow across owners without a wall clock ({@link #nextGalleryVersion}).
 *
 * <p>Revocation is synchronous: the rebalance callback takes the site out of the owned set, waits
 * until every worker following owned sites has let go of its partitions (and committed), then
 * tells the listeners to drop the site's state. Under the cooperative protocol a revoked
 * partition is handed to its new owner only in the rebalance after this callback returns.
 */
@Singleton
public class SiteOwnership extends PollingWorker {
    private static final Logger LOG = LoggerFactory.getLogger(SiteOwnership.class);
    /** The gallery topics of the sites {@code recognizer.sites} names (face-wire has no pattern for them). */
    static Pattern galleries(String sites) {
        return Pattern.compile("privface\\.(?:" + sites + ")\\.gallery");
    }
    /** How long a revocation waits for the workers to let go of the site's partitions. */
    private static final long RECONCILE_WAIT_MS = 20_000;

    /** What this replica knows of a site it owns. */
    static final class Owned {
        final int epoch;
        final long galleryEnd;
        volatile boolean galleryRead;
        volatile boolean enrollmentsReplayed;
        volatile FaceGallery lastGallery;
        volatile long lastVersion = -1;

        Owned(int epoch, long galleryEnd) {
            this.epoch = epoch;
            this.galleryEnd = galleryEnd;
        }
    }

    private final KafkaClientProperties kafka;
    private final RecognizerSettings settings;
    private final Map<String, Owned> owned = new ConcurrentHashMap<>();
    private final Object changeLock = new Object();
    private volatile long changes;
    private final Map<String, Long> reconciled = new ConcurrentHashMap<>();
    private final List<Consumer<String>> onAcquired = new CopyOnWriteArrayList<>();
    private final List<Consumer<String>> onReleased = new CopyOnWriteArrayList<>();
    private volatile long acquiredTotal;
    private volatile long releasedTotal;

    public SiteOwnership(KafkaClientProperties kafka, RecognizerSettings settings) {
        super("site-ownership");
        this.kafka = kafka;
        this.settings = settings;
    }

    /** Runs {@code acquired} for each site this replica comes to own, {@code released} for each it gives up. */
    public void listen(Consumer<String> acquired, Consumer<String> released) {
        onAcquired.add(acquired);
        onReleased.add(released);
    }

    /** The sites this replica owns now, sorted. */
    public Set<String> sites() {
        return new TreeSet<>(owned.keySet());
    }

    public boolean owns(String site) {
        return owned.containsKey(site);
    }

    /**
     * True once this replica owns the site, has read its gallery topic to the end captured at
     * assignment and replayed its enrollments to theirs: only then may it train or publish.
     */
    public boolean ready(String site) {
        Owned o = owned.get(site);
        return o != null && o.galleryRead && o.enrollmentsReplayed;
    }

    /** The group generation at which this replica acquired the site, or -1. */
    public int epoch(String site) {
        Owned o = owned.get(site);
        return o == null ? -1 : o.epoch;
    }

    /** The newest gallery of an owned site on its topic (read back, or published by this replica). */
    public Optional<FaceGallery> lastGallery(String site) {
        Owned o = owned.get(site);
        return o == null ? Optional.empty() : Optional.ofNullable(o.lastGallery);
    }

    /**
     * The version of the site's next gallery: above every version on its topic, and at least
     * epoch·2^32, so a deposed owner that publishes late (an older epoch) stays below the new
     * owner's versions. Empty when this replica does not own the site or has not read its topic.
     */
    public synchronized java.util.OptionalLong nextGalleryVersion(String site) {
        Owned o = owned.get(site);
        if (o == null || !o.galleryRead) {
            return java.util.OptionalLong.empty();
        }
        long v = Math.max(o.lastVersion + 1, ((long) o.epoch) << 32);
        o.lastVersion = v;
        return java.util.OptionalLong.of(v);
    }

    /** Records a gallery this replica published. */
    public void published(FaceGallery g) {
        Owned o = owned.get(g.getSiteId());
        if (o != null) {
            seen(o, g);
        }
    }

    private static synchronized void seen(Owned o, FaceGallery g) {
        if (o.lastGallery == null || g.getVersion() >= o.lastGallery.getVersion()) {
            o.lastGallery = g;
        }
        o.lastVersion = Math.max(o.lastVersion, g.getVersion());
    }

    /** The enrollment reader has read the site's enrollments up to the end offsets captured at its assignment. */
    public void enrollmentsReplayed(String site) {
        Owned o = owned.get(site);
        if (o != null && !o.enrollmentsReplayed) {
            o.enrollmentsReplayed = true;
            LOG.info("site {}: enrollments replayed (epoch {})", site, o.epoch);
        }
    }

    /** A counter that grows whenever the owned set changes; workers report the value they applied. */
    public long changes() {
        return changes;
    }

    /** A worker that follows owned sites says it has applied the owned set of {@code change}. */
    public void reconciled(String worker, long change) {
        reconciled.put(worker, change);
        synchronized (changeLock) {
            changeLock.notifyAll();
        }
    }

    /** Sites acquired and released by this replica since it started (for the fleet test and metrics). */
    public long acquiredTotal() {
        return acquiredTotal;
    }

    public long releasedTotal() {
        return releasedTotal;
    }

    private void bump() {
        synchronized (changeLock) {
            changes++;
        }
    }

    private void awaitWorkers() throws InterruptedException {
        long target = changes;
        long deadline = System.currentTimeMillis() + RECONCILE_WAIT_MS;
        synchronized (changeLock) {
            while (true) {
                List<String> behind = reconciled.entrySet().stream().filter(e -> e.getValue() < target)
                        .map(Map.Entry::getKey).toList();
                long left = deadline - System.currentTimeMillis();
                if (behind.isEmpty()) {
                    return;
                }
                if (left <= 0) {
                    LOG.warn("{} did not let go of revoked sites within {} ms", behind, RECONCILE_WAIT_MS);
                    return;
                }
                changeLock.wait(Math.min(left, 200));
            }
        }
    }

    @Override
    protected void runLoop() throws InterruptedException {
        Properties p = kafka.consumer();
        p.put(ConsumerConfig.GROUP_ID_CONFIG, settings.getGroupId() + ".owners");
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "privface-recognizer-owner-" + settings.getInstanceId());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        int session = (int) settings.getOwnershipSessionTimeout().toMillis();
        p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, session);
        p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, Math.max(100, session / 5));
        // New sites' gallery topics are found by the pattern at the next metadata refresh.
        p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, 5_000);
        Map<TopicPartition, Long> readingTo = new HashMap<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            register(consumer);
            consumer.subscribe(galleries(settings.getSites()), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    release(partitions, readingTo);
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    release(partitions, readingTo);
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    if (partitions.isEmpty()) {
                        return;
                    }
                    int epoch = consumer.groupMetadata().generationId();
                    consumer.seekToBeginning(partitions);
                    Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
                    for (TopicPartition tp : partitions) {
                        String site = Topics.siteOf(tp.topic());
                        long end = ends.getOrDefault(tp, 0L);
                        Owned o = new Owned(epoch, end);
                        o.galleryRead = end == 0;
                        owned.put(site, o);
                        readingTo.put(tp, end);
                        acquiredTotal++;
                        onAcquired.forEach(l -> l.accept(site));
                    }
                    bump();
                    LOG.info("acquired {} sites at generation {}; owning {}", partitions.size(), epoch, owned.size());
                }
            });
            while (running()) {
                for (ConsumerRecord<String, byte[]> rec : consumer.poll(Duration.ofMillis(200))) {
                    Owned o = owned.get(Topics.siteOf(rec.topic()));
                    if (o == null || rec.value() == null) {
                        continue;
                    }
                    try {
                        seen(o, FaceRecords.decodeGalleryFromTopic(rec.topic(), rec.value()));
                    } catch (InvalidRecordException | IllegalArgumentException e) {
                        LOG.warn("unreadable gallery on {}@{}: {}", rec.topic(), rec.offset(), e.getMessage());
                    }
                }
                if (!readingTo.isEmpty()) {
                    for (var it = readingTo.entrySet().iterator(); it.hasNext(); ) {
                        var e = it.next();
                        if (consumer.position(e.getKey()) >= e.getValue()) {
                            Owned o = owned.get(Topics.siteOf(e.getKey().topic()));
                            if (o != null) {
                                o.galleryRead = true;
                            }
                            it.remove();
                        }
                    }
                }
            }
        } catch (WakeupException e) {
            // stop() asked us to leave poll().
        } finally {
            // Leaving the group (or failing): nothing is owned any more.
            List<TopicPartition> all = new ArrayList<>();
            owned.keySet().forEach(s -> all.add(new TopicPartition(Topics.gallery(s), 0)));
            release(all, readingTo);
        }
    }

    private void release(Collection<TopicPartition> partitions, Map<TopicPartition, Long> readingTo) {
        List<String> sites = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            String site = Topics.siteOf(tp.topic());
            readingTo.remove(tp);
            if (owned.remove(site) != null) {
                sites.add(site);
            }
        }
        if (sites.isEmpty()) {
            return;
        }
        bump();
        try {
            awaitWorkers();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (String site : sites) {
            releasedTotal++;
            onReleased.forEach(l -> l.accept(site));
        }
        LOG.info("released {} sites; owning {}", sites.size(), owned.size());
    }

    /**
     * The partitions of {@code topicOf(site)} for every owned site, from the consumer's metadata;
     * a worker following owned sites assigns exactly these.
     */
    public static Set<TopicPartition> partitionsOf(org.apache.kafka.clients.consumer.Consumer<?, ?> consumer, Set<String> sites,
                                            java.util.function.Function<String, String> topicOf) {
        Set<TopicPartition> out = new java.util.HashSet<>();
        for (String site : sites) {
            var infos = consumer.partitionsFor(topicOf.apply(site), Duration.ofSeconds(10));
            if (infos != null) {
                infos.forEach(pi -> out.add(new TopicPartition(pi.topic(), pi.partition())));
            }
        }
        return out;
    }
}
