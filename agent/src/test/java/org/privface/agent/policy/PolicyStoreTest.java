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

    static PolicyOverride window(String iso) {
        PolicyOverride o = new PolicyOverride();
        o.setWindow(Duration.parse(iso));
        return o;
    }

    @Test
    void aRemoteWindowBelowTheFloorIsRaisedToItAndAuditedAsClamped(@TempDir Path dir) throws Exception {
        PolicyStore s = store(dir, peep(8), Map.of());
        for (String source : List.of("rest", "control-topic@9")) {
            PolicyStore.Result r = s.applyRemote(window("PT0.001S"), source, "mallory");
            assertEquals(PolicyStore.Outcome.CLAMPED, r.outcome(), source);
            assertEquals(Duration.ofMinutes(10), r.current().policy().window(), source + ": the default window-min");
            assertTrue(r.reason().contains("window raised to the floor's minimum PT10M"), r.reason());
        }
        assertEquals(PolicyStore.Outcome.ACCEPTED, s.applyRemote(window("PT1H"), "rest", "alice").outcome());
        assertEquals(Duration.ofHours(1), s.current().policy().window(), "a longer window is stricter and accepted");
        for (String bad : List.of("PT0S", "-PT1S")) {
            assertEquals(PolicyStore.Outcome.REJECTED, s.applyRemote(window(bad), "rest", "mallory").outcome(), bad);
        }
        List<String> lines = Files.readAllLines(dir.resolve("audit.jsonl"));
        assertTrue(lines.get(1).contains("\"outcome\":\"CLAMPED\"") && lines.get(1).contains("window raised"), lines.get(1));
        assertTrue(lines.get(2).contains("control-topic@9") && lines.get(2).contains("\"outcome\":\"CLAMPED\""), lines.get(2));
    }

    /**
     * The worst a remote party can ask for at once: a huge ε, a 1 ms window and a budget of a
     * million releases. Whatever it asks, a face seen at 30 frames a second for an hour spends
     * at most ε_max per window, and windows are never shorter than the floor's minimum.
     */
    @Test
    void noRemoteCombinationLetsAnAppearanceSpendMoreThanTheFloorPerWindow(@TempDir Path dir) {
        for (String budget : List.of("once", "max-k:k=1000000", "every-n:n=1,epsilon=0.5")) {
            PolicyStore s = store(dir, peep(8), Map.of());
            PolicyOverride hostile = window("PT0.001S");
            hostile.setEpsilon(1e6);
            hostile.setBudget(budget);
            PolicyStore.Result r = s.applyRemote(hostile, "control-topic@1", "mallory");
            assertEquals(PolicyStore.Outcome.CLAMPED, r.outcome(), budget + ": " + r.reason());
            SitePolicy p = r.current().policy();
            org.privface.agent.track.TrackBudget ledger = new org.privface.agent.track.TrackBudget(p.budgetPolicy(),
                    p.epsilon(), p.window());
            java.time.Instant t0 = java.time.Instant.parse("2026-01-01T00:00:00Z");
            double[] perWindow = new double[7];
            for (int frame = 0; frame < 30 * 3600; frame++) {
                java.time.Instant now = t0.plusMillis(frame * 1000L / 30);
                var g = ledger.request("trk-1", frame + 1, now);
                if (g.isPresent()) {
                    perWindow[(int) (Duration.between(t0, now).toMinutes() / 10)] += g.get().epsilonForThisRelease();
                }
            }
            for (int w = 0; w < perWindow.length; w++) {
                assertTrue(perWindow[w] <= 32 * (1 + 1e-9), budget + ": window " + w + " spent " + perWindow[w]);
            }
            assertTrue(java.util.Arrays.stream(perWindow).sum() <= 6 * 32 * (1 + 1e-9),
                    budget + ": an hour is six windows of at most epsilon-max");
        }
    }

    @Test
    void cameraOverridesCannotShortenTheWindow(@TempDir Path dir) {
        var e = assertThrows(IllegalArgumentException.class, () -> store(dir, peep(8), Map.of("lobby", window("PT1S"))));
        assertTrue(e.getMessage().contains("window-min"), e.getMessage());
        PolicyStore s = store(dir, peep(8), Map.of("lobby", window("PT30M"), "gate", window("PT15M")));
        assertEquals(Duration.ofMinutes(30), s.forCamera("lobby").window());
        s.applyRemote(window("PT20M"), "rest", "alice");
        assertEquals(Duration.ofMinutes(20), s.forCamera("gate").window(), "never shorter than the site's");
        assertEquals(Duration.ofMinutes(30), s.forCamera("lobby").window());
        var local = assertThrows(IllegalArgumentException.class, () -> new PolicyStore("north",
                new SitePolicy(Mechanism.PEEP, "l1-clip", 8, "once", Duration.ofSeconds(1), false), new PrivacyFloor(1, 32),
                Map.of(), new AuditLog(dir.resolve("a2.jsonl"), json)));
        assertTrue(local.getMessage().contains("shorter than the privacy floor's window-min"), local.getMessage());
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
