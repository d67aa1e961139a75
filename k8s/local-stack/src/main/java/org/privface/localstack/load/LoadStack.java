package org.privface.localstack.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.knowm.xchart.style.Styler;
import org.privface.localstack.DemoProcesses;
import org.privface.broker.KafkaServerProcess;
import org.privface.broker.ManagedProcess;
import org.privface.evaluation.Charts;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * The cloud half of a load run, all real and all separate processes: a Kafka 4 broker with the
 * sites' topics, and the recognizer's JVM with a GC log. Also what the runs share: the recognizer
 * group's lag read through the Admin API, charts of sampled columns, and clean-up.
 */
final class LoadStack implements AutoCloseable {
    static final String RECOGNIZER_GROUP = "privface-recognizer";

    final Path root;
    final Path work;
    final KafkaServerProcess kafka;
    final Admin admin;
    private final List<AutoCloseable> running = new ArrayList<>();
    ManagedProcess recognizer;
    int recognizerPort;
    GcLog recognizerGc;

    private LoadStack(Path root, Path work, KafkaServerProcess kafka, Admin admin) {
        this.root = root;
        this.work = work;
        this.kafka = kafka;
        this.admin = admin;
    }

    static LoadStack start(Path root, List<String> sites) throws Exception {
        Path work = Files.createTempDirectory("privface-load-");
        KafkaServerProcess kafka = KafkaServerProcess.start(root, work);
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        Admin admin = Admin.create(ap);
        new TopicApplier(admin).apply(Topics.definitions(sites));
        return new LoadStack(root, work, kafka, admin);
    }

    String bootstrap() {
        return kafka.bootstrapServers();
    }

    private org.privface.localstack.OperatorLogin operator;
    private String recognizerToken;

    /** Starts the recognizer as in the demo (its own JVM, one PyTorch thread), with a GC log, and waits until healthy. */
    void startRecognizer(String heap) throws Exception {
        recognizerPort = KafkaServerProcess.freePort();
        Path gc = work.resolve("gc-recognizer.log");
        operator = org.privface.localstack.OperatorLogin.create(work);
        recognizer = ManagedProcess.java("recognizer", DemoProcesses.classpath(root, "recognizer"), "org.privface.recognizer.Application",
                List.of("-Xmx" + heap, GcLog.option(gc), "-Dai.djl.offline=true", "-Dmicronaut.server.port=" + recognizerPort,
                        operator.recognizerOption(),
                        "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1"),
                List.of(), Map.of("KAFKA_BOOTSTRAP_SERVERS", bootstrap(), "OMP_WAIT_POLICY", "PASSIVE"), work);
        running.add(recognizer);
        recognizerGc = new GcLog(gc);
        DemoProcesses.awaitHealthy(recognizer, recognizerPort);
        recognizerToken = operator.token(recognizerPort);
    }

    /** Bearer token of an operator of the recognizer, for its API. */
    String recognizerToken() {
        return recognizerToken;
    }

    /** Adds a process or feed to stop at {@link #close()} (in reverse order). */
    <T extends AutoCloseable> T own(T c) {
        running.add(c);
        return c;
    }

    /** The recognizer group's lag on the given topics: Σ (end offset − committed offset), no commit counting as 0. */
    long lag(List<String> topics) throws Exception {
        Map<TopicPartition, OffsetSpec> want = new LinkedHashMap<>();
        for (var d : admin.describeTopics(topics).allTopicNames().get().values()) {
            d.partitions().forEach(p -> want.put(new TopicPartition(d.name(), p.partition()), OffsetSpec.latest()));
        }
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> end = admin.listOffsets(want).all().get();
        Map<TopicPartition, OffsetAndMetadata> committed =
                admin.listConsumerGroupOffsets(RECOGNIZER_GROUP).partitionsToOffsetAndMetadata().get();
        long lag = 0;
        for (var e : end.entrySet()) {
            OffsetAndMetadata c = committed.get(e.getKey());
            lag += e.getValue().offset() - (c == null ? 0 : c.offset());
        }
        return lag;
    }

    /** Σ end offsets of the topics: the records they hold. */
    long endOffsets(List<String> topics) throws Exception {
        Map<TopicPartition, OffsetSpec> want = new LinkedHashMap<>();
        for (var d : admin.describeTopics(topics).allTopicNames().get().values()) {
            d.partitions().forEach(p -> want.put(new TopicPartition(d.name(), p.partition()), OffsetSpec.latest()));
        }
        return admin.listOffsets(want).all().get().values().stream().mapToLong(ListOffsetsResult.ListOffsetsResultInfo::offset).sum();
    }

    /**
     * A line chart of sampled columns against x; points whose value is not finite (or, on a log
     * axis, not positive) are left out, and a series with no point at all is not drawn.
     */
    static void chart(Path png, String title, String xTitle, String yTitle, boolean logY, double[] x,
                      Map<String, double[]> columns) throws IOException {
        List<Charts.Series> series = new ArrayList<>();
        for (var e : columns.entrySet()) {
            List<double[]> pts = new ArrayList<>();
            for (int i = 0; i < x.length && i < e.getValue().length; i++) {
                double y = e.getValue()[i];
                if (Double.isFinite(y) && (!logY || y > 0)) {
                    pts.add(new double[] {x[i], y});
                }
            }
            if (!pts.isEmpty()) {
                series.add(new Charts.Series(e.getKey(), pts.stream().mapToDouble(p -> p[0]).toArray(),
                        pts.stream().mapToDouble(p -> p[1]).toArray(), null));
            }
        }
        if (!series.isEmpty()) {
            Charts.line(png, title, xTitle, yTitle, false, logY ? Charts.YAxis.LOG : Charts.YAxis.AUTO,
                    Styler.LegendPosition.OutsideS, 1000, 620, series);
        }
    }

    @Override
    public void close() {
        for (int i = running.size() - 1; i >= 0; i--) {
            try {
                running.get(i).close();
            } catch (Exception e) {
                // keep stopping the rest
            }
        }
        admin.close();
        kafka.close();
    }

    /** Copies the processes' logs (and GC logs) to {@code into}, then removes the temporary folder. */
    void keepLogsAndClean(Path into) {
        try (Stream<Path> s = Files.list(work)) {
            Files.createDirectories(into);
            for (Path p : s.filter(p -> p.toString().endsWith(".log") || p.toString().endsWith(".csv")).toList()) {
                Files.copy(p, into.resolve(p.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            System.err.println("could not keep the logs: " + e);
        }
        try (Stream<Path> s = Files.walk(work)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary folder: best effort
        }
    }
}
