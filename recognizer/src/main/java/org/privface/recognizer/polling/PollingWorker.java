package org.privface.recognizer.polling;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Pattern;

import io.micronaut.context.event.ApplicationEventListener;
import io.micronaut.runtime.server.event.ServerStartupEvent;
import jakarta.annotation.PreDestroy;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.privface.wire.KafkaClientProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A consumer loop on its own thread, started with the server and woken up to stop. Its own package,
 * beneath ingest and ownership, because both run such loops.
 */
public abstract class PollingWorker implements ApplicationEventListener<ServerStartupEvent> {
    private static final Logger LOG = LoggerFactory.getLogger(PollingWorker.class);

    private final String name;
    private volatile boolean running = true;
    private volatile Consumer<?, ?> consumer;
    private volatile Thread thread;

    protected PollingWorker(String name) {
        this.name = name;
    }

    protected abstract void runLoop() throws Exception;

    protected final void register(Consumer<?, ?> c) {
        this.consumer = c;
    }

    /**
     * Assigns every partition of every topic matching {@code topics}, new ones from their
     * beginning; {@code assigned} is the caller's record of what it follows. Assignment, not a
     * group, so every replica reads everything and needs no group ACL.
     *
     * @return whether a partition was added
     */
    protected static boolean followFromBeginning(Consumer<?, ?> consumer, Pattern topics,
                                                 Set<TopicPartition> assigned) {
        List<TopicPartition> all = new ArrayList<>();
        for (var e : consumer.listTopics(Duration.ofSeconds(10)).entrySet()) {
            if (topics.matcher(e.getKey()).matches()) {
                for (PartitionInfo pi : e.getValue()) {
                    all.add(new TopicPartition(pi.topic(), pi.partition()));
                }
            }
        }
        if (assigned.containsAll(all)) {
            return false;
        }
        List<TopicPartition> fresh = all.stream().filter(tp -> !assigned.contains(tp)).toList();
        consumer.assign(all);
        consumer.seekToBeginning(fresh);
        assigned.addAll(fresh);
        return true;
    }

    /**
     * The whole loop of a reader that follows every topic matching {@code topics} from its
     * beginning (see {@link #followFromBeginning}), refreshing the topic list every 2 s, and
     * hands each record to {@code handle}; committed transactions only.
     */
    protected final void readEverything(KafkaClientProperties kafka, Pattern topics,
                                        String clientId, String what,
                                        java.util.function.Consumer<ConsumerRecord<String, byte[]>> handle)
            throws InterruptedException {
        Properties p = kafka.consumer();
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        try (var consumer = new KafkaConsumer<>(p,
                new StringDeserializer(),
                new ByteArrayDeserializer())) {
            register(consumer);
            Set<TopicPartition> assigned = new HashSet<>();
            long nextRefresh = 0;
            while (running()) {
                if (System.currentTimeMillis() >= nextRefresh) {
                    if (followFromBeginning(consumer, topics, assigned)) {
                        LOG.info("following {} {} partitions", assigned.size(), what);
                    }
                    nextRefresh = System.currentTimeMillis() + REFRESH_MS;
                }
                if (assigned.isEmpty()) {
                    Thread.sleep(200);
                    continue;
                }
                for (var rec : consumer.poll(Duration.ofMillis(200))) {
                    handle.accept(rec);
                }
            }
        } catch (WakeupException e) {
            // stop() asked us to leave poll().
        }
    }

    private static final long REFRESH_MS = 2_000;

    protected final boolean running() {
        return running;
    }

    @Override
    public void onApplicationEvent(ServerStartupEvent event) {
        thread = new Thread(() -> {
            while (running) {
                try {
                    runLoop();
                } catch (InterruptedException e) {
                    return;
                } catch (Exception e) {
                    // Broker outages and the like: log, back off, reconnect. Never exit on bad input.
                    LOG.error("{} failed, restarting in 1 s: {}", name, e.toString());
                    try {
                        Thread.sleep(1000);
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }
        }, name);
        thread.start();
    }

    @PreDestroy
    public void stop() throws InterruptedException {
        running = false;
        Consumer<?, ?> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        Thread t = thread;
        if (t != null) {
            t.join(10_000);
        }
    }
}
