package org.privface.localstack.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;

/** The soak's "deployed" agent takes its process settings from the shipped bundle's unit file. */
class DeployedAgentTest {
    @Test
    void readsTheBundlesJvmFlagsAndAllocatorSetting() throws Exception {
        Path root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        DeployedAgent.Settings s = DeployedAgent.read(root.resolve(DeployedAgent.UNIT));
        assertTrue(s.jvm().stream().anyMatch(f -> f.matches("-Xmx\\d+[mg]")), s.jvm().toString());
        assertTrue(s.jvm().contains("-XX:+UseSerialGC"), s.jvm().toString());
        assertFalse(s.jvm().stream().anyMatch(f -> f.startsWith("-Djava.io.tmpdir")), "container paths are the run's");
        assertEquals("2", s.env().get("MALLOC_ARENA_MAX"));
        assertFalse(s.env().containsKey("FACE_MODEL_CACHE"));
    }
}
