package org.privface.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.privface.kafka.testkit.RealKafka;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/** The agent on the synthetic faces in test-data/, publishing to a real broker. */
@MicronautTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AgentPipelineTest implements TestPropertyProvider {
    private static final String SITE = "agenttest";

    @Inject
    AgentPipeline pipeline;

    @Inject
    @Client("/")
    HttpClient http;

    static Path synthetic() {
        return Path.of(System.getProperty("privface.root", "..")).resolve("test-data/synthetic").toAbsolutePath();
    }

    @Override
    public Map<String, String> getProperties() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        try (Admin admin = Admin.create(p)) {
            new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return Map.of("kafka.bootstrap.servers", RealKafka.bootstrapServers(),
                "micronaut.server.port", "-1",
                "agent.site-id", SITE,
                "agent.enroll-folder", synthetic().resolve("enroll").toString(),
                "agent.source", synthetic().resolve("query").toString(),
                "agent.epsilon", "16",
                "agent.components", "12");
    }

    @Test
    void publishesOnlyValidPerturbedRecordsAndReportsMetrics() throws Exception {
        assertTrue(Files.isDirectory(synthetic().resolve("query")), "test-data/synthetic is part of the repository");
        assertTrue(pipeline.awaitCompletion(), "pipeline finished without error");
        assertTrue(pipeline.facesDetected() > 0);

        List<PerturbedFace> records = new ArrayList<>();
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(cp, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (String t : List.of(Topics.enrollment(SITE), Topics.query(SITE))) {
                c.partitionsFor(t).forEach(pi -> tps.add(new TopicPartition(t, pi.partition())));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (records.size() < pipeline.published() && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    PerturbedFace f = FaceRecords.decodeFace(r.value()); // validates every rule
                    assertEquals(f.getCameraId(), r.key(), "keyed by camera");
                    records.add(f);
                }
            }
        }
        assertEquals(pipeline.published(), records.size());
        long queries = records.stream().filter(f -> f.getKind() == RecordKind.QUERY).count();
        assertEquals(pipeline.facesDetected(), queries, "one query record per detected face");
        assertTrue(records.stream().allMatch(f -> f.getDimension() == 12));
        assertTrue(records.stream().allMatch(f -> f.getMechanism().getEpsilonPerFace() == 16.0));

        String metrics = http.toBlocking().retrieve("/prometheus");
        assertTrue(metrics.contains("privface_agent_records_published_total"), "published counter exported");
        assertTrue(metrics.contains("privface_agent_epsilon_per_face"), "epsilon metric exported");
        assertTrue(http.toBlocking().retrieve("/health").contains("UP"));
    }
}
