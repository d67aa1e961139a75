package org.privface.agent.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import io.micronaut.serde.ObjectMapper;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.agent.AgentSettings;
import org.privface.agent.track.SteppedClock;
import org.privface.wire.control.SignedControl;

/**
 * The gateway's clock steps by ±10 minutes (NTP) while the console's is right (docs/reliability.md,
 * "The clock steps by ten minutes"): under the default bounds a fresh signed record still applies,
 * and a replayed or older one is still refused, by the key's counter, whichever way the clock went.
 */
class ControlClockStepTest {
    static final String SITE = "clock-step";
    static final KeyPair CONSOLE = SignedControl.generate();
    static final Instant T0 = Instant.parse("2026-06-01T08:00:00Z");

    record Signed(RecordHeaders headers, byte[] body) {
    }

    static Signed signed(long issuedAt, String body) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        RecordHeaders h = new RecordHeaders();
        SignedControl.sign(CONSOLE.getPrivate(), "console", SITE, "alice", issuedAt, b).addTo(h);
        return new Signed(h, b);
    }

    static ControlSignatures.Kind judge(ControlSignatures s, Signed r) {
        ControlSignatures.Verdict v = s.check(r.headers(), r.body(), false);
        s.accepted(v);
        return v.kind();
    }

    @Test
    void theDefaultBoundsAcceptAFreshRecordAfterAStepEitherWayAndStillRefuseReplays(@TempDir Path dir) {
        AgentSettings.Control defaults = new AgentSettings.Control();
        for (Duration step : new Duration[] {Duration.ofMinutes(10), Duration.ofMinutes(-10)}) {
            SteppedClock gateway = new SteppedClock(T0);
            ControlSignatures s = new ControlSignatures(SITE, Map.of("console", CONSOLE.getPublic()),
                    defaults.getMaxRecordAge(), defaults.getMaxClockSkew(), gateway, dir.resolve("step" + step.toMinutes()),
                    ObjectMapper.getDefault());
            Instant console = T0; // the console's clock is right throughout
            Signed before = signed(console.toEpochMilli(), "{\"epsilon\": 4}");
            assertEquals(ControlSignatures.Kind.APPLY, judge(s, before));

            console = console.plusSeconds(60);
            gateway.step(Duration.ofSeconds(60).plus(step));
            Signed fresh = signed(console.toEpochMilli(), "{\"epsilon\": 8}");
            assertEquals(ControlSignatures.Kind.APPLY, judge(s, fresh), "a record issued just now, gateway stepped " + step);
            assertEquals(ControlSignatures.Kind.REFUSE, judge(s, fresh), "its replay, after a step of " + step);
            assertEquals(ControlSignatures.Kind.REFUSE, judge(s, before), "an older record, after a step of " + step);
            Signed older = signed(console.minusSeconds(1).toEpochMilli(), "{\"epsilon\": 50}");
            ControlSignatures.Verdict v = s.check(older.headers(), older.body(), false);
            assertTrue(v.kind() == ControlSignatures.Kind.REFUSE && v.reason().startsWith("replayed"), v.toString());
        }
    }

    @Test
    void theBoundsStillRefuseAStaleRecordAndOneFarAhead(@TempDir Path dir) {
        AgentSettings.Control defaults = new AgentSettings.Control();
        SteppedClock gateway = new SteppedClock(T0);
        ControlSignatures s = new ControlSignatures(SITE, Map.of("console", CONSOLE.getPublic()), defaults.getMaxRecordAge(),
                defaults.getMaxClockSkew(), gateway, dir, ObjectMapper.getDefault());
        Instant now = gateway.instant();
        Duration skew = defaults.getMaxClockSkew();
        assertTrue(skew.compareTo(Duration.ofMinutes(10)) > 0, "the stated bound covers a 10-minute step: " + skew);
        Signed ahead = signed(now.plus(skew).plusSeconds(1).toEpochMilli(), "{\"epsilon\": 8}");
        assertEquals(ControlSignatures.Kind.REFUSE, judge(s, ahead));
        Signed stale = signed(now.minus(defaults.getMaxRecordAge()).minusSeconds(1).toEpochMilli(), "{\"epsilon\": 8}");
        assertEquals(ControlSignatures.Kind.REFUSE, judge(s, stale));
        Signed edge = signed(now.plus(skew).toEpochMilli(), "{\"epsilon\": 8}");
        assertEquals(ControlSignatures.Kind.APPLY, judge(s, edge), "at the bound itself");
    }
}
