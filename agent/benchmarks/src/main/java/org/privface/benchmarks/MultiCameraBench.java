package org.privface.benchmarks;

import static org.privface.benchmarks.EdgeBenchmark.SITE;
import static org.privface.benchmarks.Host.deleteTree;
import static org.privface.benchmarks.Host.loadAverage;
import static org.privface.benchmarks.Host.pin;
import static org.privface.benchmarks.Host.processCpuNanos;
import static org.privface.benchmarks.Host.status;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;
import org.privface.agent.AgentSettings;
import org.privface.agent.capture.CameraSupervisor;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.image.OpenCv;
import org.privface.agent.detect.UltraFaceDetector;
import org.privface.agent.detect.YuNetDetector;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.infer.SharedModels;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.publish.DiskSpool;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.publish.Uplink;
import org.privface.agent.track.BudgetPolicy;
import org.privface.benchmarks.BrokerLatency.LatencyRegistry;
import org.privface.benchmarks.BrokerLatency.PacedCamera;
import org.privface.benchmarks.EdgeScenes.Scene;
import org.privface.benchmarks.Host.CpuShare;
import org.privface.broker.KafkaServerProcess;
import org.privface.privacy.EigenBasis;
import org.privface.privacy.PeepMechanism;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.SensitivityMode;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * Several cameras in one gateway process on one pinned core (issue 44): for each frame rate and
 * camera count, that many paced cameras ({@link PacedCamera}, each behind its own
 * {@link CameraSupervisor} as in the agent) feed one process whose detector and embedder are the
 * agent's {@link SharedModels} (one of each, a fair queue per camera), releasing through one
 * {@link Uplink} to a real Kafka broker on another core. Reports per camera the frames processed
 * and dropped, the latency from capture to the broker's acknowledgement (all cameras' records
 * pooled), the JVM's CPU time per frame, its peak VmRSS and NMT's committed total, and the load on
 * the machine (/proc/loadavg, and the share of the pinned CPU that other processes took).
 *
 * <p>Frames: the edge benchmark's synthetic scenes (1–3 faces), each held {@value DeepStack#DWELL}
 * frames as a person stays in view, camera k starting k scenes later than camera 0. Release: the
 * agent's defaults (the shipped policy and budget), with the deep default detector (YuNet where
 * installed, else UltraFace, else the Haar cascade) and the shipped embedding where installed.
 *
 * <p>Options: {@code --root DIR}, {@code --cameras 1,4,8}, {@code --fps 10,25}, {@code --seconds 20},
 * {@code --agent-cpu 1}, {@code --broker-cpu 0}, {@code --frames 40} (distinct scenes), {@code --seed 5},
 * {@code --out FILE.md} (the chart is written beside it as {@code .png}), {@code --own-models} (each
 * camera builds its own detector and embedder, as before issue 44), {@code --crowd} (scenes of 10–20
 * synthetic faces instead of 1–3).
 */
public final class MultiCameraBench {
    private MultiCameraBench() {
    }

    record Options(Path root, List<Integer> cameras, List<Double> fps, double seconds, int agentCpu, int brokerCpu,
                   int frames, long seed, Path out, boolean ownModels, boolean crowd) {
        static Options parse(String[] raw) {
            String[] args = Arrays.stream(raw).flatMap(a -> Arrays.stream(a.trim().split("\\s+")))
                    .filter(a -> !a.isEmpty()).toArray(String[]::new);
            Map<String, String> m = new LinkedHashMap<>();
            for (int i = 0; i < args.length; i++) {
                if (!args[i].startsWith("--")) {
                    throw new IllegalArgumentException("unexpected argument " + args[i]);
                }
                boolean flag = i + 1 >= args.length || args[i + 1].startsWith("--");
                m.put(args[i].substring(2), flag ? "true" : args[++i]);
            }
            Options o = new Options(Path.of(m.getOrDefault("root", ".")).toAbsolutePath().normalize(),
                    Arrays.stream(m.getOrDefault("cameras", "1,4,8").split(",")).map(Integer::parseInt).toList(),
                    Arrays.stream(m.getOrDefault("fps", "10,25").split(",")).map(Double::parseDouble).toList(),
                    Double.parseDouble(m.getOrDefault("seconds", "20")), Integer.parseInt(m.getOrDefault("agent-cpu", "1")),
                    Integer.parseInt(m.getOrDefault("broker-cpu", "0")), Integer.parseInt(m.getOrDefault("frames", "40")),
                    Long.parseLong(m.getOrDefault("seed", "5")), m.containsKey("out") ? Path.of(m.get("out")) : null,
                    m.containsKey("own-models"), m.containsKey("crowd"));
            m.keySet().removeAll(List.of("root", "cameras", "fps", "seconds", "agent-cpu", "broker-cpu", "frames", "seed", "out",
                    "own-models", "crowd"));
            if (!m.isEmpty()) {
                throw new IllegalArgumentException("unknown options " + m.keySet());
            }
            return o;
        }
    }

    /** One camera's frames in a run. */
    record CameraCount(long due, long processed, long dropped) {
    }

    /** One run: {@code cameras} cameras at {@code fps}. */
    record Run(int cameras, double fps, List<CameraCount> perCamera, long faces, long embedded, long released, long acked,
               double p50, double p99,
               double cpuMsPerFrame, double others, long rssMaxKb, String nmtCommitted, double heapLiveMiB, String loadStart,
               String loadEnd) {
        long processed() {
            return perCamera.stream().mapToLong(CameraCount::processed).sum();
        }

        long dropped() {
            return perCamera.stream().mapToLong(CameraCount::dropped).sum();
        }
    }

    public static void main(String[] args) throws Exception {
        // The frame store is the benchmark's, not the agent's: JavaCPP must not refuse it against -Xmx.
        System.setProperty("org.bytedeco.javacpp.maxPhysicalBytes", "0");
        Options opt = Options.parse(args);
        long self = ProcessHandle.current().pid();
        boolean pinned = pin(self, opt.agentCpu());
        OpenCv.load();
        Report report = new Report();
        AgentSettings defaults = new AgentSettings();
        Path work = Files.createTempDirectory("multicam-bench");
        KafkaServerProcess kafka = null;
        try {
            kafka = KafkaServerProcess.start(opt.root(), work);
            pin(kafka.pid(), opt.brokerCpu());
            Properties ap = new Properties();
            ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            try (Admin admin = Admin.create(ap)) {
                new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
            }
            Path synthetic = opt.root().resolve("test-data/synthetic");
            List<Scene> scenes = DeepStack.held(opt.crowd()
                    ? EdgeScenes.scenes(synthetic, opt.frames(), opt.seed(), DeepStack.CROWD_MIN, DeepStack.CROWD_MAX)
                    : EdgeScenes.scenes(synthetic, opt.frames(), opt.seed()));

            Supplier<FaceFinder> detector;
            String detectorName;
            Path yunet = FaceModels.findYunet(null).orElse(null);
            if (yunet != null) {
                detector = () -> new YuNetDetector(yunet, YuNetDetector.DEFAULT_SCORE, 0);
                detectorName = "YuNet";
            } else if (FaceModels.hasFaceplugin(FaceModels.DETECT) && FaceModels.hasFaceplugin(FaceModels.LANDMARK)) {
                detector = UltraFaceDetector::fromPackage;
                detectorName = "UltraFace";
            } else {
                detector = () -> EdgePasses.defaultDetector(defaults);
                detectorName = "Haar (no deep detector installed)";
            }
            Supplier<FaceEmbedder> embedder = defaults.getEmbedder().missing().isEmpty() ? defaults.getEmbedder()::create : null;
            BudgetPolicy policy = BudgetPolicy.parse(defaults.getBudget());
            EigenBasis basis = EigenBasis.fit(FaceDatasets.detected(synthetic.resolve("enroll"), EdgePasses.defaultDetector(defaults),
                    FaceCrops.Shape.PEEP).faces(), defaults.getComponents(), FaceCrops.WIDTH, FaceCrops.HEIGHT);
            String peepMode = defaults.defaultPolicy().mechanism() == Mechanism.PEEP ? defaults.getSensitivityMode() : "l1-clip";
            PeepMechanism mechanism = new PeepMechanism(basis, SensitivityMode.fromWireName(peepMode),
                    policy.epsilonPerRelease(defaults.getEpsilon()), new SecureLaplace());

            report.line("# Several cameras in one gateway process (issue 44)");
            report.line("");
            report.line(String.format(Locale.ROOT, "- JVM %s, availableProcessors %d, GC %s, max heap %.0f MiB; pinned to CPU %d: %s;"
                            + " broker on CPU %d", System.getProperty("java.runtime.version"), Runtime.getRuntime().availableProcessors(),
                    Host.gcNames(), Runtime.getRuntime().maxMemory() / 1048576.0, opt.agentCpu(), pinned ? "yes" : "NO",
                    opt.brokerCpu()));
            report.line(String.format(Locale.ROOT, "- machine: %d online CPUs, load average %s at start", Host.onlineCpus(), loadAverage()));
            report.line(String.format(Locale.ROOT, "- %s detector, embedding %s, policy %s, budget %s; models %s", detectorName,
                    embedder == null ? "not installed (none)" : defaults.getEmbedder().getNetwork(), defaults.defaultPolicy().mechanism(),
                    policy.spec(), opt.ownModels() ? "built per camera (--own-models)" : "shared (one per network, fair queue)"));
            report.line(String.format(Locale.ROOT, "- frames: %d synthetic scenes of %s faces (%d in all), each held %d frames;"
                    + " %.0f s a run", opt.frames(), opt.crowd() ? DeepStack.CROWD_MIN + "–" + DeepStack.CROWD_MAX : "1–3",
                    scenes.stream().mapToInt(x -> x.faces().size()).sum() / DeepStack.DWELL, DeepStack.DWELL, opt.seconds()));

            List<Run> runs = new ArrayList<>();
            try (FacePublisher publisher = new FacePublisher(kafka.bootstrapServers(), SITE, new Properties())) {
                // Warm-up: the producer's metadata and connection, the JIT, the models' first calls.
                run(1, opt.fps().get(0), 2.0, opt, scenes, detector, embedder, mechanism, policy, defaults, publisher, work,
                        kafka.pid());
                for (double fps : opt.fps()) {
                    for (int n : opt.cameras()) {
                        Run r = run(n, fps, opt.seconds(), opt, scenes, detector, embedder, mechanism, policy, defaults,
                                publisher, work, kafka.pid());
                        runs.add(r);
                        System.out.printf(Locale.ROOT, "  %d cameras at %.0f fps: %d processed, %d dropped, p50 %.0f ms, p99 %.0f ms,"
                                + " VmRSS max %.0f MiB, heap live %.0f MiB (load %s)%n", n, fps, r.processed(), r.dropped(), r.p50(),
                                r.p99(), r.rssMaxKb() / 1024.0, r.heapLiveMiB(), r.loadEnd());
                    }
                }
            }
            table(report, runs);
            if (opt.out() != null) {
                Files.createDirectories(opt.out().toAbsolutePath().getParent());
                Files.writeString(opt.out(), report.text(), StandardCharsets.UTF_8);
                String base = opt.out().toString().replaceFirst("\\.md$", "");
                chart(Path.of(base + ".png"), runs);
            }
        } finally {
            if (kafka != null) {
                kafka.close();
            }
            deleteTree(work);
        }
    }

    static Run run(int n, double fps, double seconds, Options opt, List<Scene> scenes, Supplier<FaceFinder> detector,
                   Supplier<FaceEmbedder> embedder, PeepMechanism mechanism, BudgetPolicy policy, AgentSettings defaults,
                   FacePublisher publisher, Path work, long brokerPid) throws Exception {
        String loadStart = loadAverage();
        Path dir = Files.createTempDirectory(work, "spool");
        long self = ProcessHandle.current().pid();
        SharedModels shared = opt.ownModels() ? null : new SharedModels(2);
        try (DiskSpool spool = DiskSpool.open(dir, DiskSpool.Options.of(defaults.getSpool().getMaxBytes(),
                defaults.getSpool().getDropPolicy()))) {
            LatencyRegistry registry = new LatencyRegistry();
            Uplink uplink = new Uplink(publisher, spool, registry, SITE);
            long period = Math.round(1e9 / fps);
            long due = Math.round(seconds * fps);
            long start = System.nanoTime() + 500_000_000L;
            long startWall = System.currentTimeMillis() + 500;
            List<CameraSupervisor> cams = new ArrayList<>();
            List<EdgePipeline> pipelines = new ArrayList<>();
            for (int k = 0; k < n; k++) {
                String cam = "cam" + k;
                EdgePasses.Config c = new EdgePasses.Config(cam,
                        shared == null ? detector : () -> shared.detector("default", cam, detector), 0,
                        embedder == null ? null : shared == null ? embedder : () -> shared.embedder("release", cam, embedder));
                EdgePipeline p = new EdgePipeline(c, mechanism, policy, defaults, publisher, spool, uplink);
                pipelines.add(p);
                List<Scene> mine = new ArrayList<>(scenes);
                Collections.rotate(mine, -k * DeepStack.DWELL);
                PacedCamera source = new PacedCamera(mine, start, startWall, period, due);
                AtomicBoolean opened = new AtomicBoolean();
                cams.add(new CameraSupervisor(cam, () -> {
                    if (!opened.compareAndSet(false, true)) {
                        throw new IOException("the paced camera has ended");
                    }
                    return source;
                }, true, CameraSupervisor.Settings.defaults(), f -> p.accept(f.image(), f.sequence() + 1, f.capturedAt())));
            }
            AtomicLong rssMax = new AtomicLong();
            AtomicBoolean sampling = new AtomicBoolean(true);
            Thread sampler = new Thread(() -> {
                while (sampling.get()) {
                    rssMax.accumulateAndGet(status(self, "VmRSS"), Math::max);
                    try {
                        Thread.sleep(250);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "rss-sampler");
            sampler.setDaemon(true);
            sampler.start();
            long cpu0 = processCpuNanos();
            CpuShare share = CpuShare.start(opt.agentCpu());
            cams.forEach(CameraSupervisor::start);
            long giveUp = start + due * period + 120_000_000_000L;
            while (System.nanoTime() < giveUp && cams.stream().anyMatch(s -> s.status().frames() + s.status().dropped() < due)) {
                Thread.sleep(20);
            }
            cams.forEach(CameraSupervisor::stop);
            for (CameraSupervisor s : cams) {
                s.awaitTermination(Duration.ofSeconds(10));
            }
            long cpu = processCpuNanos() - cpu0;
            CpuShare.Result contention = share.stop();
            if (!uplink.drain(Duration.ofSeconds(120))) {
                System.err.println("uplink did not drain: " + spool.depth() + " records left");
            }
            uplink.close();
            sampling.set(false);
            sampler.join(1000);
            String nmt = nmtCommitted(self);
            // What the heap must hold: live after a full GC, the models still loaded (the run's end, before they close).
            System.gc();
            double heapLive = (Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory()) / 1048576.0;
            List<CameraCount> counts = new ArrayList<>();
            for (CameraSupervisor s : cams) {
                counts.add(new CameraCount(due, s.status().frames(), s.status().dropped()));
            }
            List<Long> lat;
            synchronized (registry.micros) {
                lat = new ArrayList<>(registry.micros);
            }
            Collections.sort(lat);
            long processed = counts.stream().mapToLong(CameraCount::processed).sum();
            return new Run(n, fps, counts, pipelines.stream().mapToLong(x -> x.counts().faces()).sum(),
                    pipelines.stream().mapToLong(EdgePipeline::embedded).sum(),
                    pipelines.stream().mapToLong(x -> x.counts().released()).sum(), uplink.acknowledged(),
                    BrokerLatency.rank(lat, 0.5) / 1000.0, BrokerLatency.rank(lat, 0.99) / 1000.0,
                    cpu / 1e6 / Math.max(1, processed), contention.others(), rssMax.get(), nmt, heapLive, loadStart, loadAverage());
        } finally {
            if (shared != null) {
                shared.close();
            }
            deleteTree(dir);
        }
    }

    /** NMT's committed total ({@code -XX:NativeMemoryTracking=summary}), from jcmd; "off" without it. */
    static String nmtCommitted(long pid) {
        try {
            Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                    Long.toString(pid), "VM.native_memory", "summary").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("Total: reserved=(\\d+)KB, committed=(\\d+)KB").matcher(out);
            return m.find() ? String.format(Locale.ROOT, "%.0f", Long.parseLong(m.group(2)) / 1024.0) : "off";
        } catch (IOException e) {
            return "no jcmd";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    static void table(Report report, List<Run> runs) {
        report.line("");
        report.line("| cameras | fps | frames processed / due, per camera | dropped, per camera | faces detected / embedded"
                + " | released / acked | p50 ms | p99 ms"
                + " | JVM CPU ms per frame | others on the CPU | VmRSS max MiB | NMT committed MiB | heap live after GC MiB"
                + " | load average start → end |");
        report.line("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for (Run r : runs) {
            report.line(String.format(Locale.ROOT, "| %d | %.0f | %s | %s | %d / %d | %d / %d | %.0f | %.0f | %.1f | %.0f%% | %.0f | %s | %.0f | %s → %s |",
                    r.cameras(), r.fps(),
                    String.join(", ", r.perCamera().stream().map(c -> c.processed() + "/" + c.due()).toList()),
                    String.join(", ", r.perCamera().stream().map(c -> Long.toString(c.dropped())).toList()),
                    r.faces(), r.embedded(), r.released(), r.acked(), r.p50(), r.p99(), r.cpuMsPerFrame(), 100 * r.others(), r.rssMaxKb() / 1024.0,
                    r.nmtCommitted(), r.heapLiveMiB(), r.loadStart(), r.loadEnd()));
        }
    }

    /** p99 and VmRSS against the camera count, one line per frame rate (XChart, as the evaluations' charts). */
    static void chart(Path png, List<Run> runs) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart lat = new XYChartBuilder().width(900).height(520).title("Several cameras on one core: p99 to the broker's ack")
                .xAxisTitle("cameras").yAxisTitle("ms").build();
        XYChart rss = new XYChartBuilder().width(900).height(520).title("Several cameras on one core: agent VmRSS max")
                .xAxisTitle("cameras").yAxisTitle("MiB").build();
        Map<Double, List<Run>> byFps = new LinkedHashMap<>();
        runs.forEach(r -> byFps.computeIfAbsent(r.fps(), k -> new ArrayList<>()).add(r));
        byFps.forEach((fps, rs) -> {
            double[] x = rs.stream().mapToDouble(Run::cameras).toArray();
            lat.addSeries(String.format(Locale.ROOT, "%.0f fps p99", fps), x, rs.stream().mapToDouble(Run::p99).toArray())
                    .setMarker(SeriesMarkers.CIRCLE);
            lat.addSeries(String.format(Locale.ROOT, "%.0f fps p50", fps), x, rs.stream().mapToDouble(Run::p50).toArray())
                    .setMarker(SeriesMarkers.DIAMOND);
            rss.addSeries(String.format(Locale.ROOT, "%.0f fps", fps), x,
                    rs.stream().mapToDouble(r -> r.rssMaxKb() / 1024.0).toArray()).setMarker(SeriesMarkers.CIRCLE);
        });
        BitmapEncoder.saveBitmap(lat, png.toString(), BitmapEncoder.BitmapFormat.PNG);
        BitmapEncoder.saveBitmap(rss, png.toString().replaceFirst("\\.png$", "") + "-rss.png", BitmapEncoder.BitmapFormat.PNG);
    }
}
