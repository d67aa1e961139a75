package org.privface.agent.publish;

import java.time.Duration;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.topics.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Store-and-forward to the broker. Every record, a face's vector or its answer, is appended to
 * the {@link DiskSpool} first and removed only after the broker acknowledged it, so records
 * survive an unreachable broker and a killed agent alike (within the spool's bound; past it the
 * spool's drop policy applies and is counted). One sender thread replays the spool in order. A record that fails is sent again,
 * which can duplicate it on the broker: its event id lets the recognizer drop the copy.
 */
public final class Uplink implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Uplink.class);
    /** Records handed to the producer and not yet acknowledged; the rest wait on disk. */
    static final int MAX_IN_FLIGHT = 512;
    /** Pause before resending after a failure, so a dead broker is not hammered. */
    static final Duration RETRY_PAUSE = Duration.ofSeconds(1);

    private final FacePublisher publisher;
    private final DiskSpool spool;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final TreeSet<Long> inFlight = new TreeSet<>();
    private final TreeSet<Long> acked = new TreeSet<>();
    private long nextToSend = Long.MIN_VALUE;
    private long retryAfterNanos;
    private volatile boolean running = true;
    private volatile long lastAckNanos = System.nanoTime();
    private volatile long lastFailureNanos;
    private final AtomicLong published = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final Counter publishedCounter;
    private final Counter resent;
    private final Timer latency;
    private final Thread sender;

    public Uplink(FacePublisher publisher, DiskSpool spool, MeterRegistry metrics, String site) {
        this.publisher = publisher;
        this.spool = spool;
        this.publishedCounter = Counter.builder("privface.agent.uplink.acknowledged").tag("site", site)
                .description("records the broker acknowledged").register(metrics);
        this.resent = Counter.builder("privface.agent.uplink.resent").tag("site", site)
                .description("records sent again after a failed delivery").register(metrics);
        this.latency = Timer.builder("privface.agent.publish.latency").tag("site", site)
                .description("from capture to broker acknowledgement").publishPercentiles(0.5, 0.99)
                .register(metrics);
        Gauge.builder("privface.agent.spool.depth", spool, DiskSpool::depth).tag("site", site)
                .description("records waiting on disk for the broker").register(metrics);
        Gauge.builder("privface.agent.spool.bytes", spool, DiskSpool::bytes).tag("site", site).register(metrics);
        Gauge.builder("privface.agent.spool.dropped", spool, DiskSpool::dropped).tag("site", site)
                .description("records dropped by the spool's bound or a disk error").register(metrics);
        for (DropReason r : DropReason.values()) {
            Gauge.builder("privface.agent.spool.dropped.by.reason", spool, sp -> sp.dropped(r)).tag("site", site)
                    .tag("reason", r.name()).description("records dropped, by the reason").register(metrics);
        }
        this.sender = new Thread(this::sendLoop, "agent-uplink");
        sender.setDaemon(true);
        sender.start();
    }

    /** Spools a record for sending; false when the spool dropped it (counted there). */
    public boolean submit(PerturbedFace face) {
        String topic = face.getKind() == RecordKind.ENROLLMENT ? Topics.enrollment(face.getSiteId())
                : Topics.query(face.getSiteId());
        return submit(new SpoolEntry(topic, face.getCameraId(), FaceRecords.encode(face), face.getEventId(),
                face.getCaptureTimestamp().toEpochMilli()));
    }

    /**
     * Spools an enrollment record under its own key (its person's pseudonym, image tag and release
     * index: wire/erasure/PersonKeys), so the person's records can be tombstoned; false when the
     * spool dropped it.
     */
    public boolean submit(PerturbedFace face, String key) {
        if (face.getKind() != RecordKind.ENROLLMENT) {
            throw new IllegalArgumentException("only enrollment records are keyed by person; queries are keyed by camera");
        }
        return submit(new SpoolEntry(Topics.enrollment(face.getSiteId()), key, FaceRecords.encode(face), face.getEventId(),
                face.getCaptureTimestamp().toEpochMilli()));
    }

    /**
     * Spools an answer record for its site's answer topic, keyed by camera like the faces, so an
     * answer made while the broker is away or before a restart is sent like a vector; false when
     * the spool dropped it (counted there).
     */
    public boolean submit(FaceAnswer answer) {
        return submit(new SpoolEntry(Topics.answer(answer.getSiteId()), answer.getCameraId(), FaceRecords.encode(answer),
                answer.getEventId(), answer.getCaptureTimestamp().toEpochMilli()));
    }

    private boolean submit(SpoolEntry entry) {
        boolean stored = spool.append(entry);
        signal();
        return stored;
    }

    private void signal() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void sendLoop() {
        while (running) {
            try {
                List<DiskSpool.Spooled> batch = hasUnsent() ? spool.peek(MAX_IN_FLIGHT * 2) : List.of();
                int sent = 0;
                for (DiskSpool.Spooled s : batch) {
                    lock.lock();
                    try {
                        if (s.seq() < nextToSend) {
                            continue;
                        }
                        if (inFlight.contains(s.seq()) || acked.contains(s.seq())) {
                            nextToSend = s.seq() + 1; // already out (a resend pass is overtaking it)
                            continue;
                        }
                        if (inFlight.size() >= MAX_IN_FLIGHT || System.nanoTime() < retryAfterNanos) {
                            break;
                        }
                        inFlight.add(s.seq());
                        nextToSend = s.seq() + 1;
                    } finally {
                        lock.unlock();
                    }
                    send(s);
                    sent++;
                }
                lock.lock();
                try {
                    if (sent == 0 && running) {
                        changed.await(50, TimeUnit.MILLISECONDS);
                    }
                } finally {
                    lock.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                // send() may throw when metadata cannot be fetched (broker down); the spool keeps the record.
                LOG.warn("uplink: {}", e.toString());
                markRetry();
            }
        }
    }

    /** True when the spool holds entries not yet handed to the producer; saves a disk read per wake-up. */
    private boolean hasUnsent() {
        lock.lock();
        try {
            return spool.depth() > inFlight.size() + acked.size();
        } finally {
            lock.unlock();
        }
    }

    private void send(DiskSpool.Spooled s) {
        SpoolEntry e = s.entry();
        try {
            publisher.sendRaw(new ProducerRecord<>(e.topic(), e.key(), e.value()), (md, error) -> {
                if (error == null) {
                    acknowledged(s);
                } else {
                    failed(s, error);
                }
            });
        } catch (RuntimeException ex) {
            failed(s, ex);
        }
    }

    private void acknowledged(DiskSpool.Spooled s) {
        lastAckNanos = System.nanoTime();
        published.incrementAndGet();
        publishedCounter.increment();
        latency.record(Math.max(0, System.currentTimeMillis() - s.entry().createdAtMillis()), TimeUnit.MILLISECONDS);
        lock.lock();
        try {
            inFlight.remove(s.seq());
            acked.add(s.seq());
            // Entries go out in sequence order, so everything below the oldest entry still in
            // flight or waiting to be resent has been acknowledged (or evicted): commit up to it.
            long upTo = (inFlight.isEmpty() ? nextToSend : Math.min(inFlight.first(), nextToSend)) - 1;
            if (!acked.isEmpty() && acked.first() <= upTo) {
                spool.commit(upTo);
                acked.headSet(upTo, true).clear();
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void failed(DiskSpool.Spooled s, Throwable error) {
        failures.incrementAndGet();
        resent.increment();
        lastFailureNanos = System.nanoTime();
        lock.lock();
        try {
            inFlight.remove(s.seq());
            nextToSend = Math.min(nextToSend, s.seq());
            retryAfterNanos = System.nanoTime() + RETRY_PAUSE.toNanos();
        } finally {
            lock.unlock();
        }
        if (failures.get() % 100 == 1) {
            LOG.warn("broker did not acknowledge record {} ({}); it stays spooled and will be resent", s.entry().eventId(),
                    error.getClass().getSimpleName());
        }
    }

    private void markRetry() {
        lock.lock();
        try {
            retryAfterNanos = System.nanoTime() + RETRY_PAUSE.toNanos();
            if (!inFlight.isEmpty()) {
                nextToSend = Math.min(nextToSend, inFlight.first());
            }
        } finally {
            lock.unlock();
        }
    }

    /** Waits until every spooled record has been acknowledged; false on timeout. */
    public boolean drain(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (spool.depth() > 0) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            lock.lock();
            try {
                changed.await(50, TimeUnit.MILLISECONDS);
            } finally {
                lock.unlock();
            }
        }
        return true;
    }

    /** True when the broker acknowledged something recently or nothing is waiting. */
    public boolean brokerHealthy(Duration within) {
        return spool.depth() == 0 || System.nanoTime() - lastAckNanos < within.toNanos();
    }

    public long acknowledged() {
        return published.get();
    }

    public long failures() {
        return failures.get();
    }

    public DiskSpool spool() {
        return spool;
    }

    @Override
    public void close() {
        running = false;
        signal();
        try {
            sender.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // No flush: whatever is unacknowledged is still on the spool and is resent on the next start.
    }
}
