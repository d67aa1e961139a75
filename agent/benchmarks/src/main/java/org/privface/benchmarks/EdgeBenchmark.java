package org.privface.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.stream.Stream;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.cumulative.CumulativeTimer;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.distribution.pause.PauseDetector;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.opencv.core.Core;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.Point;
import org.opencv.core.Rect;
import org.opencv.core.Scalar;
import org.opencv.core.Size;
import org.opencv.imgcodecs.Imgcodecs;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.AgentSettings;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceDetector;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.detect.FaceFinders;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.detect.OpenCv;
import org.privface.agent.detect.UltraFaceDetector;
import org.privface.agent.detect.YuNetDetector;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.embed.OnnxEmbedder;
import org.privface.privacy.EigenBasis;
import org.privface.privacy.PeepMechanism;
import org.privface.privacy.Release;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.SensitivityMode;
import org.privface.agent.publish.DiskSpool;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.publish.SpoolEntry;
import org.privface.agent.publish.Uplink;
import org.privface.agent.track.BudgetPolicy;
import org.privface.agent.track.Box;
import org.privface.agent.track.IouTracker;
import org.privface.agent.track.TrackBudget;
import org.privface.broker.KafkaServerProcess;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.TrackRelease;
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
 * Kafka producer's I/O thread) to one CPU with {@code taskset} and the broker to another, and the
 * pipeline runs on the main thread. Start the JVM with {@code -XX:ActiveProcessorCount=1} so it
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
 * against detection alone; {@code --no-deep} leaves it out, {@code --only-deep} runs nothing else.
 */
public final class EdgeBenchmark {
    static final int WIDTH = 640;
    static final int HEIGHT = 480;
    static final String SITE = "edge-bench";
    static final String CAMERA = "cam-bench";
    static final String LBP = "lbpcascades/lbpcascade_frontalface_improved.xml";
    static final String LATENCY_TIMER = "privface.agent.publish.latency";

    private EdgeBenchmark() {
    }

    // ------------------------------------------------------------------ options

    record Options(Path root, int frames, int reps, int variantReps, double seconds, double fps, int agentCpu,
                   int brokerCpu, boolean broker, boolean variants, boolean pacedDefault, int pacedReps, int remedyWidth,
                   long seed, Path out, boolean deep, boolean onlyDeep, int deepFrames, Path datasets) {

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
                    m.containsKey("datasets") ? Path.of(m.get("datasets")) : FaceDatasets.root().orElse(null));
            m.keySet().removeAll(List.of("root", "frames", "reps", "variant-reps", "seconds", "fps", "agent-cpu",
                    "broker-cpu", "no-broker", "no-variants", "no-paced-default", "paced-reps", "remedy-width", "seed", "out",
                    "no-deep", "only-deep", "deep-frames", "datasets"));
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
        PeepMechanism mechanism = new PeepMechanism(basis, SensitivityMode.fromWireName(defaults.getSensitivityMode()),
                epsilonPerRelease, new SecureLaplace());
        report.line(String.format(Locale.ROOT, "- release path: PEEP %s, nc %d (agent defaults); budget %s, so every face"
                        + " is released; spool %d MiB %s, fsync every %d appends",
                defaults.getSensitivityMode(), basis.dimension(), budgetPolicy.spec(),
                defaults.getSpool().getMaxBytes() >> 20, defaults.getSpool().getDropPolicy(), DiskSpool.DEFAULT_SYNC_EVERY_APPENDS));
        if (opt.onlyDeep()) {
            DeepStack.run(opt, report, defaults, mechanism, budgetPolicy, work);
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
                report.line("");
                report.line(String.format(Locale.ROOT, "## With the broker: paced %.0f frames/s for %.0f s, latency from capture to broker acknowledgement",
                        opt.fps(), opt.seconds()));
                report.line("");
                report.line(String.format(Locale.ROOT, "%d runs of each maxDetectWidth configuration, interleaved (mean ± sd over runs;"
                        + " \"pooled\" over all their records), then one of the default.", opt.pacedReps()));
                report.line("");
                report.line("| detector | frames processed / due | records acked | p50 ms | p99 ms | p99 pooled | max ms | JVM CPU ms per frame | others on the CPU | agent VmRSS max MiB | broker VmRSS max MiB |");
                report.line("|---|---|---|---|---|---|---|---|---|---|---|");
                Map<Config, List<Paced>> pacedRuns = new LinkedHashMap<>();
                for (int r = 0; r < opt.pacedReps(); r++) {
                    for (Config c : List.of(remedy, fast)) {
                        Paced p = paced(scenes, c, mechanism, budgetPolicy, defaults, publisher, work, opt, kafka);
                        pacedRuns.computeIfAbsent(c, k -> new ArrayList<>()).add(p);
                        System.out.printf(Locale.ROOT, "  paced %s: %d/%d frames, p50 %.0f ms, p99 %.0f ms (load %s)%n", c.name(),
                                p.processed(), p.due(), p.p50(), p.p99(), loadAverage());
                    }
                }
                if (opt.pacedDefault()) {
                    pacedRuns.put(defaultConfig, List.of(paced(scenes, defaultConfig, mechanism, budgetPolicy, defaults, publisher,
                            work, opt, kafka)));
                }
                List<String> notes = new ArrayList<>();
                pacedRuns.forEach((c, ps) -> {
                    List<Long> pooled = new ArrayList<>();
                    ps.forEach(p -> pooled.addAll(p.latencies()));
                    Collections.sort(pooled);
                    report.line(String.format(Locale.ROOT, "| %s | %s | %d / %d | %s | %s | %.0f | %s | %s | %s | %.0f | %.0f |", c.name(),
                            ps.stream().map(p -> p.processed() + "/" + p.due()).reduce((x, y) -> x + ", " + y).orElse(""),
                            ps.stream().mapToLong(Paced::acked).sum(), ps.stream().mapToLong(Paced::released).sum(),
                            meanSd(ps.stream().map(Paced::p50).toList(), 0), meanSd(ps.stream().map(Paced::p99).toList(), 0),
                            rank(pooled, 0.99) / 1000.0, meanSd(ps.stream().map(Paced::max).toList(), 0),
                            meanSd(ps.stream().map(Paced::cpuMsPerFrame).toList(), 1),
                            meanSd(ps.stream().map(p -> 100 * p.others()).toList(), 0) + "%",
                            ps.stream().mapToLong(Paced::rssMax).max().orElse(0) / 1024.0,
                            ps.stream().mapToLong(Paced::brokerRssMax).max().orElse(0) / 1024.0));
                    for (Paced p : ps) {
                        notes.add(String.format(Locale.ROOT, "- %s: Micrometer's own %s estimate p50 %.0f ms, p99 %.0f ms;"
                                        + " frames started up to %.0f ms after their tick; frame thread busy %.0f%% of the time",
                                c.name(), LATENCY_TIMER, p.microP50(), p.microP99(), p.maxLateMs(), 100 * p.busy()));
                    }
                });
                report.line("");
                notes.forEach(report::line);

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
            DeepStack.run(opt, report, defaults, mechanism, budgetPolicy, work);
        }
        report.line("");
        report.line(String.format(Locale.ROOT, "- load average at end: %s", loadAverage()));
    }

    // ------------------------------------------------------------------ detectors

    /**
     * A detector configuration; {@code cvThreads} > 0 sets OpenCV's thread count for its runs. With
     * an embedder, the pipeline also embeds every face it releases (the EMBEDDING input step).
     */
    record Config(String name, Supplier<FaceFinder> factory, int cvThreads, Supplier<FaceEmbedder> embedder) {
        Config(String name, Supplier<FaceFinder> factory, int cvThreads) {
            this(name, factory, cvThreads, null);
        }
    }

    /** What CameraWorker hands a detector: the colour frame to the deep ones, its grey copy to the cascade. */
    static Mat detectorInput(FaceFinder d, Mat bgr, Mat grey) {
        return d.readsColour() ? bgr : grey;
    }

    static FaceDetector defaultDetector(AgentSettings s) {
        return new FaceDetector(s.getCascade(), s.getScaleFactor(), s.getMinNeighbors(), s.getMinFaceSize());
    }

    record Accuracy(int exactFrames, int faces, int found, int small, int smallFound, int falseDetections) {
    }

    static Accuracy accuracy(List<Scene> scenes, Config c) {
        FaceFinder d = c.factory().get();
        int exact = 0;
        int faces = 0;
        int found = 0;
        int small = 0;
        int smallFound = 0;
        int fp = 0;
        for (Scene s : scenes) {
            Mat grey = d.readsColour() ? null : FaceCrops.grey(s.bgr());
            List<Rect> det = d.boxes(detectorInput(d, s.bgr(), grey));
            if (grey != null) {
                grey.release();
            }
            boolean[] used = new boolean[det.size()];
            int hits = 0;
            for (Rect g : s.faces()) {
                boolean isSmall = g.width < 48;
                faces++;
                small += isSmall ? 1 : 0;
                for (int j = 0; j < det.size(); j++) {
                    Rect r = det.get(j);
                    double cx = r.x + r.width / 2.0;
                    double cy = r.y + r.height / 2.0;
                    if (!used[j] && cx >= g.x && cx <= g.x + g.width && cy >= g.y && cy <= g.y + g.height
                            && r.width >= 0.8 * g.width && r.width <= 2.0 * g.width) {
                        used[j] = true;
                        hits++;
                        smallFound += isSmall ? 1 : 0;
                        break;
                    }
                }
            }
            found += hits;
            int extra = det.size() - hits;
            fp += extra;
            if (hits == s.faces().size() && extra == 0) {
                exact++;
            }
        }
        return new Accuracy(exact, faces, found, small, smallFound, fp);
    }

    // ------------------------------------------------------------------ timed passes

    /** One timed pass: wall seconds and the process's CPU seconds (all its threads). */
    record Run(int frames, double wallSeconds, double cpuSeconds) {
        double fps() {
            return frames / wallSeconds;
        }

        double cpuFps() {
            return frames / cpuSeconds;
        }
    }

    static Run detectPass(List<Scene> scenes, Config c) {
        FaceFinder d = c.factory().get();
        int before = Core.getNumThreads();
        if (c.cvThreads() > 0) {
            Core.setNumThreads(c.cvThreads());
        }
        try {
            long faces = 0;
            long cpu0 = processCpuNanos();
            long t0 = System.nanoTime();
            for (Scene s : scenes) {
                Mat grey = d.readsColour() ? null : FaceCrops.grey(s.bgr());
                faces += d.detect(detectorInput(d, s.bgr(), grey)).size();
                if (grey != null) {
                    grey.release();
                }
            }
            long t1 = System.nanoTime();
            long cpu1 = processCpuNanos();
            if (faces < 0) {
                throw new AssertionError();
            }
            return new Run(scenes.size(), (t1 - t0) / 1e9, (cpu1 - cpu0) / 1e9);
        } finally {
            Core.setNumThreads(before);
        }
    }

    record PipelineCounts(long frames, long faces, long unfit, long released, long withheld, long spoolDropped) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%d frames, %d faces cropped, %d boxes too near the edge to crop, %d released,"
                    + " %d withheld by the budget, %d dropped by the spool", frames, faces, unfit, released, withheld, spoolDropped);
        }
    }

    record PipelineRun(Run run, PipelineCounts counts) {
    }

    static PipelineRun pipelinePass(List<Scene> scenes, Config c, PeepMechanism mechanism, BudgetPolicy policy,
                                    AgentSettings defaults, FacePublisher publisher, Path work) throws IOException {
        Path dir = Files.createTempDirectory(work, "spool");
        try (DiskSpool spool = DiskSpool.open(dir, DiskSpool.Options.of(defaults.getSpool().getMaxBytes(),
                defaults.getSpool().getDropPolicy()))) {
            Pipeline p = new Pipeline(c, mechanism, policy, defaults, publisher, spool, null);
            long cpu0 = processCpuNanos();
            long t0 = System.nanoTime();
            long seq = 0;
            for (Scene s : scenes) {
                p.accept(s.bgr(), ++seq, Instant.now());
            }
            long t1 = System.nanoTime();
            long cpu1 = processCpuNanos();
            return new PipelineRun(new Run(scenes.size(), (t1 - t0) / 1e9, (cpu1 - cpu0) / 1e9), p.counts());
        } finally {
            deleteTree(dir);
        }
    }

    /**
     * CameraWorker.accept for one camera under one policy version: grey, detect, track, budget,
     * crop, perturb, record, spool (directly, or through the uplink when there is one). With an
     * embedder, each released face is also aligned and embedded, as the EMBEDDING input step does
     * once a release is granted.
     */
    static final class Pipeline {
        private final FaceFinder detector;
        private final FaceEmbedder embedder;
        private final PeepMechanism mechanism;
        private final FacePublisher publisher;
        private final DiskSpool spool;
        private final Uplink uplink;
        private final IouTracker tracker = new IouTracker();
        private final TrackBudget budget;
        private final String topic = Topics.query(SITE);
        private long frames;
        private long faces;
        private long unfit;
        private long released;
        private long withheld;
        private long dropped;

        private long embedded;

        Pipeline(Config c, PeepMechanism mechanism, BudgetPolicy policy, AgentSettings s,
                 FacePublisher publisher, DiskSpool spool, Uplink uplink) {
            this.detector = c.factory().get();
            this.embedder = c.embedder() == null ? null : c.embedder().get();
            this.mechanism = mechanism;
            this.publisher = publisher;
            this.spool = spool;
            this.uplink = uplink;
            this.budget = new TrackBudget(policy, s.getEpsilon(), s.getWindow());
        }

        void accept(Mat image, long sequence, Instant capturedAt) {
            frames++;
            Mat grey = FaceCrops.grey(image);
            try {
                List<DetectedFace> found = detector.detect(detectorInput(detector, image, grey));
                List<Box> b = new ArrayList<>(found.size());
                for (DetectedFace f : found) {
                    b.add(new Box(f.box().x, f.box().y, f.box().width, f.box().height));
                }
                List<IouTracker.Tracked> tracked = tracker.update(b, sequence, capturedAt);
                for (int i = 0; i < found.size(); i++) {
                    IouTracker.Tracked t = tracked.get(i);
                    Optional<double[]> face = FaceCrops.crop(grey, found.get(i).box(), FaceCrops.Shape.PEEP);
                    if (face.isEmpty()) {
                        unfit++;
                        continue;
                    }
                    faces++;
                    if (t.untracked()) { // the tracker is full, as CameraWorker withholds it
                        withheld++;
                        continue;
                    }
                    Optional<TrackBudget.Grant> grant = budget.request(t.trackId(), t.framesSeen(), capturedAt);
                    if (grant.isEmpty()) {
                        withheld++;
                        continue;
                    }
                    TrackBudget.Grant g = grant.get();
                    if (embedder != null) {
                        embedder.embed(image, found.get(i));
                        embedded++;
                    }
                    Release rel = mechanism.perturb(face.get());
                    PerturbedFace rec = publisher.record(rel, CAMERA, t.trackId(), capturedAt, null,
                            TrackRelease.newBuilder().setReleaseIndex(g.releaseIndex())
                                    .setEpsilonSpentInWindow(g.epsilonSpentInWindow()).setEpsilonBudget(g.epsilonBudget())
                                    .setBudgetPolicy(g.policy()).setWindowStartMillis(g.windowStart()).build());
                    boolean stored = uplink != null ? uplink.submit(rec)
                            // What Uplink.submit does, without waking a sender.
                            : spool.append(new SpoolEntry(topic, CAMERA, FaceRecords.encode(rec), rec.getEventId(),
                                    capturedAt.toEpochMilli()));
                    if (!stored) {
                        dropped++;
                    }
                    released++;
                }
            } finally {
                if (grey != image) {
                    grey.release();
                }
            }
            for (String id : tracker.ended()) {
                budget.forget(id);
            }
        }

        PipelineCounts counts() {
            return new PipelineCounts(frames, faces, unfit, released, withheld, dropped);
        }

        long embedded() {
            return embedded;
        }
    }

    // ------------------------------------------------------------------ paced run with the broker

    /** {@code cpuMsPerFrame}: the whole JVM's CPU time (uplink, producer, GC included) per processed frame. */
    record Paced(long due, long processed, long released, long acked, double p50, double p99, double max,
                 double microP50, double microP99, double maxLateMs, double busy, double cpuMsPerFrame, double others,
                 long rssMax, long brokerRssMax, List<Long> latencies) {
    }

    /** Keeps every latency the uplink records, so percentiles are exact rather than Micrometer's estimate. */
    static final class LatencyRegistry extends SimpleMeterRegistry {
        final List<Long> micros = Collections.synchronizedList(new ArrayList<>());
        volatile Timer timer;

        @Override
        protected Timer newTimer(Meter.Id id, DistributionStatisticConfig config, PauseDetector pause) {
            if (!id.getName().equals(LATENCY_TIMER)) {
                return super.newTimer(id, config, pause);
            }
            DistributionStatisticConfig merged = config.merge(
                    DistributionStatisticConfig.builder().expiry(Duration.ofMinutes(10)).bufferLength(1).build());
            Timer t = new CumulativeTimer(id, clock, merged, pause, getBaseTimeUnit(), false) {
                @Override
                protected void recordNonNegative(long amount, TimeUnit unit) {
                    super.recordNonNegative(amount, unit);
                    micros.add(unit.toMicros(amount));
                }
            };
            timer = t;
            return t;
        }
    }

    static Paced paced(List<Scene> scenes, Config c, PeepMechanism mechanism, BudgetPolicy policy, AgentSettings defaults,
                       FacePublisher publisher, Path work, Options opt, KafkaServerProcess kafka) throws Exception {
        // Warm-up: two seconds through a throw-away uplink, so the producer has its metadata and connection.
        pacedRun(scenes, c, mechanism, policy, defaults, publisher, work, opt.fps(), 2.0, kafka.pid(), opt.agentCpu(),
                new LatencyRegistry());
        return pacedRun(scenes, c, mechanism, policy, defaults, publisher, work, opt.fps(), opt.seconds(), kafka.pid(),
                opt.agentCpu(), new LatencyRegistry());
    }

    private static Paced pacedRun(List<Scene> scenes, Config c, PeepMechanism mechanism, BudgetPolicy policy,
                                  AgentSettings defaults, FacePublisher publisher, Path work, double fps, double seconds,
                                  long brokerPid, int cpuId, LatencyRegistry registry) throws Exception {
        Path dir = Files.createTempDirectory(work, "spool");
        long self = ProcessHandle.current().pid();
        try (DiskSpool spool = DiskSpool.open(dir, DiskSpool.Options.of(defaults.getSpool().getMaxBytes(),
                defaults.getSpool().getDropPolicy()))) {
            Uplink uplink = new Uplink(publisher, spool, registry, SITE);
            Pipeline p = new Pipeline(c, mechanism, policy, defaults, publisher, spool, uplink);
            long period = Math.round(1e9 / fps);
            long due = Math.round(seconds * fps);
            long startWall = System.currentTimeMillis() + 100;
            long start = System.nanoTime() + 100_000_000L;
            long end = start + due * period;
            long busy = 0;
            long maxLate = 0;
            long rssMax = 0;
            long brokerRssMax = 0;
            long cpu0 = processCpuNanos();
            CpuShare share = CpuShare.start(cpuId);
            long processed = 0;
            for (long i = 0; i < due; i++) {
                long at = start + i * period;
                long now;
                while ((now = System.nanoTime()) < at) {
                    LockSupport.parkNanos(at - now);
                }
                if (now >= end) {
                    break; // the time is up; frames still due count as not processed
                }
                maxLate = Math.max(maxLate, now - at);
                // The camera captured this frame at its tick; any lag until here counts in the latency.
                Instant captured = Instant.ofEpochMilli(startWall + (i * period) / 1_000_000L);
                p.accept(scenes.get((int) (i % scenes.size())).bgr(), i + 1, captured);
                processed++;
                busy += System.nanoTime() - now;
                if (i % Math.max(1, Math.round(fps)) == 0) {
                    rssMax = Math.max(rssMax, status(self, "VmRSS"));
                    brokerRssMax = Math.max(brokerRssMax, status(brokerPid, "VmRSS"));
                }
            }
            long wall = Math.max(1, System.nanoTime() - start);
            long cpu = processCpuNanos() - cpu0;
            CpuShare.Result contention = share.stop();
            if (!uplink.drain(Duration.ofSeconds(120))) {
                System.err.println("uplink did not drain: " + spool.depth() + " records left");
            }
            uplink.close();
            long acked = uplink.acknowledged();
            List<Long> lat;
            synchronized (registry.micros) {
                lat = new ArrayList<>(registry.micros);
            }
            Collections.sort(lat);
            double microP50 = Double.NaN;
            double microP99 = Double.NaN;
            Timer t = registry.timer;
            if (t != null) {
                for (var v : t.takeSnapshot().percentileValues()) {
                    if (v.percentile() == 0.5) {
                        microP50 = v.value(TimeUnit.MILLISECONDS);
                    } else if (v.percentile() == 0.99) {
                        microP99 = v.value(TimeUnit.MILLISECONDS);
                    }
                }
            }
            return new Paced(due, processed, p.counts().released(), acked, rank(lat, 0.50) / 1000.0,
                    rank(lat, 0.99) / 1000.0, lat.isEmpty() ? Double.NaN : lat.get(lat.size() - 1) / 1000.0,
                    microP50, microP99, maxLate / 1e6, busy / (double) wall, cpu / 1e6 / Math.max(1, processed), contention.others(), rssMax,
                    brokerRssMax, lat);
        } finally {
            deleteTree(dir);
        }
    }

    /** Nearest-rank percentile of sorted values. */
    static double rank(List<Long> sorted, double q) {
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        int i = (int) Math.ceil(q * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    // ------------------------------------------------------------------ frames

    /** A composited frame and the boxes of the faces put into it (the face oval, as in faces.csv). */
    record Scene(Mat bgr, List<Rect> faces) {
    }

    private record Source(Mat grey, Rect face) {
    }

    static List<Scene> scenes(Path synthetic, int n, long seed) throws IOException {
        List<Source> sources = new ArrayList<>();
        List<String> csv = Files.readAllLines(synthetic.resolve("faces.csv"));
        for (String line : csv.subList(1, csv.size())) {
            String[] f = line.split(",");
            if (!f[2].equals("enroll")) {
                continue;
            }
            Mat img = Imgcodecs.imread(synthetic.resolve(f[0]).toString(), Imgcodecs.IMREAD_GRAYSCALE);
            if (img.empty()) {
                throw new IOException("cannot read " + f[0]);
            }
            sources.add(new Source(img, new Rect(Integer.parseInt(f[3]), Integer.parseInt(f[4]), Integer.parseInt(f[5]),
                    Integer.parseInt(f[6]))));
        }
        if (sources.isEmpty()) {
            throw new IOException("no enrollment faces listed in " + synthetic.resolve("faces.csv"));
        }
        SplittableRandom r = new SplittableRandom(seed);
        Core.setRNGSeed((int) seed);
        List<Scene> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Mat frame = background(r);
            byte[] px = new byte[WIDTH * HEIGHT * 3];
            frame.get(0, 0, px);
            int want = 1 + i % 3;
            List<Rect> patches = new ArrayList<>();
            List<Rect> faces = new ArrayList<>();
            for (int attempt = 0; faces.size() < want && attempt < 500; attempt++) {
                Source s = sources.get(r.nextInt(sources.size()));
                int fw = 36 + r.nextInt(61);
                double sc = fw / (double) s.face().width;
                Rect f = s.face();
                int x0 = Math.max(0, f.x - (int) (0.35 * f.width));
                int y0 = Math.max(0, f.y - (int) (0.3 * f.height));
                int x1 = Math.min(s.grey().cols(), f.x + f.width + (int) (0.35 * f.width));
                int y1 = Math.min(s.grey().rows(), f.y + f.height + (int) (0.3 * f.height));
                int pw = (int) Math.round((x1 - x0) * sc);
                int ph = (int) Math.round((y1 - y0) * sc);
                if (pw >= WIDTH || ph >= HEIGHT) {
                    continue;
                }
                Rect dest = new Rect(r.nextInt(WIDTH - pw + 1), r.nextInt(HEIGHT - ph + 1), pw, ph);
                if (patches.stream().anyMatch(q -> overlaps(q, dest, 6))) {
                    continue;
                }
                Mat patch = new Mat();
                Imgproc.resize(s.grey().submat(new Rect(x0, y0, x1 - x0, y1 - y0)), patch, new Size(pw, ph), 0, 0,
                        sc < 1 ? Imgproc.INTER_AREA : Imgproc.INTER_LINEAR);
                blend(px, patch, dest, new double[] {0.85 + 0.3 * r.nextDouble(), 0.85 + 0.3 * r.nextDouble(),
                        0.85 + 0.3 * r.nextDouble()});
                patch.release();
                patches.add(dest);
                faces.add(new Rect(dest.x + (int) Math.round((f.x - x0) * sc), dest.y + (int) Math.round((f.y - y0) * sc),
                        (int) Math.round(f.width * sc), (int) Math.round(f.height * sc)));
            }
            frame.put(0, 0, px);
            sensorNoise(frame, r);
            out.add(new Scene(frame, List.copyOf(faces)));
        }
        sources.forEach(s -> s.grey().release());
        return out;
    }

    /** Sensor noise over the whole frame, faces included. */
    static void sensorNoise(Mat frame, SplittableRandom r) {
        Mat noise = new Mat(HEIGHT, WIDTH, CvType.CV_16SC3);
        Core.randn(noise, 0, 3 + r.nextInt(4));
        Mat wide = new Mat();
        frame.convertTo(wide, CvType.CV_16SC3);
        Core.add(wide, noise, wide);
        wide.convertTo(frame, CvType.CV_8UC3);
        noise.release();
        wide.release();
    }

    static boolean overlaps(Rect a, Rect b, int gap) {
        return a.x < b.x + b.width + gap && b.x < a.x + a.width + gap && a.y < b.y + b.height + gap
                && b.y < a.y + a.height + gap;
    }

    /** A room-like background: a gradient, rectangles and discs in random colours, slightly blurred. */
    static Mat background(SplittableRandom r) {
        Mat m = new Mat(HEIGHT, WIDTH, CvType.CV_8UC3);
        double[] top = colour(r);
        double[] bottom = colour(r);
        byte[] px = new byte[WIDTH * HEIGHT * 3];
        for (int y = 0; y < HEIGHT; y++) {
            double t = y / (double) (HEIGHT - 1);
            for (int c = 0; c < 3; c++) {
                byte v = (byte) Math.round(top[c] * (1 - t) + bottom[c] * t);
                for (int x = 0; x < WIDTH; x++) {
                    px[(y * WIDTH + x) * 3 + c] = v;
                }
            }
        }
        m.put(0, 0, px);
        int rects = 4 + r.nextInt(10);
        for (int k = 0; k < rects; k++) {
            int x = r.nextInt(WIDTH);
            int y = r.nextInt(HEIGHT);
            double[] c = colour(r);
            Imgproc.rectangle(m, new Point(x, y), new Point(x + 20 + r.nextInt(280), y + 20 + r.nextInt(220)),
                    new Scalar(c), r.nextInt(4) == 0 ? 2 + r.nextInt(6) : -1);
        }
        int discs = r.nextInt(4);
        for (int k = 0; k < discs; k++) {
            Imgproc.circle(m, new Point(r.nextInt(WIDTH), r.nextInt(HEIGHT)), 8 + r.nextInt(60), new Scalar(colour(r)), -1);
        }
        Imgproc.GaussianBlur(m, m, new Size(5, 5), 0);
        return m;
    }

    private static double[] colour(SplittableRandom r) {
        return new double[] {30 + r.nextInt(200), 30 + r.nextInt(200), 30 + r.nextInt(200)};
    }

    /** Blends a grey or BGR patch, tinted per channel, into BGR pixels, with edges feathered over a tenth of its size. */
    static void blend(byte[] px, Mat patch, Rect dest, double[] tint) {
        int ch = patch.channels();
        byte[] p = new byte[dest.width * dest.height * ch];
        patch.get(0, 0, p);
        double feather = Math.max(3, Math.min(dest.width, dest.height) / 10.0);
        for (int y = 0; y < dest.height; y++) {
            for (int x = 0; x < dest.width; x++) {
                int edge = Math.min(Math.min(x, dest.width - 1 - x), Math.min(y, dest.height - 1 - y));
                double a = Math.min(1.0, (edge + 0.5) / feather);
                int o = ((dest.y + y) * WIDTH + dest.x + x) * 3;
                for (int c = 0; c < 3; c++) {
                    int v = p[(y * dest.width + x) * ch + (ch == 3 ? c : 0)] & 0xff;
                    double under = px[o + c] & 0xff;
                    px[o + c] = (byte) Math.max(0, Math.min(255, Math.round(a * v * tint[c] + (1 - a) * under)));
                }
            }
        }
    }

    // ------------------------------------------------------------------ system

    /** Sets the CPU affinity of every thread of a process; false when taskset is missing or refused. */
    static boolean pin(long pid, int cpu) {
        try {
            Process p = new ProcessBuilder("taskset", "-a", "-p", "-c", Integer.toString(cpu), Long.toString(pid))
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            boolean ok = p.waitFor() == 0;
            if (!ok) {
                System.err.println("taskset failed for pid " + pid + ": " + out.strip());
            }
            return ok;
        } catch (IOException e) {
            System.err.println("taskset unavailable: " + e.getMessage());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** A kB field of /proc/PID/status (VmRSS, VmHWM), or -1. */
    static long status(long pid, String field) {
        try {
            for (String l : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (l.startsWith(field + ":")) {
                    return Long.parseLong(l.substring(field.length() + 1).replace("kB", "").strip());
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }

    /** VmRSS split into anonymous memory (heap, native allocations) and mapped files (libraries, shareable). */
    static String memory(long pid) {
        return String.format(Locale.ROOT, "VmRSS %.0f MiB (RssAnon %.0f, RssFile %.0f)", status(pid, "VmRSS") / 1024.0,
                status(pid, "RssAnon") / 1024.0, status(pid, "RssFile") / 1024.0);
    }

    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "?";
        }
    }

    static int onlineCpus() {
        try (Stream<Path> s = Files.list(Path.of("/sys/devices/system/cpu"))) {
            return (int) s.filter(p -> p.getFileName().toString().matches("cpu\\d+")).count();
        } catch (IOException e) {
            return -1;
        }
    }

    static String gcNames() {
        return String.join(", ", ManagementFactory.getGarbageCollectorMXBeans().stream().map(b -> b.getName()).toList());
    }

    /** The process's OS threads (GC, compiler and VM threads included) grouped by name, digits folded. */
    static String threadSummary(long pid) {
        Map<String, Integer> byName = new TreeMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path t : tasks.toList()) {
                try {
                    byName.merge(Files.readString(t.resolve("comm")).strip().replaceAll("\\d+", "#"), 1, Integer::sum);
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
        int total = byName.values().stream().mapToInt(Integer::intValue).sum();
        StringBuilder sb = new StringBuilder(total + " (");
        byName.forEach((k, v) -> sb.append(k).append(v > 1 ? " ×" + v : "").append(", "));
        sb.setLength(sb.length() - 2);
        return sb.append(')').toString();
    }

    /**
     * How much of one CPU went to other processes and to the hypervisor over an interval, from
     * /proc/stat: the CPU's busy time minus this JVM's CPU time (which runs only there when pinned).
     */
    record CpuShare(int cpu, long[] ticks, long selfNanos, long wallNanos) {
        record Result(double others, double steal, double self) {
        }

        static CpuShare start(int cpu) {
            return new CpuShare(cpu, ticks(cpu), processCpuNanos(), System.nanoTime());
        }

        Result stop() {
            long[] now = ticks(cpu);
            double wall = (System.nanoTime() - wallNanos) / 1e9;
            double self = (processCpuNanos() - selfNanos) / 1e9;
            if (now == null || ticks == null) {
                return new Result(Double.NaN, Double.NaN, self / wall);
            }
            double hz = 100.0; // USER_HZ on Linux
            // user nice system idle iowait irq softirq steal
            double busy = (now[0] - ticks[0] + now[1] - ticks[1] + now[2] - ticks[2] + now[5] - ticks[5] + now[6] - ticks[6]) / hz;
            double steal = (now[7] - ticks[7]) / hz;
            return new Result(Math.max(0, busy - self) / wall, steal / wall, self / wall);
        }

        private static long[] ticks(int cpu) {
            try {
                for (String l : Files.readAllLines(Path.of("/proc/stat"))) {
                    if (l.startsWith("cpu" + cpu + " ")) {
                        String[] f = l.trim().split("\\s+");
                        long[] t = new long[8];
                        for (int i = 0; i < 8; i++) {
                            t[i] = Long.parseLong(f[i + 1]);
                        }
                        return t;
                    }
                }
            } catch (IOException | RuntimeException e) {
                return null;
            }
            return null;
        }
    }

    static String meanSd(List<Double> xs, int decimals) {
        double mean = xs.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
        double var = xs.size() < 2 ? 0 : xs.stream().mapToDouble(x -> (x - mean) * (x - mean)).sum() / (xs.size() - 1);
        String f = "%." + decimals + "f";
        return String.format(Locale.ROOT, f + " ± " + f, mean, Math.sqrt(var));
    }

    static void row(Report report, String name, List<Run> runs) {
        if (runs == null || runs.isEmpty()) {
            return;
        }
        List<Double> fps = runs.stream().map(Run::fps).toList();
        List<Double> cpu = runs.stream().map(Run::cpuFps).toList();
        List<Double> ms = runs.stream().map(r -> 1000.0 / r.fps()).toList();
        report.line(String.format(Locale.ROOT, "| %s | %s | %s | %s |", name, meanSd(fps, 1), meanSd(cpu, 1), meanSd(ms, 1)));
    }

    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Lines printed as they come and kept for --out. */
    static final class Report {
        private final StringBuilder text = new StringBuilder();

        void line(String s) {
            System.out.println(s);
            text.append(s).append('\n');
        }

        String text() {
            return text.toString();
        }
    }
}
