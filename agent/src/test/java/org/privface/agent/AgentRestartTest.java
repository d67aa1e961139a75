package org.privface.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.kafka.testkit.RealKafka;
import org.privface.wire.topics.Topics;

/** The whole agent started twice on one data directory, publishing to a real broker. */
class AgentRestartTest {
    private static final String SITE = "restarttest";

    @Test
    void aRestartWithTheSamePolicyPublishesNoEnrollmentAgain(@TempDir Path dir) throws Exception {
        SiteRecords.createTopics(SITE);
        Map<String, Object> props = Map.of("kafka.bootstrap.servers", RealKafka.bootstrapServers(),
                "micronaut.server.port", -1,
                "agent.site-id", SITE,
                "agent.enroll-folder", AgentPipelineTest.synthetic().resolve("enroll").toString(),
                "agent.source", AgentPipelineTest.synthetic().resolve("query").toString(),
                "agent.components", "8",
                // The pixel stack on the cascade (the shipped default is the deep stack, AgentDefaultsTest).
                "agent.detector", "haar", "agent.mechanism", "peep", "agent.sensitivity-mode", "l1-clip",
                "agent.data-dir", dir.toString());
        long before = enrollmentRecords();
        run(props);
        long first = enrollmentRecords() - before;
        assertTrue(first >= 30, "the first start enrolls the synthetic folder: " + first);
        run(props);
        assertEquals(first, enrollmentRecords() - before,
                "the second start, same policy: the recognizer already has every enrollment, none is published again");
    }

    private static void run(Map<String, Object> props) throws Exception {
        try (ApplicationContext ctx = ApplicationContext.builder().properties(props).start()) {
            ctx.getBean(EmbeddedServer.class).start(); // its ServerStartupEvent starts the pipeline
            AgentPipeline pipeline = ctx.getBean(AgentPipeline.class);
            assertTrue(pipeline.awaitCompletion(), "the run ends without error");
        }
    }

    /** Records ever written to the site's enrollment topic. */
    private static long enrollmentRecords() {
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, RealKafka.bootstrapServers());
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            c.partitionsFor(Topics.enrollment(SITE)).forEach(p -> tps.add(new TopicPartition(p.topic(), p.partition())));
            return c.endOffsets(tps).values().stream().mapToLong(Long::longValue).sum();
        }
    }
}
