package org.privface.benchmarks;

import static org.privface.benchmarks.EdgePasses.accuracy;
import static org.privface.benchmarks.EdgePasses.defaultDetector;
import static org.privface.benchmarks.EdgePasses.detectPass;
import static org.privface.benchmarks.EdgePasses.pipelinePass;
import static org.privface.benchmarks.EdgeScenes.HEIGHT;
import static org.privface.benchmarks.EdgeScenes.WIDTH;
import static org.privface.benchmarks.EdgeScenes.scenes;
import static org.privface.benchmarks.Host.deleteTree;
import static org.privface.benchmarks.Host.gcNames;
import static org.privface.benchmarks.Host.loadAverage;
import static org.privface.benchmarks.Host.memory;
import static org.privface.benchmarks.Host.onlineCpus;
import static org.privface.benchmarks.Host.pin;
import static org.privface.benchmarks.Host.status;
import static org.privface.benchmarks.Host.threadSummary;
import static org.privface.benchmarks.Report.meanSd;
import static org.privface.benchmarks.Report.row;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.opencv.core.Core;
import org.privface.agent.AgentSettings;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceDetector;
import org.privface.agent.image.OpenCv;
import org.privface.agent.publish.DiskSpool;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.track.BudgetPolicy;
import org.privface.benchmarks.EdgePasses.Accuracy;
import org.privface.benchmarks.EdgePasses.Config;
import org.privface.benchmarks.EdgePasses.PipelineRun;
import org.privface.benchmarks.EdgePasses.Run;
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
 * The edge pipeline against the targets of issue 5, in one run on one core: detection alone, the
 * whole per-frame pipeline without the network, and the pipeline forwarding to a real Kafka broker
 * at a paced 25 frames/s, with capture-to-acknowledgement latency and resident memory.
 *
 * <p>Frames: {@code --frames} 640×480 BGR frames built in memory, each with 1 to 3 of the synthetic
 * enrollment faces (test-data/synthetic/enroll, boxes from faces.csv) scaled to 36–96 px wide and
 * blended onto a generated background (gradient, rectangles, discs, sensor noise). Seeded, so every
 * run sees the same frames. Detection accuracy against the known boxes is reported per detector.
 *
 * <p>Release path: the agent's defaults (PEEP l1-clip, nc 8, disk spool) except the budget, which is
 * {@code every-n:n=1} at ε/1000 a release, so every face that can be cropped is perturbed, built and
 * spooled: the heaviest case. (Under the default {@code once} a track is released once; the cost
 * of a release does not depend on ε.)
 *
 * <p>One core: the harness pins its own JVM (all threads: GC, JIT, the uplink's sender and the
 * Kafka producer's I/O thread) to one CPU with {@code taskset} and the broker to another. The
 * unpaced passes run the pipeline on the main thread; the paced ones hand frames to it as the agent
 * does, through {@code CameraSupervisor}'s one-frame slot, so frames it has no time for are dropped. Start the JVM with {@code -XX:ActiveProcessorCount=1} so it
 * sizes itself as on a one-core gateway. Work is timed in wall time and in the process's CPU time;
 * on a shared machine the second is the better estimate of what a dedicated core would do, and the
 * share of the CPU that other processes took is reported from /proc/stat. Repetitions interleave the
 * configurations, and each whole-pipeline run is divided by the detection run just before it, so
 * slow phases of a noisy machine hit both sides of a ratio.
 *
 * <p>The per-frame steps copy {@code CameraWorker.accept} (package-private in the agent) minus its
 * Micrometer counters: grey, detect, track, budget, crop, PEEP, record, spool.
 *
 * <p>Options: {@code --root DIR} (repository root), {@code --frames 200}, {@code --reps 5},
 * {@code --variant-reps 3}, {@code --seconds 20}, {@code --fps 25} and {@code --paced-reps 3} (paced runs),
 * {@code --agent-cpu 1}, {@code --broker-cpu 0}, {@code --remedy-width 320}, {@code --seed 5},
 * {@code --out FILE}, and the flags {@code --no-variants}, {@code --no-broker},
 * {@code --no-paced-default}.
 *
 * <p>The deep face stack (issue 16, {@link DeepStack}): {@code --deep-frames 100} 640×480 frames of
 * real faces (lfw5 and ORL under {@code --datasets DIR}, default FACE_DATASETS), each detector's
 * speed and recall on them, the embedding's cost per face, and the pipeline with the embedding
 * against detection alone; {@code --no-deep} leaves it out, {@code --only-deep} runs nothing else,
 * {@code --only-embedding} (with {@code --only-deep}) only the embedding's cost per face. Crowd scenes
 * ({@code --crowd-scenes 20}, 0 for none: 10–20 faces each) run beside the 1–3-face ones in the pipeline
 * and paced parts; {@code --only-paced} skips the detector table, the embedding's cost and the
 * every-face pass, leaving the held scenes against detection alone and the paced runs with the broker.
 *
 * <p>Parts: {@link EdgeScenes} (the frames), {@link EdgePasses} and {@link EdgePipeline} (the timed
 * passes), {@link BrokerLatency} (the paced runs with the broker), {@link Host} (pinning and /proc
 * readings), {@link Report} (the printed and written report).
 */
public final class EdgeBenchmark {
    static final String SITE = "edge-bench";
    static final String CAMERA = "cam-bench";
    static final String LBP = "lbpcascades/lbpcascade_frontalface_improved.xml";

    private EdgeBenchmark() {
    }

    // ------------------------------------------------------------------ options

    record Options(Path root, int frames, int reps, int variantReps, double seconds, double fps, int agentCpu,
                   int brokerCpu, boolean broker, boolean variants, boolean pacedDefault, int pacedReps, int remedyWidth,
                   long seed, Path out, boolean deep, boolean onlyDeep, int deepFrames, Path datasets,
                   boolean onlyEmbedding, boolean onlyPaced, int crowdScenes) {

        static Options parse(String[] raw) {
            // Maven passes -Dedge.args="..." as one argument: split it like the evaluations do.
            String[] args = Arrays.stream(raw).flatMap(a -> Arrays.stream(a.trim().split("\\s+")))
                    .filter(a -> !a.isEmpty()).toArray(String[]::new);
            Map<String, String> m = new LinkedHashMap<>();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (a.isBlank()) {
                    continue;
                }
                if (!a.startsWith("--")) {
                    throw new IllegalArgumentException("unexpected argument " + a);
                }
                boolean flag = i + 1 >= args.length || args[i + 1].startsWith("--");
                m.put(a.substring(2), flag ? "true" : args[++i]);
            }
            Options o = new Options(Path.of(m.getOrDefault("root", ".")).toAbsolutePath().normalize(),
                    Integer.parseInt(m.getOrDefault("frames", "200")), Integer.parseInt(m.getOrDefault("reps", "5")),
                    Integer.parseInt(m.getOrDefault("variant-reps", "3")),
                    Double.parseDouble(m.getOrDefault("seconds", "20")), Double.parseDouble(m.getOrDefault("fps", "25")),
                    Integer.parseInt(m.getOrDefault("agent-cpu", "1")), Integer.parseInt(m.getOrDefault("broker-cpu", "0")),
                    !m.containsKey("no-broker"), !m.containsKey("no-variants"), !m.containsKey("no-paced-default"),
                    Integer.parseInt(m.getOrDefault("paced-reps", "3")), Integer.parseInt(m.getOrDefault("remedy-width", "320")),
                    Long.parseLong(m.getOrDefault("seed", "5")),
                    m.containsKey("out") ? Path.of(m.get("out")) : null, !m.containsKey("no-deep"), m.containsKey("only-deep"),
                    Integer.parseInt(m.getOrDefault("deep-frames", "100")),
                    m.containsKey("datasets") ? Path.of(m.get("datasets")) : FaceDatasets.root().orElse(null),
                    m.containsKey("only-embedding"), m.containsKey("only-paced"),
                    Integer.parseInt(m.getOrDefault("crowd-scenes", "20")));
            m.keySet().removeAll(List.of("root", "frames", "reps", "variant-reps", "seconds", "fps", "agent-cpu",
                    "broker-cpu", "no-broker", "no-variants", "no-paced-default", "paced-reps", "remedy-width", "seed", "out",
                    "no-deep", "only-deep", "deep-frames", "datasets", "only-embedding", "only-paced", "crowd-scenes"));
            if (!m.isEmpty()) {
                throw new IllegalArgumentException("unknown options " + m.keySet());
            }
            return o;
        }
    }

    // ------------------------------------------------------------------ main

    public static void main(String[] args) throws Exception {
        long started = System.nanoTime();
        // JavaCPP refuses allocations once the process's resident memory passes 4 × -Xmx; the frame store
        // (native, 176 MiB at 200 frames) is the benchmark's, not the agent's, so it must not count.
        System.setProperty("org.bytedeco.javacpp.maxPhysicalBytes", "0");
        Options opt = Options.parse(args);
        Report report = new Report();
        AgentSettings defaults = new AgentSettings();

        // Pin first, so OpenCV sizes its thread pool for one CPU and every JVM thread inherits the mask.
        long self = ProcessHandle.current().pid();
        boolean pinned = pin(self, opt.agentCpu());
        OpenCv.load();
        String rssStart = memory(self);

        KafkaServerProcess kafka = null;
        Path work = Files.createTempDirectory("edge-bench");
        try {
            if (opt.broker()) {
                kafka = KafkaServerProcess.start(opt.root(), work);
                pin(kafka.pid(), opt.brokerCpu());
                Properties ap = new Properties();
                ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
                try (Admin admin = Admin.create(ap)) {
                    new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
                }
            }
            run(opt, report, defaults, pinned, rssStart, kafka, work);
        } finally {
            if (kafka != null) {
                kafka.close();
            }
            deleteTree(work);
        }
        report.line("");
        report.line(String.format(Locale.ROOT, "edge benchmark finished in %.0f s", (System.nanoTime() - started) / 1e9));
        if (opt.out() != null) {
            Files.createDirectories(opt.out().toAbsolutePath().getParent());
            Files.writeString(opt.out(), report.text(), StandardCharsets.UTF_8);
        }
    }

    private static void run(Options opt, Report report, AgentSettings defaults, boolean pinned, String rssStart,
                            KafkaServerProcess kafka, Path work) throws Exception {
        long pid = ProcessHandle.current().pid();
        report.line("# Edge pipeline benchmark");
        report.line("");
        report.line(String.format(Locale.ROOT, "- JVM %s %s, availableProcessors %d, GC %s, max heap %.0f MiB",
                System.getProperty("java.vm.name"), System.getProperty("java.runtime.version"),
                Runtime.getRuntime().availableProcessors(), gcNames(), Runtime.getRuntime().maxMemory() / 1048576.0));
        report.line(String.format(Locale.ROOT, "- machine: %d online CPUs, load average %s at start", onlineCpus(), loadAverage()));
        report.line(String.format(Locale.ROOT, "- agent JVM pinned to CPU %d: %s; broker: %s; OpenCV threads %d",
                opt.agentCpu(), pinned ? "yes" : "NO (taskset failed)",
                kafka == null ? "not started" : "Kafka process pinned to CPU " + opt.brokerCpu(), Core.getNumThreads()));

        Path synthetic = opt.root().resolve("test-data/synthetic");
        List<Scene> scenes = scenes(synthetic, opt.frames(), opt.seed());
        // Native pixels, all written, so all resident; building them left heap garbage that a full GC gives back.
        long frameStoreKb = (long) scenes.size() * WIDTH * HEIGHT * 3 / 1024;
        System.gc();
        int faceCount = scenes.stream().mapToInt(s -> s.faces().size()).sum();
        report.line(String.format(Locale.ROOT, "- frames: %d × %d×%d BGR, %d faces (%.2f per frame), seed %d",
                scenes.size(), WIDTH, HEIGHT, faceCount, faceCount / (double) scenes.size(), opt.seed()));

        // The agent's mechanism defaults; the budget releases every face (see the class comment).
        BudgetPolicy budgetPolicy = BudgetPolicy.parse("every-n:n=1,epsilon=" + defaults.getEpsilon() / 1000);
        double epsilonPerRelease = budgetPolicy.epsilonPerRelease(defaults.getEpsilon());
        EigenBasis basis = EigenBasis.fit(FaceDatasets.detected(synthetic.resolve("enroll"), defaultDetector(defaults),
                FaceCrops.Shape.PEEP).faces(), defaults.getComponents(), FaceCrops.WIDTH, FaceCrops.HEIGHT);
        // The shipped default mode (sign-cap) is the EMBEDDING mechanism's; PEEP on the crop keeps its own, l1-clip.
        String peepMode = defaults.defaultPolicy().mechanism() == Mechanism.PEEP ? defaults.getSensitivityMode() : "l1-clip";
        PeepMechanism mechanism = new PeepMechanism(basis, SensitivityMode.fromWireName(peepMode),
                epsilonPerRelease, new SecureLaplace());
        report.line(String.format(Locale.ROOT, "- release path: PEEP %s, nc %d (agent defaults); budget %s, so every face"
                        + " is released; spool %d MiB %s, fsync every %d appends",
                peepMode, basis.dimension(), budgetPolicy.spec(),
                defaults.getSpool().getMaxBytes() >> 20, defaults.getSpool().getDropPolicy(), DiskSpool.DEFAULT_SYNC_EVERY_APPENDS));
        if (opt.onlyDeep()) {
            DeepStack.run(opt, report, defaults, mechanism, budgetPolicy, work, kafka);
            return;
        }

        int w = opt.remedyWidth();
        String h = FaceDetector.DEFAULT_CASCADE;
        Config defaultConfig = new Config("default: Haar, scaleFactor 1.1, minNeighbors 4, minFaceSize 40",
                () -> defaultDetector(defaults), 0);
        Config remedy = new Config("maxDetectWidth " + w, () -> new FaceDetector(defaults.getCascade(),
                defaults.getScaleFactor(), defaults.getMinNeighbors(), defaults.getMinFaceSize(), w), 0);
        Config fast = new Config("maxDetectWidth " + w + " + scaleFactor 1.2", () -> new FaceDetector(h, 1.2, 4, 40, w), 0);
        List<Config> variants = new ArrayList<>();
        if (opt.variants()) {
            variants.add(new Config("scaleFactor 1.2", () -> new FaceDetector(h, 1.2, 4, 40), 0));
            variants.add(new Config("minFaceSize 60", () -> new FaceDetector(h, 1.1, 4, 60), 0));
            variants.add(new Config("LBP cascade (lbpcascade_frontalface_improved)", () -> new FaceDetector(LBP, 1.1, 4, 40), 0));
            variants.add(new Config("cv::setNumThreads(2) on the one pinned CPU", () -> defaultDetector(defaults), 2));
            variants.add(fast);
            variants.add(new Config("maxDetectWidth " + w + " + minNeighbors 2", () -> new FaceDetector(h, 1.1, 2, 40, w), 0));
        }

        // Accuracy, untimed; the passes also warm the detectors up.
        report.line("");
        report.line("## Detection accuracy on the composited frames");
        report.line("");
        report.line("A detection hits a face when its centre lies in the face's box (faces.csv's box, scaled) and it is 0.8–2.0× as wide.");
        report.line("");
        report.line("| detector | frames with exactly the expected faces | faces found | faces under 48 px wide found | false detections |");
        report.line("|---|---|---|---|---|");
        List<Config> all = new ArrayList<>(List.of(defaultConfig, remedy));
        all.addAll(variants);
        for (Config c : all) {
            Accuracy a = accuracy(scenes, c);
            report.line(String.format(Locale.ROOT, "| %s | %d / %d (%.1f%%) | %d / %d (%.1f%%) | %d / %d | %d |", c.name(),
                    a.exactFrames(), scenes.size(), 100.0 * a.exactFrames() / scenes.size(), a.found(), a.faces(),
                    100.0 * a.found() / a.faces(), a.smallFound(), a.small(), a.falseDetections()));
        }

        String bootstrap = kafka == null ? "127.0.0.1:9" : kafka.bootstrapServers();
        try (FacePublisher publisher = new FacePublisher(bootstrap, SITE, new Properties())) {
            pipelinePass(scenes, defaultConfig, mechanism, budgetPolicy, defaults, publisher, work);
            pipelinePass(scenes, remedy, mechanism, budgetPolicy, defaults, publisher, work);

            Map<String, List<Run>> runs = new LinkedHashMap<>();
            List<Double> ratioDefault = new ArrayList<>();
            List<Double> ratioRemedy = new ArrayList<>();
            List<Double> ratioDefaultCpu = new ArrayList<>();
            List<Double> ratioRemedyCpu = new ArrayList<>();
            List<String> counts = new ArrayList<>();
            CpuShare share = CpuShare.start(opt.agentCpu());
            for (int r = 0; r < opt.reps(); r++) {
                Run a = detectPass(scenes, defaultConfig);
                PipelineRun b = pipelinePass(scenes, defaultConfig, mechanism, budgetPolicy, defaults, publisher, work);
                Run a2 = detectPass(scenes, remedy);
                PipelineRun b2 = pipelinePass(scenes, remedy, mechanism, budgetPolicy, defaults, publisher, work);
                runs.computeIfAbsent("a default", k -> new ArrayList<>()).add(a);
                runs.computeIfAbsent("b default", k -> new ArrayList<>()).add(b.run());
                runs.computeIfAbsent("a remedy", k -> new ArrayList<>()).add(a2);
                runs.computeIfAbsent("b remedy", k -> new ArrayList<>()).add(b2.run());
                ratioDefault.add(b.run().fps() / a.fps());
                ratioRemedy.add(b2.run().fps() / a2.fps());
                ratioDefaultCpu.add(b.run().cpuFps() / a.cpuFps());
                ratioRemedyCpu.add(b2.run().cpuFps() / a2.cpuFps());
                if (r == 0) {
                    counts.add("default: " + b.counts());
                    counts.add(remedy.name() + ": " + b2.counts());
                }
                if (r < opt.variantReps()) {
                    // Rotate the order so no variant always runs in the same phase of the machine's load.
                    for (int k = 0; k < variants.size(); k++) {
                        Config c = variants.get((k + r) % variants.size());
                        runs.computeIfAbsent(c.name(), x -> new ArrayList<>()).add(detectPass(scenes, c));
                    }
                }
                System.out.printf(Locale.ROOT, "  rep %d: detect %.1f fps, pipeline %.1f fps; %s: detect %.1f, pipeline %.1f (load %s)%n",
                        r + 1, a.fps(), b.run().fps(), remedy.name(), a2.fps(), b2.run().fps(), loadAverage());
            }
            CpuShare.Result contention = share.stop();

            report.line("");
            report.line(String.format(Locale.ROOT, "## Throughput on one core (%d frames a run; %d runs, variants %d)",
                    scenes.size(), opt.reps(), Math.min(opt.reps(), opt.variantReps())));
            report.line("");
            report.line("| what | frames/s (wall) | frames per CPU-second | ms per frame (wall) |");
            report.line("|---|---|---|---|");
            row(report, "a. detection only, default", runs.get("a default"));
            row(report, "b. whole pipeline without network, default", runs.get("b default"));
            row(report, "a. detection only, " + remedy.name(), runs.get("a remedy"));
            row(report, "b. whole pipeline without network, " + remedy.name(), runs.get("b remedy"));
            for (Config c : variants) {
                row(report, "detection only, " + c.name(), runs.get(c.name()));
            }
            report.line("");
            report.line(String.format(Locale.ROOT, "- b / a, default: %s (wall), %s (CPU time)", meanSd(ratioDefault, 3),
                    meanSd(ratioDefaultCpu, 3)));
            report.line(String.format(Locale.ROOT, "- b / a, %s: %s (wall), %s (CPU time)", remedy.name(), meanSd(ratioRemedy, 3),
                    meanSd(ratioRemedyCpu, 3)));
            counts.forEach(c -> report.line("- pipeline, one pass, " + c));
            report.line(String.format(Locale.ROOT, "- contention on CPU %d while timing: other processes %.0f%%, hypervisor steal %.0f%%,"
                    + " this JVM %.0f%% of the wall time", opt.agentCpu(), 100 * contention.others(), 100 * contention.steal(),
                    100 * contention.self()));

            if (kafka != null) {
                new BrokerLatency(opt, kafka, scenes, mechanism, budgetPolicy, defaults, publisher, work)
                        .report(report, List.of(remedy, fast), defaultConfig);

                long rss = status(pid, "VmRSS");
                long hwm = status(pid, "VmHWM");
                long committed = Runtime.getRuntime().totalMemory();
                System.gc();
                long live = Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory();
                report.line("");
                report.line("## Resident memory");
                report.line("");
                report.line(String.format(Locale.ROOT, "- agent JVM at start, OpenCV loaded: %s", rssStart));
                report.line(String.format(Locale.ROOT, "- after the broker runs: %s; peak VmHWM %.0f MiB", memory(pid), hwm / 1024.0));
                report.line(String.format(Locale.ROOT, "- of that, the benchmark's frame store is %.0f MiB anonymous (a camera holds"
                        + " one frame): %.0f MiB without it", frameStoreKb / 1024.0, (rss - frameStoreKb) / 1024.0));
                report.line(String.format(Locale.ROOT, "- Java heap: %.0f MiB committed, %.0f MiB live after a full GC",
                        committed / 1048576.0, live / 1048576.0));
                report.line(String.format(Locale.ROOT, "- broker JVM (-Xmx512m): %s", memory(kafka.pid())));
                report.line("- agent JVM threads: " + threadSummary(pid));
            }
        }
        if (opt.deep()) {
            DeepStack.run(opt, report, defaults, mechanism, budgetPolicy, work, kafka);
        }
        report.line("");
        report.line(String.format(Locale.ROOT, "- load average at end: %s", loadAverage()));
    }
}
