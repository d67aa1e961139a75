package org.privface.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import io.micronaut.context.ApplicationContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.agent.control.GatewayState;
import org.privface.agent.detect.DeepModels;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.detect.YunetPin;
import org.privface.agent.embed.FaceEmbedders;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.policy.SitePolicy;
import org.privface.agent.release.FaceInput;

/**
 * The agent started with no settings of its own (the shipped application.yml, nothing else) runs
 * the deep stack the frontier measured: YuNet (UltraFace without its model), dlib's embedding,
 * EMBEDDING sign-cap at ε 20 per face. And a YuNet that is not the pinned file stops the start-up.
 */
class AgentDefaultsTest {

    private static Map<String, Object> noSettings() {
        Map<String, Object> p = new HashMap<>();
        p.put("kafka.health.enabled", "false"); // no broker here; nothing else is set
        return p;
    }

    @Test
    void withNoSettingsTheAgentRunsTheDeepStack() {
        try (ApplicationContext ctx = ApplicationContext.run(noSettings())) {
            AgentSettings s = ctx.getBean(AgentSettings.class);
            assertEquals("yunet", s.getDetector());
            assertEquals(FaceEmbedders.DLIB, s.getEmbedder().getNetwork());
            assertEquals(null, s.getEmbedder().getModel());

            SitePolicy shipped = s.defaultPolicy();
            // What the gateway enforces: the policy store's policy, after the (empty) site and camera overrides.
            SitePolicy inForce = ctx.getBean(GatewayState.class).policies().current().policy();
            for (SitePolicy p : new SitePolicy[] {shipped, inForce}) {
                assertEquals(Mechanism.EMBEDDING, p.mechanism());
                assertEquals("sign-cap", p.mode());
                assertEquals(20.0, p.epsilon(), "the frontier's recommended ε per face (docs/frontier.md)");
                assertEquals("once", p.budget());
                assertTrue(FaceInput.needsEmbedding(p), "the release takes the deep embedding, not pixels");
            }
            assertTrue(ctx.getBean(GatewayState.class).policies().floor().epsilonMax() >= 20.0,
                    "the shipped floor admits the shipped ε");
        }
    }

    @Test
    void theDefaultDetectorGivesLandmarksWithOrWithoutYunet() {
        DeepModels.facepluginOrSkip(); // the fallback, fetched by the build
        try (ApplicationContext ctx = ApplicationContext.run(noSettings())) {
            FaceFinder f = ctx.getBean(AgentSettings.class).faceFinder(null);
            assertTrue(f.landmarks(), f.describe() + " gives the landmarks the embedding aligns on");
        }
    }

    @Test
    void aYunetThatIsNotThePinnedFileStopsTheStartUp(@TempDir Path dir) throws Exception {
        Path fake = dir.resolve("face_detection_yunet_2023mar.onnx");
        Files.write(fake, new byte[] {1, 2, 3});
        Map<String, Object> p = noSettings();
        p.put("agent.yunet-model", fake.toString());
        RuntimeException e = assertThrows(RuntimeException.class, () -> ApplicationContext.run(p).close());
        String why = messages(e);
        assertTrue(why.contains(fake.toString()) && why.contains(FaceModels.YUNET_SHA256), why);

        // A camera that asks for YuNet is enough, whatever the global detector.
        p.put("agent.detector", "haar");
        p.put("agent.cameras.door.detector", "yunet");
        p.put("agent.cameras.door.url", dir.toString());
        assertTrue(messages(assertThrows(RuntimeException.class, () -> ApplicationContext.run(p).close()))
                .contains(FaceModels.YUNET_SHA256));

        // Nothing asks for YuNet: nothing is checked.
        p.remove("agent.cameras.door.detector");
        try (ApplicationContext ctx = ApplicationContext.run(p)) {
            assertTrue(ctx.getBean(YunetPin.class).checked().isEmpty());
        }
    }

    @Test
    void aConfiguredYunetThatIsMissingStopsTheStartUp(@TempDir Path dir) {
        Map<String, Object> p = noSettings();
        p.put("agent.yunet-model", dir.resolve("absent.onnx").toString());
        assertTrue(messages(assertThrows(RuntimeException.class, () -> ApplicationContext.run(p).close()))
                .contains("absent.onnx"));
    }

    @Test
    void thePinnedYunetStarts() {
        Path real = FaceModels.sharedModels().resolve(FaceModels.YUNET_FILE);
        assumeTrue(Files.isRegularFile(real), "YuNet absent at " + real.toAbsolutePath() + " (FACE_MODELS): skipping");
        Map<String, Object> p = noSettings();
        p.put("agent.yunet-model", real.toString());
        try (ApplicationContext ctx = ApplicationContext.run(p)) {
            assertEquals(real, ctx.getBean(YunetPin.class).checked().orElseThrow());
        }
    }

    private static String messages(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            b.append(t.getMessage()).append('\n');
        }
        return b.toString();
    }
}
