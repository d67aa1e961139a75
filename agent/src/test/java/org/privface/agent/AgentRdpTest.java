package org.privface.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.privface.kafka.testkit.RealKafka;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;

/** RDP (strict, with image release enabled locally) end to end through a real broker. */
@MicronautTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AgentRdpTest implements TestPropertyProvider {
    private static final String SITE = "agentrdp";

    @Inject
    AgentPipeline pipeline;

    @Override
    public Map<String, String> getProperties() {
        SiteRecords.createTopics(SITE);
        // RDP's pixel crops on the cascade (the shipped default is the deep stack, AgentDefaultsTest).
        Map<String, String> p = new java.util.HashMap<>(Map.of("agent.detector", "haar"));
        p.putAll(Map.of("kafka.bootstrap.servers", RealKafka.bootstrapServers(),
                "micronaut.server.port", "-1",
                "agent.site-id", SITE,
                "agent.enroll-folder", AgentPipelineTest.synthetic().resolve("enroll").toString(),
                "agent.source", AgentPipelineTest.synthetic().resolve("query").toString(),
                "agent.mechanism", "rdp",
                "agent.sensitivity-mode", "strict",
                "agent.image-release", "true",
                "agent.epsilon", "8",
                "agent.data-dir", AgentPipelineTest.tempDir().toString()));
        return p;
    }

    @Test
    void publishesStrictRdpFeaturesAndTheSanitizedImage() throws Exception {
        assertTrue(pipeline.awaitCompletion(), "pipeline finished without error");
        List<PerturbedFace> records = SiteRecords.read(SITE, pipeline.published(), (key, f) -> { });
        assertEquals(pipeline.published(), records.size());
        assertTrue(records.stream().anyMatch(f -> f.getKind() == RecordKind.QUERY));
        for (PerturbedFace f : records) {
            assertEquals("RDP", f.getMechanism().getName());
            assertEquals("strict", f.getMechanism().getSensitivityMode());
            // The stated ε is an upper bound of the exact Σ Δ_k/b_k, itself at most the configured ε (issue 34).
            double stated = f.getMechanism().getEpsilonPerFace();
            assertTrue(stated <= 8.0 && stated > 8.0 - 1e-9, "pure epsilon-LDP per face, at most as configured: " + stated);
            assertTrue(f.getMechanism().getBasisId().startsWith("rdp-3-pca-"));
            assertEquals(8, f.getDimension());
            assertNotNull(f.getSanitizedImage(), "image release was enabled by the gateway's own configuration");
            assertEquals(64, f.getSanitizedImage().getWidth());
            assertEquals(64 * 64, f.getSanitizedImage().getPixels().size());
        }
    }
}
