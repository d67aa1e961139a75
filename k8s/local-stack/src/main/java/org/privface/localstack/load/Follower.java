package org.privface.localstack.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.privface.wire.FaceRecords;
import org.privface.wire.InvalidRecordException;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.topics.Topics;

/**
 * Reads the query topics and the results topic from the beginning, outside any consumer group,
 * as an operator would: which event ids reached the broker and which were answered, and latencies
 * per sampling window. A query's latency is from its capture timestamp to when this reader received
 * it; a result's is from the query's capture to the recognizer's {@code recognizedAt}.
 */
final class Follower implements AutoCloseable {
    /** Latencies (ms) and counts since the previous {@link #take()}. */
    record Window(double[] queryMillis, double[] resultMillis, long newQueries, long newResults) {
    }

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Thread thread;
    private volatile boolean running = true;
    /** Capture time of each query, from its record or put by a producer that knows it. */
    final Map<String, Long> captureMillis = new ConcurrentHashMap<>();
    final Set<String> queries = ConcurrentHashMap.newKeySet();
    final Set<String> results = ConcurrentHashMap.newKeySet();
    /** Each answered query's predicted label ("" for unknown). */
    final Map<String, String> labels = new ConcurrentHashMap<>();
    final AtomicLong queryCopies = new AtomicLong();
    final AtomicLong resultCopies = new AtomicLong();
    final AtomicLong unreadable = new AtomicLong();
    private final Map<String, Long> resultWithoutQuery = new ConcurrentHashMap<>();
    private List<Double> queryWindow = new ArrayList<>();
    private List<Double> resultWindow = new ArrayList<>();
    private long newQueries;
    private long newResults;

    /**
     * @param queryTopics query topics to follow (none when the caller puts capture times itself)
     * @param maxRun      the reader stops by itself after this, whatever happens
     */
    Follower(String bootstrap, List<String> queryTopics, Duration maxRun) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "load-follower");
        consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> tps = new ArrayList<>();
        List<String> topics = new ArrayList<>(queryTopics);
        topics.add(Topics.RESULTS);
        for (String t : topics) {
            consumer.partitionsFor(t, Duration.ofSeconds(10)).forEach(pi -> tps.add(new TopicPartition(t, pi.partition())));
        }
        consumer.assign(tps);
        consumer.seekToBeginning(tps);
        long deadline = System.nanoTime() + maxRun.toNanos();
        thread = new Thread(() -> run(deadline), "load-follower");
        thread.setDaemon(true);
        thread.start();
    }

    private void run(long deadline) {
        try {
            while (running && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    long now = System.currentTimeMillis();
                    try {
                        if (r.topic().equals(Topics.RESULTS)) {
                            result(FaceRecords.decodeResult(r.value()), now);
                        } else {
                            query(FaceRecords.decodeFace(r.value()), now);
                        }
                    } catch (InvalidRecordException e) {
                        unreadable.incrementAndGet();
                    }
                }
            }
        } catch (WakeupException e) {
            // close()
        }
    }

    private void query(PerturbedFace f, long now) {
        String id = f.getEventId();
        queryCopies.incrementAndGet();
        if (!queries.add(id)) {
            return;
        }
        long captured = f.getCaptureTimestamp().toEpochMilli();
        captureMillis.put(id, captured);
        Long answeredAt = resultWithoutQuery.remove(id);
        synchronized (this) {
            newQueries++;
            queryWindow.add((double) (now - captured));
            if (answeredAt != null) {
                resultWindow.add((double) (answeredAt - captured));
            }
        }
    }

    private void result(RecognitionResult r, long now) {
        String id = r.getEventId();
        resultCopies.incrementAndGet();
        if (!results.add(id)) {
            return;
        }
        labels.put(id, r.getPredictedLabel() == null ? "" : r.getPredictedLabel());
        Long captured = captureMillis.get(id);
        long at = r.getRecognizedAt().toEpochMilli();
        synchronized (this) {
            newResults++;
            if (captured != null) {
                resultWindow.add((double) (at - captured));
            } else {
                resultWithoutQuery.put(id, at);
            }
        }
    }

    synchronized Window take() {
        Window w = new Window(queryWindow.stream().mapToDouble(Double::doubleValue).toArray(),
                resultWindow.stream().mapToDouble(Double::doubleValue).toArray(), newQueries, newResults);
        queryWindow = new ArrayList<>();
        resultWindow = new ArrayList<>();
        newQueries = 0;
        newResults = 0;
        return w;
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        consumer.wakeup();
        thread.join(10_000);
        consumer.close(Duration.ofSeconds(5));
    }
}
