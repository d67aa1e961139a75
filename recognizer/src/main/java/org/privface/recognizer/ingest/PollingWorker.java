package org.privface.recognizer.ingest;

import io.micronaut.context.event.ApplicationEventListener;
import io.micronaut.runtime.server.event.ServerStartupEvent;
import jakarta.annotation.PreDestroy;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A consumer loop on its own thread, started with the server and woken up to stop. */
abstract class PollingWorker implements ApplicationEventListener<ServerStartupEvent> {
    private static final Logger LOG = LoggerFactory.getLogger(PollingWorker.class);

    private final String name;
    private volatile boolean running = true;
    private volatile Consumer<?, ?> consumer;
    private volatile Thread thread;

    PollingWorker(String name) {
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
    protected static boolean followFromBeginning(Consumer<?, ?> consumer, java.util.regex.Pattern topics,
                                                 java.util.Set<TopicPartition> assigned) {
        java.util.List<TopicPartition> all = new java.util.ArrayList<>();
        for (var e : consumer.listTopics(java.time.Duration.ofSeconds(10)).entrySet()) {
            if (topics.matcher(e.getKey()).matches()) {
                for (org.apache.kafka.common.PartitionInfo pi : e.getValue()) {
                    all.add(new TopicPartition(pi.topic(), pi.partition()));
                }
            }
        }
        if (assigned.containsAll(all)) {
            return false;
        }
        java.util.List<TopicPartition> fresh = all.stream().filter(tp -> !assigned.contains(tp)).toList();
        consumer.assign(all);
        consumer.seekToBeginning(fresh);
        assigned.addAll(fresh);
        return true;
    }

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
    void stop() throws InterruptedException {
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
