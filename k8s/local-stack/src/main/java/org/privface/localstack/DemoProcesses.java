package org.privface.localstack;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import org.privface.broker.KafkaServerProcess;
import org.privface.broker.ManagedProcess;
import org.privface.localstack.Demo.Stack;

/**
 * Starting and stopping the demo's processes: the modules' class paths, health and exit waits, the
 * live gateway {@code --hold} adds, what the agent says it ran, and the clean-up on exit or signal.
 * Split from {@link Demo} (issue 40); the load runs and the whole-system tests start their processes
 * with these too.
 */
public final class DemoProcesses {
    private DemoProcesses() {
    }

    public static String classpath(Path root, String module) throws IOException {
        Path target = root.resolve(module).resolve("target");
        Path cp = target.resolve("runtime.classpath");
        if (!Files.exists(cp)) {
            throw new IllegalStateException(cp + " is missing: build the project first (mvn install)");
        }
        return target.resolve("classes") + java.io.File.pathSeparator + Files.readString(cp).trim();
    }

    public static void awaitHealthy(ManagedProcess p, int port) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            if (!p.alive()) {
                throw new IllegalStateException(p.name() + " exited during start-up; see " + p.log());
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException(p.name() + " not healthy within 60 s; see " + p.log());
    }

    static void awaitExit(ManagedProcess agent, Duration bound) throws Exception {
        int exit = agent.await(bound);
        if (exit != 0) {
            throw new IllegalStateException(agent.name() + " failed with exit code " + exit + "; its log:\n"
                    + Files.readString(agent.log()));
        }
    }

    /**
     * A second gateway of the demo's site on a live camera: an MJPEG feed looping the query
     * frames at {@code fps}. It runs until closed, reports every 2 s and follows the control topic.
     */
    public static ManagedProcess startLiveGateway(Path root, Stack stack, Map<String, String> opt, Path work,
                                                  List<AutoCloseable> running, int fps) throws Exception {
        MjpegFeed feed = new MjpegFeed(stack.query(), fps);
        running.add(feed);
        int port = KafkaServerProcess.freePort();
        Path liveData = Files.createDirectories(work.resolve("agent-live-data"));
        if (stack.basisFile().getFileName().toString().startsWith("private-basis-") && Files.exists(stack.basisFile())) {
            // The live gateway reuses the batch gateway's private fit, so its queries land in the same model's space.
            Files.copy(stack.basisFile(), liveData.resolve(stack.basisFile().getFileName()));
        }
        ManagedProcess agent = ManagedProcess.java("agent-live", classpath(root, "agent"), "org.privface.agent.Application",
                List.of("-Xmx512m", "-Dmicronaut.server.port=" + port,
                        "-Dagent.site-id=" + stack.site(),
                        "-Dagent.gateway-id=demo-gateway-live",
                        "-Dagent.control.report-interval=2s",
                        "-Dagent.control.keys-file=" + stack.operatorKeysFile(),
                        "-Dagent.enroll-folder=" + stack.enroll(),
                        "-Dagent.publish-enrollments=false",
                        "-Dagent.basis-file=" + stack.basisFile(),
                        "-Dagent.cameras.door.url=" + feed.url(),
                        "-Dagent.data-dir=" + liveData,
                        "-Dagent.epsilon=" + opt.get("--epsilon"),
                        "-Dagent.floor.epsilon-max=" + Math.max(100, Double.parseDouble(opt.get("--epsilon"))),
                        "-Dagent.mechanism=" + opt.get("--mechanism"),
                        "-Dagent.sensitivity-mode=" + opt.get("--mode"),
                        "-Dagent.detector=" + opt.get("--detector"),
                        // YuNet, when asked for, from FACE_MODELS or else the shared models beside the checkout.
                        "-Dprivface.models=" + root.resolve("../shared/models").normalize(),
                        "-Dagent.components=" + opt.get("--components")),
                List.of(), stack.security().broker().serviceEnvironment(DemoSecurity.agent(stack.site())), work);
        running.add(agent);
        awaitHealthy(agent, port);
        System.out.println("live gateway: demo-gateway-live on " + feed.url());
        return agent;
    }

    /** What the agent says it ran: the detector that loaded (YuNet falls back to UltraFace) and the embedding's file. */
    static List<String> faceStack(Path agentLog) throws java.io.IOException {
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(agentLog)) {
            for (String what : new String[] {"face detector: ", "face embedding: "}) {
                int at = line.indexOf(what);
                if (at >= 0) {
                    out.add(String.format("%-22s%s", what.trim(), line.substring(at + what.length())));
                }
            }
        }
        if (out.stream().anyMatch(l -> l.startsWith("face embedding:"))) {
            out.add("models' provenance:   docs/face-stack.md (sources, licenses, what is known of training data)");
        }
        return out;
    }

    /** The eigenbasis the agent fitted privately and kept (private-basis-*.eigf), if it fitted one. */
    static java.util.Optional<Path> keptPrivateBasis(Path dataDir) throws java.io.IOException {
        if (!Files.isDirectory(dataDir)) {
            return java.util.Optional.empty();
        }
        try (java.util.stream.Stream<Path> s = Files.list(dataDir)) {
            return s.filter(f -> f.getFileName().toString().matches("private-basis-.*\\.eigf")).sorted().findFirst();
        }
    }

    /** Synchronized: a signal's shutdown hook may run it while the main thread does. */
    static synchronized void stopAll(List<AutoCloseable> running, Path work, Path keepLogsIn) {
        for (int i = running.size() - 1; i >= 0; i--) {
            try {
                running.get(i).close();
            } catch (Exception e) {
                // best effort at shutdown
            }
        }
        running.clear();
        if (keepLogsIn != null) {
            try (Stream<Path> logs = Files.list(work)) {
                Files.createDirectories(keepLogsIn);
                for (Path log : logs.filter(p -> p.toString().endsWith(".log")).toList()) {
                    Files.copy(log, keepLogsIn.resolve(log.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            } catch (IOException e) {
                // logs are a convenience
            }
        }
        try (Stream<Path> s = Files.walk(work)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }
}
