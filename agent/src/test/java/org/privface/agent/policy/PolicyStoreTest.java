package org.privface.agent.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.micronaut.context.ApplicationContext;
import io.micronaut.serde.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.agent.capture.CameraSettings;
import org.privface.agent.control.GatewayState;

class PolicyStoreTest {
    static ApplicationContext ctx;
    static ObjectMapper json;

    @BeforeAll
    static void start() {
        ctx = ApplicationContext.run(Map.of("kafka.health.enabled", "false"));
        json = ctx.getBean(ObjectMapper.class);
    }

    @AfterAll
    static void stop() {
        ctx.close();
    }

    static SitePolicy peep(double eps) {
        return new SitePolicy(Mechanism.PEEP, "l1-clip", eps, "once", Duration.ofMinutes(10), false);
    }

    static PolicyOverride eps(Double e) {
        PolicyOverride o = new PolicyOverride();
        o.setEpsilon(e);
        return o;
    }

    PolicyStore store(Path dir, SitePolicy initial, Map<String, PolicyOverride> cameras) {
        return new PolicyStore("north", initial, new PrivacyFloor(1, 32), cameras, new AuditLog(dir.resolve("audit.jsonl"), json));
    }

    @Test
    void remoteEpsilonIsClampedToTheLocalFloorAndEveryChangeIsAudited(@TempDir Path dir) throws Exception {
        PolicyStore s = store(dir, peep(8), Map.of());
        AtomicInteger notified = new AtomicInteger();
        s.onChange(v -> notified.incrementAndGet());
        assertEquals(PolicyStore.Outcome.ACCEPTED, s.applyRemote(eps(4.0), "rest", "alice").outcome());
        PolicyStore.Result high = s.applyRemote(eps(1000.0), "rest", "mallory");
        assertEquals(PolicyStore.Outcome.CLAMPED, high.outcome());
        assertEquals(32.0, s.current().policy().epsilon());
        assertEquals(PolicyStore.Outcome.CLAMPED, s.applyRemote(eps(1e-9), "control-topic@7", "bob").outcome());
        assertEquals(1.0, s.current().policy().epsilon());
        for (double bad : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
            PolicyStore.Result r = s.applyRemote(eps(bad), "rest", "mallory");
            assertEquals(PolicyStore.Outcome.REJECTED, r.outcome(), "epsilon " + bad);
            assertEquals(1.0, r.current().policy().epsilon(), "a rejected change leaves the policy as it was");
        }
        assertEquals(3, notified.get());
        assertEquals(4, s.current().version());
        List<String> lines = Files.readAllLines(dir.resolve("audit.jsonl"));
        assertEquals(1 + 3 + 4, lines.size(), "the starting policy, three applied changes and four rejections");
        assertTrue(lines.get(2).contains("\"outcome\":\"CLAMPED\"") && lines.get(2).contains("mallory"), lines.get(2));
    }

    @Test
    void imageReleaseAndPaperModesCannotBeTurnedOnRemotely(@TempDir Path dir) {
        PolicyStore s = store(dir, peep(8), Map.of());
        PolicyOverride img = new PolicyOverride();
        img.setMechanism("rdp");
        img.setImageRelease(true);
        assertEquals(PolicyStore.Outcome.REJECTED, s.applyRemote(img, "rest", "x").outcome());
        PolicyOverride paper = new PolicyOverride();
        paper.setMode("paper-pixel");
        PolicyStore.Result r = s.applyRemote(paper, "rest", "x");
        assertEquals(PolicyStore.Outcome.REJECTED, r.outcome());
        assertTrue(r.reason().contains("reproduces a paper"), r.reason());
        PolicyOverride rdp = new PolicyOverride();
        rdp.setMechanism("rdp");
        assertEquals(PolicyStore.Outcome.ACCEPTED, s.applyRemote(rdp, "rest", "x").outcome());
        assertEquals("strict", s.current().policy().mode(), "a new mechanism takes its production default mode");
        PolicyOverride budget = new PolicyOverride();
        budget.setBudget("every-n:n=5,epsilon=100");
        assertEquals(PolicyStore.Outcome.REJECTED, s.applyRemote(budget, "rest", "x").outcome(),
                "epsilon per release above epsilon per track");
    }

    @Test
    void localConfigurationOutsideItsOwnFloorRefusesToStart(@TempDir Path dir) {
        assertThrows(IllegalArgumentException.class, () -> store(dir, peep(64), Map.of()));
        assertThrows(IllegalArgumentException.class, () -> store(dir, peep(8), Map.of("lobby", eps(100.0))));
        assertThrows(IllegalArgumentException.class, () -> new PrivacyFloor(5, 1));
    }

    @Test
    void cameraOverridesCanOnlyLowerTheSitesEpsilon(@TempDir Path dir) {
        PolicyStore s = store(dir, peep(8), Map.of("lobby", eps(2.0), "gate", eps(16.0)));
        assertEquals(2.0, s.forCamera("lobby").epsilon());
        assertEquals(8.0, s.forCamera("gate").epsilon(), "never above the site's");
        assertEquals(8.0, s.forCamera("other").epsilon());
    }

    static final double[] BAD_EPSILONS = {0, -0.0, -1, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY};

    @Test
    void noPolicyOrFloorCanHoldANonPositiveOrNonFiniteEpsilon() {
        for (Mechanism m : Mechanism.values()) {
            for (double bad : BAD_EPSILONS) {
                var e = assertThrows(IllegalArgumentException.class,
                        () -> new SitePolicy(m, PolicyOverride.defaultMode(m), bad, "once", Duration.ofMinutes(10), false),
                        m + " epsilon " + bad);
                assertTrue(e.getMessage().contains("epsilon must be positive and finite"), e.getMessage());
            }
        }
        for (double bad : BAD_EPSILONS) {
            assertThrows(IllegalArgumentException.class, () -> new PrivacyFloor(bad, 10), "floor min " + bad);
            assertThrows(IllegalArgumentException.class, () -> new PrivacyFloor(1, bad), "floor max " + bad);
        }
    }

    @Test
    void remoteEpsilonsAtTheEdgesOfDoubleAreRefusedOrClamped(@TempDir Path dir) {
        PolicyStore s = store(dir, peep(8), Map.of());
        for (double bad : new double[] {-0.0, Double.NEGATIVE_INFINITY, -Double.MIN_VALUE}) {
            assertEquals(PolicyStore.Outcome.REJECTED, s.applyRemote(eps(bad), "control-topic@1", "mallory").outcome(),
                    "epsilon " + bad);
        }
        assertEquals(8.0, s.current().policy().epsilon(), "rejections change nothing");
        PolicyStore.Result tiny = s.applyRemote(eps(Double.MIN_VALUE), "rest", "mallory");
        assertEquals(PolicyStore.Outcome.CLAMPED, tiny.outcome());
        assertEquals(1.0, tiny.current().policy().epsilon(), "raised to the floor's minimum");
        PolicyStore.Result huge = s.applyRemote(eps(Double.MAX_VALUE), "rest", "mallory");
        assertEquals(PolicyStore.Outcome.CLAMPED, huge.outcome());
        assertEquals(32.0, huge.current().policy().epsilon(), "lowered to the floor's maximum");
        // A budget whose per-release epsilon is not a number is refused like a bad epsilon.
        PolicyOverride budget = new PolicyOverride();
        budget.setBudget("every-n:n=2,epsilon=NaN");
        assertEquals(PolicyStore.Outcome.REJECTED, s.applyRemote(budget, "rest", "mallory").outcome());
        assertEquals(PolicyStore.Outcome.REJECTED, s.applyRemote(null, "control-topic@2", "unreadable").outcome());
    }

    @Test
    void configurationWithABadEpsilonRefusesToStart() {
        Map<String, String> bad = new java.util.LinkedHashMap<>();
        bad.put("agent.epsilon", "NaN");
        bad.put("agent.floor.epsilon-min", "-1");
        bad.put("agent.floor.epsilon-max", "Infinity");
        bad.put("agent.sites.north.epsilon", "0");
        for (var e : bad.entrySet()) {
            Map<String, Object> props = new java.util.HashMap<>(Map.of("kafka.health.enabled", "false", "agent.site-id", "north",
                    "agent.data-dir", System.getProperty("java.io.tmpdir") + "/pst-bad-" + System.nanoTime()));
            props.put(e.getKey(), e.getValue());
            try (ApplicationContext c = ApplicationContext.run(props)) {
                Exception thrown = assertThrows(Exception.class, () -> c.getBean(GatewayState.class).policies(), e.toString());
                String chain = messages(thrown);
                assertTrue(chain.contains("epsilon must be positive and finite"), e + ": " + chain);
            }
        }
        // Finite and positive, but outside the gateway's own floor: also refused, with the floor in the message.
        try (ApplicationContext c = ApplicationContext.run(Map.of("kafka.health.enabled", "false", "agent.site-id", "north",
                "agent.epsilon", "1000", "agent.data-dir", System.getProperty("java.io.tmpdir") + "/pst-bad-" + System.nanoTime()))) {
            Exception thrown = assertThrows(Exception.class, () -> c.getBean(GatewayState.class).policies());
            assertTrue(messages(thrown).contains("outside the privacy floor"), messages(thrown));
        }
    }

    private static String messages(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; t != null && i < 20; t = t.getCause(), i++) {
            sb.append(t.getMessage()).append(" | ");
        }
        return sb.toString();
    }

    @Test
    void theDefaultBootstrapKeepsItsPort() {
        // A colon in a placeholder's default needs backticks, or Micronaut cuts it at the last colon.
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("KAFKA_BOOTSTRAP_SERVERS") == null);
        assertEquals("127.0.0.1:9092", ctx.getProperty("kafka.bootstrap.servers", String.class).orElseThrow());
    }

    @Test
    void sitesAndCamerasBindFromConfiguration() {
        try (ApplicationContext c = ApplicationContext.run(Map.of("kafka.health.enabled", "false",
                "agent.site-id", "north", "agent.epsilon", "16", "agent.data-dir", System.getProperty("java.io.tmpdir") + "/pst-" + System.nanoTime(),
                "agent.sites.north.epsilon", "4", "agent.sites.north.budget", "max-k:k=2",
                "agent.sites.south.epsilon", "50",
                "agent.cameras.lobby.url", "rtsp://10.0.0.5/stream1", "agent.cameras.lobby.epsilon", "2",
                "agent.cameras.lobby.min-face-size", "60"))) {
            PolicyStore s = c.getBean(GatewayState.class).policies();
            assertEquals(4.0, s.current().policy().epsilon(), "the site's section overrides the global default");
            assertEquals("max-k:k=2", s.current().policy().budget());
            assertEquals(2.0, s.forCamera("lobby").epsilon());
            CameraSettings lobby = c.getBeansOfType(CameraSettings.class).iterator().next();
            assertEquals("rtsp://10.0.0.5/stream1", lobby.getUrl());
            assertEquals(60, lobby.getMinFaceSize());
        }
    }
}
