package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.privface.localstack.FaultKit.awaitTrue;
import static org.privface.localstack.FaultKit.json;
import static org.privface.localstack.FaultKit.number;
import static org.privface.localstack.FaultKit.quietly;
import static org.privface.localstack.FaultKit.seconds;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.privface.agent.publish.DiskSpool;
import org.privface.agent.publish.DropPolicy;
import org.privface.broker.KafkaServerProcess;
import org.privface.broker.ManagedProcess;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.topics.Topics;

/**
 * Issue 10's crash faults, against one real Kafka broker process: the agent and the recognizer, each
 * as its own JVM, killed with SIGKILL at the worst moments and started again on the same disk.
 *
 * <ul>
 *   <li>The agent, streaming from a live MJPEG camera, is killed while records wait in its spool
 *   for a broker that hangs (frozen with SIGSTOP). Restarted on the same data directory, it sends
 *   what the spool held; every release reaches the topic, and a record that appears twice is the
 *   same record (same event id, same bytes).</li>
 *   <li>The recognizer is killed in the middle of training, and again while it answers a stream of
 *   queries. The first restart trains again from the replayed enrollments; the second serves the
 *   stored model once it owns the site again (issue 41), without retraining, and resumes from the committed offsets. Every query gets a result.</li>
 * </ul>
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class CrashRecoveryTest extends BrokerProcessTest {

    private static final String TOKEN = "crash-test-token";
    private static final Pattern REPLAYING = Pattern.compile("spool holds (\\d+) records from before");

    @Override
    protected String name() {
        return "crash-recovery";
    }

    @Override
    protected void assumeReady() {
        for (String module : List.of("agent", "recognizer")) {
            assumeTrue(Files.isRegularFile(root.resolve(module + "/target/runtime.classpath")),
                    module + "/target/runtime.classpath is missing: package the project first (mvn package -DskipTests)");
        }
    }

    // ------------------------------------------------------------------------------------ agent

    @Test
    void agentKilledWithRecordsSpooledDeliversThemAfterItsRestart() throws Exception {
        long t0 = System.nanoTime();
        String site = "crash-agent";
        String camera = "door";
        applyTopics(site);
        Path data = work.resolve("agent-data");
        Path ledger1 = work.resolve("agent-ledger-1.csv");
        Path ledger2 = work.resolve("agent-ledger-2.csv");
        boolean ok = false;
        ManagedProcess agent = null;
        boolean frozen = false;
        try (MjpegFeed feed = new MjpegFeed(synthetic.resolve("query"), 20)) {
            // 1. The agent streams with the broker up.
            int port1 = KafkaServerProcess.freePort();
            agent = startAgent("agent-1", site, camera, feed.url(), port1, data, ledger1);
            String base1 = "http://127.0.0.1:" + port1;
            ManagedProcess first = agent;
            awaitTrue("a first acknowledged record from agent-1", Duration.ofSeconds(90), quietly(() -> {
                assertTrue(first.alive(), "agent-1 exited; see " + first.log());
                return number(json(base1 + "/control/status", TOKEN), "uplink.acknowledged") > 0;
            }));
            double firstAck = seconds(t0);
            Thread.sleep(4_000);

            // 2. The broker hangs (SIGSTOP: connections stay open, nothing is answered); the spool grows.
            FaultKit.signal(kafka.pid(), "STOP");
            frozen = true;
            Thread.sleep(3_000);
            Map<String, Object> beforeKill = json(base1 + "/control/status", TOKEN);
            long releasesCounted1 = number(beforeKill, "cameras." + camera + ".releases");
            long acked1 = number(beforeKill, "uplink.acknowledged");
            long depthReported = number(beforeKill, "uplink.spoolDepth");
            assertTrue(depthReported >= 20, "records waiting in the spool for the hung broker: " + depthReported);

            // 3. SIGKILL: no shutdown hook, no flush, no checkpoint.
            agent.kill();
            agent = null;
            List<String> spooled = new ArrayList<>();
            long corruptions;
            try (DiskSpool s = DiskSpool.open(data.resolve("spool"), 256L << 20, DropPolicy.DROP_OLDEST)) {
                s.peek(100_000).forEach(e -> spooled.add(e.entry().eventId()));
                corruptions = s.recoveredCorruptions();
            }
            assertTrue(spooled.size() >= depthReported, "the spool kept what it reported before the kill: "
                    + spooled.size() + " < " + depthReported);
            FaultKit.signal(kafka.pid(), "CONT");
            frozen = false;

            // 4. Restarted on the same data directory: the spool goes out first.
            long restartAt = System.nanoTime();
            int port2 = KafkaServerProcess.freePort();
            agent = startAgent("agent-2", site, camera, feed.url(), port2, data, ledger2);
            String base2 = "http://127.0.0.1:" + port2;
            ManagedProcess second = agent;
            awaitTrue("agent-2 sending the spooled records", Duration.ofSeconds(90), quietly(() -> {
                assertTrue(second.alive(), "agent-2 exited; see " + second.log());
                return number(json(base2 + "/control/status", TOKEN), "uplink.acknowledged") >= spooled.size();
            }));
            double replayedAfter = seconds(restartAt);
            Matcher m = REPLAYING.matcher(Files.readString(agent.log()));
            assertTrue(m.find(), "agent-2 says it replays its spool; see " + agent.log());
            assertEquals(spooled.size(), Integer.parseInt(m.group(1)), "agent-2 found what the spool held after the kill");
            Thread.sleep(3_000);

            // 5. The camera goes away; agent-2 drains and stops cleanly (SIGTERM), flushing its ledger.
            feed.close();
            FaultKit.awaitStable("agent-2's releases after the camera went away", Duration.ofSeconds(30), () -> {
                try {
                    return number(json(base2 + "/control/status", TOKEN), "cameras." + camera + ".releases");
                } catch (Exception e) {
                    return -1;
                }
            });
            awaitTrue("agent-2's spool empty", Duration.ofSeconds(45),
                    quietly(() -> number(json(base2 + "/control/status", TOKEN), "uplink.spoolDepth") == 0));
            Map<String, Object> end2 = json(base2 + "/control/status", TOKEN);
            long releases2 = number(end2, "cameras." + camera + ".releases");
            long dropped2 = number(end2, "uplink.spoolDropped");
            agent.close();
            agent = null;

            // 6. What the broker holds.
            Map<String, List<byte[]>> copies = new HashMap<>();
            long records = 0;
            for (ConsumerRecord<String, byte[]> r : FaultKit.readAll(bootstrap, List.of(Topics.query(site)), Duration.ofSeconds(30))) {
                PerturbedFace f = FaceRecords.decodeFace(r.value());
                assertEquals(camera, r.key(), "keyed by camera");
                copies.computeIfAbsent(f.getEventId(), k -> new ArrayList<>()).add(r.value());
                records++;
            }
            long duplicates = records - copies.size();
            for (Map.Entry<String, List<byte[]>> e : copies.entrySet()) {
                for (byte[] copy : e.getValue()) {
                    assertArrayEquals(e.getValue().get(0), copy, "two different records under event id " + e.getKey());
                }
            }
            Set<ByteBuffer> payloads = new HashSet<>();
            copies.values().forEach(c -> payloads.add(ByteBuffer.wrap(c.get(0))));
            assertEquals(copies.size(), payloads.size(), "a record repeated under another event id");

            List<String> lines1 = ids(ledger1);
            List<String> lines2 = ids(ledger2);
            assertEquals(releases2, lines2.size(), "agent-2's ledger lists each of its releases");
            Set<String> run1 = new HashSet<>(copies.keySet());
            lines2.forEach(run1::remove);
            Set<String> made = new LinkedHashSet<>(lines1);
            made.addAll(spooled);
            made.addAll(lines2);
            Set<String> lost = new LinkedHashSet<>(made);
            lost.removeAll(copies.keySet());
            long spooledDelivered = spooled.stream().filter(copies::containsKey).count();

            System.out.printf("CRASH-RECOVERY agent: releases before the kill>=%d (acknowledged %d, spool depth %d), "
                            + "spooled-before-kill=%d (corruptions on reopen %d), delivered-after-restart=%d in %.1f s, "
                            + "agent-1 records on the topic=%d (its ledger kept %d lines: the rest were in its buffer), "
                            + "agent-2 releases=%d, records=%d distinct=%d duplicates=%d same-id, lost=%d, dropped=%d; "
                            + "first ack %.1f s, %.1f s in all%n",
                    releasesCounted1, acked1, depthReported, spooled.size(), corruptions, spooledDelivered, replayedAfter,
                    run1.size(), lines1.size(), releases2, records, copies.size(), duplicates, lost.size(), dropped2,
                    firstAck, seconds(t0));

            assertTrue(lost.isEmpty(), lost.size() + " releases never reached the broker, e.g. "
                    + lost.stream().limit(5).toList());
            assertEquals(spooled.size(), spooledDelivered, "every record spooled at the kill was delivered");
            assertTrue(run1.size() >= releasesCounted1, "agent-1 counted " + releasesCounted1
                    + " releases before the kill but only " + run1.size() + " are on the topic");
            assertEquals(0, dropped2, "the spool dropped nothing");
            ok = true;
        } finally {
            if (frozen) {
                FaultKit.signal(kafka.pid(), "CONT");
            }
            if (agent != null) {
                agent.close();
            }
            passed &= ok;
        }
    }

    private ManagedProcess startAgent(String name, String site, String camera, String url, int port, Path data,
                                      Path ledger) throws Exception {
        return ManagedProcess.java(name, DemoProcesses.classpath(root, "agent"), "org.privface.agent.Application",
                List.of("-Xmx384m", "-Dmicronaut.server.port=" + port,
                        "-Dagent.site-id=" + site,
                        "-Dagent.gateway-id=crash-test",
                        "-Dagent.enroll-folder=" + synthetic.resolve("enroll"),
                        "-Dagent.publish-enrollments=false",
                        "-Dagent.basis-file=" + work.resolve("agent-basis.bin"),
                        "-Dagent.cameras." + camera + ".url=" + url,
                        "-Dagent.data-dir=" + data,
                        "-Dagent.ledger=" + ledger,
                        // A release on every frame (the looping feed makes long tracks), under a cap no run reaches.
                        "-Dagent.budget=every-n:n=1,epsilon=2",
                        "-Dagent.epsilon=100000",
                        // The pixel stack on the cascade (the shipped default is the deep stack).
                        "-Dagent.detector=haar",
                        "-Dagent.mechanism=peep",
                        "-Dagent.sensitivity-mode=l1-clip",
                        "-Dagent.floor.epsilon-max=100000",
                        "-Dagent.control.token=" + TOKEN),
                List.of(), Map.of("KAFKA_BOOTSTRAP_SERVERS", bootstrap), work);
    }

    private static List<String> ids(Path ledger) throws Exception {
        if (!Files.exists(ledger)) {
            return List.of();
        }
        // A SIGKILL can leave a last line cut short: only complete lines count.
        String text = Files.readString(ledger);
        String complete = text.substring(0, text.lastIndexOf('\n') + 1);
        return complete.lines().filter(l -> !l.isBlank()).map(l -> l.substring(0, l.indexOf(','))).toList();
    }

    // ------------------------------------------------------------------------------- recognizer

    private static final int DIM = 32;
    private static final int PEOPLE = 4;
    private static final int ENROLLMENTS = 1_200;
    private static final int EARLY_QUERIES = 100;
    private static final int STREAM_QUERIES = 1_000;
    private static final int STREAM_PER_SECOND = 150;

    @Test
    void recognizerKilledInTrainingAndInInferenceAnswersEveryQueryAfterItsRestarts() throws Exception {
        long t0 = System.nanoTime();
        String site = "crash-rec";
        applyTopics(site);
        Path models = Files.createDirectories(work.resolve("models"));
        SplittableRandom random = new SplittableRandom(20);
        double[][] centres = new double[PEOPLE][DIM];
        for (double[] c : centres) {
            for (int j = 0; j < DIM; j++) {
                c[j] = random.nextDouble() * 4;
            }
        }
        Set<String> asked = java.util.concurrent.ConcurrentHashMap.newKeySet();
        Map<String, List<RecognitionResult>> results = new HashMap<>();
        boolean ok = false;
        ManagedProcess rec = null;
        Thread stream = null;
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(pp, new StringSerializer(), new ByteArraySerializer());
             KafkaConsumer<String, byte[]> answers = resultsReader()) {
            for (int i = 0; i < ENROLLMENTS; i++) {
                PerturbedFace e = face(site, RecordKind.ENROLLMENT, "p" + (i % PEOPLE), centres[i % PEOPLE], random);
                producer.send(new ProducerRecord<>(Topics.enrollment(site), e.getCameraId(), FaceRecords.encode(e)));
            }
            for (int i = 0; i < EARLY_QUERIES; i++) {
                PerturbedFace q = face(site, RecordKind.QUERY, null, centres[i % PEOPLE], random);
                asked.add(q.getEventId());
                producer.send(new ProducerRecord<>(Topics.query(site), q.getCameraId(), FaceRecords.encode(q)));
            }
            producer.flush();

            // 1. Killed in the middle of its first training run.
            int port = KafkaServerProcess.freePort();
            rec = startRecognizer("recognizer-1", port, models);
            DemoProcesses.awaitHealthy(rec, port);
            double up1 = seconds(t0);
            String base1 = "http://127.0.0.1:" + port;
            String auth1 = recognizerToken(port);
            long[] epochAtKill = {0, 0};
            awaitTrue("recognizer-1 in training", Duration.ofSeconds(60), quietly(() -> {
                Map<String, Object> t = json(base1 + "/models/training", auth1);
                epochAtKill[0] = t.get("epoch") instanceof Number n ? n.longValue() : 0;
                epochAtKill[1] = t.get("epochs") instanceof Number n ? n.longValue() : 0;
                return Boolean.TRUE.equals(t.get("running")) && epochAtKill[0] >= 2;
            }));
            rec.kill();
            rec = null;
            double killedInTraining = seconds(t0);
            assertTrue(storedVersions(models).isEmpty(), "no model version stored by the killed run: " + storedVersions(models));
            poll(answers, results, Duration.ofSeconds(1));
            assertTrue(results.isEmpty(), "no query answered before any model existed");

            // 2. The restart replays the enrollments, trains again, and answers the queries that waited.
            port = KafkaServerProcess.freePort();
            long restart1 = System.nanoTime();
            rec = startRecognizer("recognizer-2", port, models);
            DemoProcesses.awaitHealthy(rec, port);
            awaitTrue("a model stored by recognizer-2", Duration.ofSeconds(90), () -> !storedVersions(models).isEmpty());
            double retrainedAfter = seconds(restart1);
            List<String> versionsAfterTraining = storedVersions(models);
            assertEquals(1, versionsAfterTraining.size(), versionsAfterTraining.toString());
            String trained = versionsAfterTraining.get(0);
            awaitAnswers(answers, results, asked, Duration.ofSeconds(60));
            double earlyAnswered = seconds(restart1);

            // 3. Killed while it answers a stream of queries.
            AtomicInteger sent = new AtomicInteger();
            stream = new Thread(() -> {
                SplittableRandom r = new SplittableRandom(21);
                long start = System.nanoTime();
                for (int i = 0; i < STREAM_QUERIES && !Thread.currentThread().isInterrupted(); i++) {
                    PerturbedFace q = face(site, RecordKind.QUERY, null, centres[i % PEOPLE], r);
                    asked.add(q.getEventId());
                    producer.send(new ProducerRecord<>(Topics.query(site), q.getCameraId(), FaceRecords.encode(q)));
                    sent.incrementAndGet();
                    long wait = start + (i + 1) * 1_000_000_000L / STREAM_PER_SECOND - System.nanoTime();
                    if (wait > 0) {
                        try {
                            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
                producer.flush();
            }, "query-stream");
            stream.start();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (results.size() < EARLY_QUERIES + STREAM_QUERIES / 4) {
                assertTrue(System.nanoTime() < deadline, "recognizer-2 answered only " + results.size());
                poll(answers, results, Duration.ofMillis(100));
            }
            rec.kill();
            rec = null;
            int answeredAtKill = results.size();
            int sentAtKill = sent.get();

            // 4. The restart serves the stored model as soon as it owns the site again, without retraining,
            // and resumes from the committed offsets. Owning waits for the killed member's session to end
            // in the owners' group (recognizer.ownership-session-timeout, 10 s; issue 41).
            port = KafkaServerProcess.freePort();
            long restart2 = System.nanoTime();
            rec = startRecognizer("recognizer-3", port, models);
            DemoProcesses.awaitHealthy(rec, port);
            String base3 = "http://127.0.0.1:" + port;
            List<Map<String, Object>> served = FaultKit.jsonList(base3 + "/models", recognizerToken(port));
            long owned = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (served.isEmpty() && System.nanoTime() < owned) {
                Thread.sleep(200);
                served = FaultKit.jsonList(base3 + "/models", recognizerToken(port));
            }
            assertEquals(1, served.size(), "one model served once the restarted recognizer owns the site: " + served);
            assertEquals(trained, served.get(0).get("version"), "the stored model is served, not retrained");
            // The owner of the site loads its stored model when it acquires the site (ModelRegistry, issue 41).
            assertTrue(Files.readString(rec.log()).contains("serving stored " + trained), "recognizer-3 loaded " + trained);
            stream.join(Duration.ofSeconds(30).toMillis());
            assertFalse(stream.isAlive(), "the query stream ended");
            awaitAnswers(answers, results, asked, Duration.ofSeconds(60));
            double resumedAfter = seconds(restart2);
            poll(answers, results, Duration.ofSeconds(2)); // late duplicates, if any

            int duplicates = 0;
            Set<String> versions = new java.util.TreeSet<>();
            for (Map.Entry<String, List<RecognitionResult>> e : results.entrySet()) {
                List<RecognitionResult> copies = e.getValue();
                duplicates += copies.size() - 1;
                for (RecognitionResult r : copies) {
                    versions.add(r.getModelVersion());
                    if (r.getModelVersion().equals(copies.get(0).getModelVersion())) {
                        assertEquals(copies.get(0).getPredictedLabel(), r.getPredictedLabel(),
                                "one model, one input, two answers for " + e.getKey());
                    }
                }
            }
            Set<String> lost = new HashSet<>(asked);
            lost.removeAll(results.keySet());
            Set<String> unasked = new HashSet<>(results.keySet());
            unasked.removeAll(asked);
            List<String> storedAtEnd = storedVersions(models);
            long deadLetters = FaultKit.readAll(bootstrap, List.of(Topics.DEAD_LETTER), Duration.ofSeconds(20)).size();

            System.out.printf("CRASH-RECOVERY recognizer: killed in training at epoch %d of %d (%.1f s), retrained in %.1f s "
                            + "after the restart (versions stored %s), %d waiting queries answered %.1f s after it; "
                            + "killed in inference with %d of %d queries answered (%d sent), served the stored model %s "
                            + "after the restart and answered the rest %.1f s after it; queries=%d, answered=%d, "
                            + "duplicates=%d same-id, lost=%d, dead letters=%d, result model versions %s; recognizer up in %.1f s, %.1f s in all%n",
                    epochAtKill[0], epochAtKill[1], killedInTraining, retrainedAfter, storedAtEnd, EARLY_QUERIES,
                    earlyAnswered, answeredAtKill, EARLY_QUERIES + STREAM_QUERIES, sentAtKill, trained, resumedAfter,
                    asked.size(), results.size(), duplicates, lost.size(), deadLetters, versions, up1, seconds(t0));

            assertEquals(EARLY_QUERIES + STREAM_QUERIES, asked.size());
            assertTrue(lost.isEmpty(), lost.size() + " queries never answered");
            assertTrue(unasked.isEmpty(), "results for queries never asked: " + unasked.size());
            assertEquals(0, deadLetters, "no query was dead-lettered on the way");
            // Resumed from committed offsets, not from the start: at most the batches in flight at the kill again.
            assertTrue(duplicates < answeredAtKill, duplicates + " answered again of " + answeredAtKill);
            assertEquals(List.of(trained), storedAtEnd, "the restart retrained nothing: the replayed enrollments matched");
            ok = true;
        } finally {
            if (stream != null) {
                stream.interrupt();
                stream.join(5_000);
            }
            if (rec != null) {
                rec.close();
            }
            passed &= ok;
        }
    }

    private ManagedProcess startRecognizer(String name, int port, Path models) throws Exception {
        if (operator == null) {
            operator = OperatorLogin.create(work);
        }
        return ManagedProcess.java(name, DemoProcesses.classpath(root, "recognizer"), "org.privface.recognizer.Application",
                List.of("-Xmx768m", "-Dai.djl.offline=true", "-Dmicronaut.server.port=" + port, operator.recognizerOption(),
                        "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1",
                        "-Drecognizer.model-dir=" + models,
                        "-Drecognizer.instance-id=" + name,
                        "-Drecognizer.group-id=crash-test",
                        "-Drecognizer.min-enrollments=100",
                        "-Drecognizer.quiet-period=1s",
                        // A killed member holds its partitions until its session times out (45 s by default).
                        "-Dkafka.session.timeout.ms=6000",
                        "-Dkafka.heartbeat.interval.ms=1000"),
                List.of(), Map.of("KAFKA_BOOTSTRAP_SERVERS", bootstrap, "OMP_WAIT_POLICY", "PASSIVE"), work);
    }

    private OperatorLogin operator;
    private String token;
    private int tokenPort;

    /** An operator's token for the recognizer's API (a restarted recognizer keeps the operators file). */
    private String recognizerToken(int port) throws Exception {
        if (token == null || tokenPort != port) {
            token = operator.token(port);
            tokenPort = port;
        }
        return token;
    }

    /** Finished versions in the model directory (a version folder with its metadata), any key. */
    private static List<String> storedVersions(Path models) {
        try (var s = Files.walk(models)) {
            return s.filter(p -> p.getFileName().toString().equals("model.properties"))
                    .map(p -> p.getParent().getFileName().toString()).sorted().toList();
        } catch (java.io.IOException e) {
            return List.of();
        }
    }

    private KafkaConsumer<String, byte[]> resultsReader() {
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(cp, new StringDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> tps = new ArrayList<>();
        c.partitionsFor(Topics.RESULTS, Duration.ofSeconds(10)).forEach(pi -> tps.add(new TopicPartition(Topics.RESULTS, pi.partition())));
        c.assign(tps);
        c.seekToBeginning(tps);
        return c;
    }

    private static void poll(KafkaConsumer<String, byte[]> c, Map<String, List<RecognitionResult>> into, Duration d) {
        long end = System.nanoTime() + d.toNanos();
        do {
            for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(100))) {
                RecognitionResult res = FaceRecords.decodeResult(r.value());
                into.computeIfAbsent(res.getEventId(), k -> new ArrayList<>()).add(res);
            }
        } while (System.nanoTime() < end);
    }

    private static void awaitAnswers(KafkaConsumer<String, byte[]> c, Map<String, List<RecognitionResult>> results,
                                     Set<String> asked, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!results.keySet().containsAll(asked)) {
            assertTrue(System.nanoTime() < deadline, "answered " + asked.stream().filter(results::containsKey).count()
                    + " of " + asked.size() + " within " + timeout);
            poll(c, results, Duration.ofMillis(100));
        }
    }

    private static PerturbedFace face(String site, RecordKind kind, String label, double[] centre, SplittableRandom r) {
        List<Float> v = new ArrayList<>(centre.length);
        for (double c : centre) {
            v.add((float) (c + r.nextGaussian() * 0.3));
        }
        return PerturbedFace.newBuilder().setEventId(UUID.randomUUID().toString()).setSiteId(site)
                .setCameraId("cam-" + r.nextInt(6)).setTrackId("t-" + UUID.randomUUID()).setCaptureTimestamp(Instant.now())
                .setKind(kind)
                .setMechanism(MechanismParams.newBuilder().setName("PEEP").setSensitivityMode("vector")
                        .setEpsilonPerCoordinate(1).setEpsilonPerFace(DIM).setNoiseScale(1).setBasisId("pca-crash").build())
                .setDimension(DIM).setVector(v).setEnrollmentLabel(label).build();
    }
}
