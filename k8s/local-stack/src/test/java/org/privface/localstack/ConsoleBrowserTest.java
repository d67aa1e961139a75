package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The operator console in real headless Chromium (Playwright, recognizer/src/main/console/e2e)
 * against the demo's stack: a Kafka broker process, the recognizer and a live gateway on an
 * MJPEG camera. Logs in, sees the site, proposes one ε the gateway applies and one it clamps to
 * its floor, and finds both in the audit trail. Screenshots go to target/console-screenshots.
 */
class ConsoleBrowserTest {
    private final List<AutoCloseable> running = new ArrayList<>();

    @AfterEach
    void stop() {
        FaultKit.closeAll(running);
    }

    @Test
    void anOperatorChangesEpsilonAndSeesTheGatewayApplyOrClampIt() throws Exception {
        Path root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        Path console = root.resolve("recognizer/src/main/console");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/chromium")),
                "Debian's chromium is not installed (src/test/sh/ensure-chromium.sh installs it as root)");
        assumeTrue(Files.isDirectory(console.resolve("node_modules/playwright-core")),
                "playwright-core is not installed: build the recognizer first (it runs npm ci)");
        BrokerOutageTest.assumeBrokerJarsResolvable(root);
        Path work = Files.createTempDirectory("privface-console-");
        Map<String, String> opt = Demo.defaults();
        opt.put("--password", "console-test-" + System.nanoTime());
        Demo.Outcome o = Demo.execute(root, root.resolve("test-data/synthetic"), opt, work, running);
        DemoProcesses.startLiveGateway(root, o.stack(), opt, work, running, 5);

        Path shots = root.resolve("k8s/local-stack/target/console-screenshots");
        ProcessBuilder pb = new ProcessBuilder("node", "--test", "--test-concurrency=1", "e2e/console.e2e.mjs")
                .directory(console.toFile()).redirectErrorStream(true)
                .redirectOutput(work.resolve("e2e.log").toFile());
        pb.environment().putAll(Map.of(
                "CONSOLE_URL", o.stack().consoleUrl(),
                "CONSOLE_OPERATOR", o.stack().operator(),
                "CONSOLE_PASSWORD", o.stack().password(),
                "CONSOLE_SITE", o.stack().site(),
                "CONSOLE_GATEWAY", "demo-gateway-live",
                // The demo's gateways keep ε within [.., max(100, ε)].
                "CONSOLE_FLOOR_MAX", "100",
                "SCREENSHOT_DIR", shots.toString()));
        Process p = pb.start();
        boolean done = p.waitFor(240, TimeUnit.SECONDS);
        if (!done) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        String out = Files.readString(work.resolve("e2e.log"));
        System.out.println(out);
        assertEquals(0, done ? p.exitValue() : -1, "the browser tests failed; screenshots in " + shots + "\n" + out);
    }
}
