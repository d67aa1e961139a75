package org.privface.agent.embed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import io.micronaut.context.ApplicationContext;
import org.junit.jupiter.api.Test;
import org.privface.agent.AgentSettings;
import org.privface.agent.detect.DeepModels;
import org.privface.privacy.embedding.EmbeddingBasis;

/** One configuration line picks the network, and each packaged network has its own public basis. */
class FaceEmbeddersTest {
    @Test
    void theDefaultIsDlibAndAnUnknownNetworkIsRefusedAtConfiguration() {
        AgentSettings.Embedder e = new AgentSettings.Embedder();
        assertEquals(FaceEmbedders.DLIB, e.getNetwork());
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, () -> e.setNetwork("arcface"));
        assertTrue(x.getMessage().contains("fr_feature"), x.getMessage());
        assertThrows(IllegalArgumentException.class, () -> FaceEmbedders.create("arcface"));
    }

    @Test
    void theRuntimeIsOpenCvByDefaultOneLinePicksOnnxRuntimeAndAnUnknownOneIsRefused() {
        AgentSettings.Embedder e = new AgentSettings.Embedder();
        assertEquals("opencv", e.getRuntime());
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, () -> e.setRuntime("djl"));
        assertTrue(x.getMessage().contains("onnxruntime, opencv"), x.getMessage());
        try (ApplicationContext ctx = ApplicationContext.run(Map.of("kafka.health.enabled", "false",
                "agent.embedder.runtime", "onnxruntime"))) {
            assertEquals("onnxruntime", ctx.getBean(AgentSettings.class).getEmbedder().getRuntime());
        }
    }

    @Test
    void oneConfigurationLinePicksTheNetwork() {
        try (ApplicationContext ctx = ApplicationContext.run(Map.of("kafka.health.enabled", "false"))) {
            assertEquals(FaceEmbedders.DLIB, ctx.getBean(AgentSettings.class).getEmbedder().getNetwork(), "application.yml");
        }
        try (ApplicationContext ctx = ApplicationContext.run(Map.of("kafka.health.enabled", "false",
                "agent.embedder.network", "fr_feature"))) {
            assertEquals(FaceEmbedders.FR_FEATURE, ctx.getBean(AgentSettings.class).getEmbedder().getNetwork());
        }
    }

    @Test
    void eachNetworkHasABundledBasisOfItsDimension() {
        assertEquals(DlibResNet.DIMENSION, EmbeddingBasis.bundled(FaceEmbedders.DLIB).inputDimension());
        assertEquals(512, EmbeddingBasis.bundled(FaceEmbedders.FR_FEATURE).inputDimension());
        assertTrue(EmbeddingBasis.bundled(FaceEmbedders.DLIB).fittedOn().startsWith("lfw-public"));
    }

    @Test
    void theConfiguredNetworkIsTheOneCreated() {
        DeepModels.faceapiOrSkip();
        AgentSettings.Embedder e = new AgentSettings.Embedder();
        try (FaceEmbedder dlib = e.create()) {
            assertEquals(128, dlib.dimension());
            assertTrue(dlib.modelId().startsWith("dlib"), dlib.modelId());
        }
        DeepModels.facepluginOrSkip();
        e.setNetwork(FaceEmbedders.FR_FEATURE);
        try (FaceEmbedder fr = e.create()) {
            assertEquals(512, fr.dimension());
        }
    }
}
