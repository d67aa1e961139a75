package org.privface.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IntSummaryStatistics;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.opencv.core.Size;
import org.opencv.imgcodecs.Imgcodecs;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.AgentSettings;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.FaceDetector;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.detect.UltraFaceDetector;
import org.privface.agent.detect.YuNetDetector;
import org.privface.agent.embed.FaceAlignment;
import org.privface.agent.embed.DlibEmbedder;
import org.privface.agent.embed.DlibResNet;
import org.privface.agent.embed.DlibResNetDjl;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.embed.FaceEmbedders;
import org.privface.privacy.PeepMechanism;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.track.BudgetPolicy;

/**
 * The deep face stack of issue 16 inside {@link EdgeBenchmark}, on the same pinned core:
 * <ul>
 *   <li>frames: 640×480, each with 1–3 real faces (lfw5 images cut to the face and its
 *       surroundings, or whole ORL images), 40–120 px wide, on the harness's generated backgrounds
 *       with sensor noise;</li>
 *   <li>each detector's speed and recall on them (a hit: a detection centred in the pasted face's
 *       box, 0.8–2.0× as wide);</li>
 *   <li>the embedding's cost per face (alignment and network), on the faces the deep detector found;</li>
 *   <li>the pipeline with the embedding against detection alone: once with every face released in
 *       every frame (the heaviest load), once with each scene held for {@value #DWELL} frames under
 *       the default budget {@code once}, so a face is embedded once per appearance.</li>
 * </ul>
 * The pipeline's release is PEEP on the crop, as in the rest of the harness, plus the embedding of
 * the released face; the EMBEDDING mechanism's own sampling is not part of this build.
 */
final class DeepStack {
    /** Frames a scene is held for in the dwell run: one second at 25 frames/s. */
    static final int DWELL = 25;
    static final int DWELL_SCENES = 20;
    /** Faces in a crowd scene: at least, at most. */
    static final int CROWD_MIN = 10;
    static final int CROWD_MAX = 20;

    private DeepStack() {
    }

    /** A face image to paste: the pixels and where the face is in them. */
    record Source(Mat bgr, Rect face) {
    }

    static void run(EdgeBenchmark.Options opt, Report report, AgentSettings defaults, PeepMechanism mechanism,
                    BudgetPolicy heavy, Path work, org.privface.broker.KafkaServerProcess kafka) throws Exception {
        report.line("");
        report.line("## Deep face stack (issue 16): real faces, one core");
        report.line("");
        Path data = opt.datasets();
        if (data == null || !Files.isDirectory(data.resolve("lfw5")) || !Files.isDirectory(data.resolve("orl"))) {
            report.line("skipped: lfw5 and orl not found (set FACE_DATASETS or --datasets)");
            return;
        }
        boolean packaged = Stream.of(FaceModels.DETECT, FaceModels.LANDMARK, FaceModels.FEATURE).allMatch(FaceModels::hasFaceplugin);
        Path yunet = FaceModels.findYunet(null).orElse(null);
        if (!packaged) {
            report.line("skipped: the npm models are not in " + FaceModels.facepluginDir() + " (the agent's build fetches them)");
            return;
        }
        List<Source> sources = new ArrayList<>();
        sources.addAll(lfw(data.resolve("lfw5"), 100));
        sources.addAll(orl(data.resolve("orl"), 100));
        List<EdgeScenes.Scene> scenes = scenes(sources, opt.deepFrames(), opt.seed());
        List<EdgeScenes.Scene> crowd = crowdScenes(sources, opt.crowdScenes(), opt.seed());
        sources.forEach(s -> s.bgr().release());
        int faceCount = scenes.stream().mapToInt(s -> s.faces().size()).sum();
        report.line(String.format(Locale.ROOT, "- frames: %d × 640×480, %d real faces (%.2f per frame; 100 lfw5 and 100 ORL images,"
                + " pasted 40–120 px wide), seed %d", scenes.size(), faceCount, faceCount / (double) scenes.size(), opt.seed()));
        if (!crowd.isEmpty()) {
            IntSummaryStatistics perCrowd = crowd.stream().mapToInt(s -> s.faces().size()).summaryStatistics();
            report.line(String.format(Locale.ROOT, "- crowd frames: %d × 640×480, %d real faces (%d–%d per frame, mean %.1f;"
                    + " the same images pasted 36–60 px wide)", crowd.size(), perCrowd.getSum(), perCrowd.getMin(), perCrowd.getMax(),
                    perCrowd.getAverage()));
        }

        int w = opt.remedyWidth();
        List<EdgePasses.Config> configs = new ArrayList<>();
        configs.add(new EdgePasses.Config("Haar (agent default settings)", () -> EdgePasses.defaultDetector(defaults), 0));
        configs.add(new EdgePasses.Config("Haar, maxDetectWidth " + w, () -> new FaceDetector(defaults.getCascade(),
                defaults.getScaleFactor(), defaults.getMinNeighbors(), defaults.getMinFaceSize(), w), 0));
        Supplier<FaceFinder> deep;
        String deepName;
        if (yunet != null) {
            configs.add(new EdgePasses.Config("YuNet", () -> new YuNetDetector(yunet, YuNetDetector.DEFAULT_SCORE, 0), 0));
            configs.add(new EdgePasses.Config("YuNet, maxDetectWidth " + w,
                    () -> new YuNetDetector(yunet, YuNetDetector.DEFAULT_SCORE, w), 0));
            deep = () -> new YuNetDetector(yunet, YuNetDetector.DEFAULT_SCORE, 0);
            deepName = "YuNet";
        } else {
            report.line("- YuNet not found under FACE_MODELS: its rows are missing, and the deep default is UltraFace");
            deep = UltraFaceDetector::fromPackage;
            deepName = "UltraFace";
        }
        configs.add(new EdgePasses.Config("UltraFace + 68-point landmarks", UltraFaceDetector::fromPackage, 0));

        if (opt.onlyEmbedding() || opt.onlyPaced()) {
            configs.clear();
        }
        report.line("");
        report.line("| detector | frames/s (wall) | frames per CPU-second | ms per frame (wall) | faces found | frames with exactly the expected faces | false detections |");
        report.line("|---|---|---|---|---|---|---|");
        Map<String, EdgePasses.Accuracy> acc = new LinkedHashMap<>();
        for (EdgePasses.Config c : configs) {
            acc.put(c.name(), EdgePasses.accuracy(scenes, c)); // also the warm-up
        }
        Map<String, List<EdgePasses.Run>> runs = new LinkedHashMap<>();
        for (int r = 0; r < opt.reps(); r++) {
            for (int k = 0; k < configs.size(); k++) {
                EdgePasses.Config c = configs.get((k + r) % configs.size());
                runs.computeIfAbsent(c.name(), x -> new ArrayList<>()).add(EdgePasses.detectPass(scenes, c));
            }
        }
        for (EdgePasses.Config c : configs) {
            List<EdgePasses.Run> rs = runs.get(c.name());
            EdgePasses.Accuracy a = acc.get(c.name());
            report.line(String.format(Locale.ROOT, "| %s | %s | %s | %s | %d / %d (%.1f%%) | %d / %d (%.1f%%) | %d |", c.name(),
                    Report.meanSd(rs.stream().map(EdgePasses.Run::fps).toList(), 1),
                    Report.meanSd(rs.stream().map(EdgePasses.Run::cpuFps).toList(), 1),
                    Report.meanSd(rs.stream().map(x -> 1000 / x.fps()).toList(), 1),
                    a.found(), a.faces(), 100.0 * a.found() / a.faces(), a.exactFrames(), scenes.size(),
                    100.0 * a.exactFrames() / scenes.size(), a.falseDetections()));
        }

        // The embedding alone, on the faces the deep default found.
        FaceFinder finder = deep.get();
        List<Mat> frames = new ArrayList<>();
        List<DetectedFace> faces = new ArrayList<>();
        for (EdgeScenes.Scene s : scenes) {
            for (DetectedFace f : finder.detect(s.bgr())) {
                frames.add(s.bgr());
                faces.add(f);
            }
        }
        for (String network : opt.onlyPaced() ? List.<String>of() : FaceEmbedders.NAMES) {
            if (network.equals(FaceEmbedders.DLIB) && !FaceModels.hasFaceapi(FaceModels.DLIB_WEIGHTS)) {
                report.line("");
                report.line("Embedding dlib: skipped, its weights are not in " + FaceModels.faceapiDir());
                continue;
            }
            embeddingCost(opt, report, network, "ONNX Runtime", () -> FaceEmbedders.create(network, DlibResNet.Runtime.ONNXRUNTIME),
                    frames, faces, deepName);
            if (network.equals(FaceEmbedders.DLIB)) {
                embeddingCost(opt, report, network, "OpenCV DNN", () -> FaceEmbedders.create(network, DlibResNet.Runtime.OPENCV),
                        frames, faces, deepName);
                // The reference in the same run: the same layers on DJL/PyTorch, as the agent ran them before ONNX Runtime.
                embeddingCost(opt, report, network, "DJL/PyTorch, reference", () -> new DlibEmbedder(new DlibResNetDjl(DlibEmbedder.weights(
                        FaceModels.faceapi(FaceModels.DLIB_MANIFEST)))), frames, faces, deepName);
            }
        }

        if (opt.onlyEmbedding()) {
            return;
        }
        // The pipeline with the embedding against detection alone, each pipeline run against the detection run before it.
        // The shipped default embedding (agent.embedder: dlib, run by DlibResNet.Runtime.DEFAULT).
        EdgePasses.Config withEmbedding = new EdgePasses.Config(deepName + " + " + defaults.getEmbedder().getNetwork() + " embedding ("
                + defaults.getEmbedder().getRuntime() + ")", deep, 0, defaults.getEmbedder()::create);
        EdgePasses.Config detectOnly = new EdgePasses.Config(deepName, deep, 0);
        List<EdgeScenes.Scene> dwell = held(scenes.subList(0, Math.min(DWELL_SCENES, scenes.size())));
        List<EdgeScenes.Scene> crowdDwell = held(crowd);
        BudgetPolicy once = BudgetPolicy.parse(defaults.getBudget());
        Versus heavyRuns = new Versus("every face released (" + heavy.spec() + ")");
        Versus dwellRuns = new Versus("scenes held " + DWELL + " frames, budget " + once.spec());
        Versus crowdRuns = new Versus("crowd scenes held " + DWELL + " frames, budget " + once.spec());
        List<String> counts = new ArrayList<>();
        if (!crowd.isEmpty()) {
            EdgePasses.Accuracy ca = EdgePasses.accuracy(crowd, detectOnly);
            report.line("");
            report.line(String.format(Locale.ROOT, "- %s on the crowd frames: %d of %d faces found (%.1f%%), %d false detections",
                    deepName, ca.found(), ca.faces(), 100.0 * ca.found() / ca.faces(), ca.falseDetections()));
        }
        try (FacePublisher publisher = new FacePublisher("127.0.0.1:9", EdgeBenchmark.SITE, new java.util.Properties())) {
            for (int r = 0; r < opt.reps(); r++) {
                List<String> c = r == 0 ? counts : new ArrayList<>();
                if (!crowdDwell.isEmpty()) {
                    crowdRuns.pass(crowdDwell, detectOnly, withEmbedding, mechanism, once, defaults, publisher, work, c);
                }
                // Every face released in every frame: the heaviest load (not with --only-paced).
                if (!opt.onlyPaced()) {
                    heavyRuns.pass(scenes, detectOnly, withEmbedding, mechanism, heavy, defaults, publisher, work, c);
                }
                dwellRuns.pass(dwell, detectOnly, withEmbedding, mechanism, once, defaults, publisher, work, c);
                System.out.printf(Locale.ROOT, "  deep rep %d done (load %s)%n", r + 1, Host.loadAverage());
            }
        }
        report.line("");
        report.line("| what | frames/s (wall) | frames per CPU-second | ms per frame (wall) |");
        report.line("|---|---|---|---|");
        for (Versus v : List.of(heavyRuns, dwellRuns, crowdRuns)) {
            v.rows(report, deepName);
        }
        report.line("");
        for (Versus v : List.of(heavyRuns, dwellRuns, crowdRuns)) {
            v.ratio(report);
        }
        counts.forEach(c -> report.line("- pipeline, one pass, " + c));

        // The shipped default end to end at camera rate: the held scenes, budget once, through the uplink to the broker.
        if (kafka != null) {
            report.line("");
            report.line(String.format(Locale.ROOT, "### Deep default with the broker: paced %.0f frames/s for %.0f s, scenes held %d frames,"
                    + " budget %s, %d runs", opt.fps(), opt.seconds(), DWELL, once.spec(), opt.pacedReps()));
            report.line("");
            try (FacePublisher live = new FacePublisher(kafka.bootstrapServers(), EdgeBenchmark.SITE, new java.util.Properties())) {
                BrokerLatency broker = new BrokerLatency(opt, kafka, dwell, mechanism, once, defaults, live, work);
                BrokerLatency crowdBroker = new BrokerLatency(opt, kafka, crowdDwell, mechanism, once, defaults, live, work);
                EdgePasses.Config crowdConfig = new EdgePasses.Config(withEmbedding.name() + ", crowds of " + CROWD_MIN + "–" + CROWD_MAX,
                        withEmbedding.factory(), withEmbedding.cvThreads(), withEmbedding.embedder());
                Map<EdgePasses.Config, List<BrokerLatency.Paced>> paced = new LinkedHashMap<>();
                for (int r = 0; r < opt.pacedReps(); r++) {
                    BrokerLatency.Paced p = broker.paced(withEmbedding);
                    paced.computeIfAbsent(withEmbedding, k -> new ArrayList<>()).add(p);
                    System.out.printf(Locale.ROOT, "  deep paced: %d/%d frames, %d dropped, p50 %.0f ms, p99 %.0f ms (load %s)%n",
                            p.processed(), p.due(), p.dropped(), p.p50(), p.p99(), Host.loadAverage());
                    if (!crowdDwell.isEmpty()) {
                        BrokerLatency.Paced q = crowdBroker.paced(crowdConfig);
                        paced.computeIfAbsent(crowdConfig, k -> new ArrayList<>()).add(q);
                        System.out.printf(Locale.ROOT, "  crowd paced: %d/%d frames, %d dropped, p50 %.0f ms, p99 %.0f ms (load %s)%n",
                                q.processed(), q.due(), q.dropped(), q.p50(), q.p99(), Host.loadAverage());
                    }
                }
                BrokerLatency.table(report, paced);
            }
        }
        scenes.forEach(s -> s.bgr().release());
        crowd.forEach(s -> s.bgr().release());
    }

    /** Detection alone and then the pipeline on the same frames, each pipeline run divided by the detection run before it. */
    private static final class Versus {
        private final String what;
        private final List<EdgePasses.Run> a = new ArrayList<>();
        private final List<EdgePasses.Run> b = new ArrayList<>();
        private final List<Double> wall = new ArrayList<>();
        private final List<Double> cpu = new ArrayList<>();

        Versus(String what) {
            this.what = what;
        }

        void pass(List<EdgeScenes.Scene> frames, EdgePasses.Config detectOnly, EdgePasses.Config withEmbedding,
                  PeepMechanism mechanism, BudgetPolicy budget, AgentSettings defaults, FacePublisher publisher, Path work,
                  List<String> counts) throws IOException {
            EdgePasses.Run da = EdgePasses.detectPass(frames, detectOnly);
            EdgePasses.PipelineRun pb = EdgePasses.pipelinePass(frames, withEmbedding, mechanism, budget, defaults, publisher, work);
            a.add(da);
            b.add(pb.run());
            wall.add(pb.run().fps() / da.fps());
            cpu.add(pb.run().cpuFps() / da.cpuFps());
            counts.add(what + ": " + pb.counts());
        }

        void rows(Report report, String deepName) {
            if (!a.isEmpty()) {
                Report.row(report, "a. " + deepName + " detection only, " + what.replaceFirst(", budget.*", ""), a);
                Report.row(report, "b. pipeline with the embedding, " + what, b);
            }
        }

        void ratio(Report report) {
            if (!a.isEmpty()) {
                report.line(String.format(Locale.ROOT, "- b / a, %s: %s (wall), %s (CPU time)", what, Report.meanSd(wall, 3),
                        Report.meanSd(cpu, 3)));
            }
        }
    }

    /** Each scene repeated {@value #DWELL} times: one second in view at 25 frames/s. */
    static List<EdgeScenes.Scene> held(List<EdgeScenes.Scene> scenes) {
        List<EdgeScenes.Scene> out = new ArrayList<>();
        for (EdgeScenes.Scene s : scenes) {
            for (int k = 0; k < DWELL; k++) {
                out.add(s);
            }
        }
        return out;
    }

    /** lfw5 images cut to the face and its surroundings (rows 15–139, columns 25–124), fewer background faces. */
    static List<Source> lfw(Path root, int n) throws IOException {
        Rect cut = new Rect(25, 15, 100, 125);
        List<Source> out = new ArrayList<>();
        for (Path p : spread(root, n)) {
            Mat img = Imgcodecs.imread(p.toString(), Imgcodecs.IMREAD_COLOR);
            if (img.cols() != 150 || img.rows() != 150) {
                throw new IOException(p + ": expected 150x150 funneled LFW");
            }
            // The face: the standard LFW crop (rows 42-117, columns 47-103), in the cut's coordinates.
            out.add(new Source(img.submat(cut).clone(), new Rect(47 - cut.x, 42 - cut.y, 56, 75)));
            img.release();
        }
        return out;
    }

    /** Whole ORL images (92×112 grey face crops); the face spans about its middle 64×80 pixels. */
    static List<Source> orl(Path root, int n) throws IOException {
        List<Source> out = new ArrayList<>();
        for (Path p : spread(root, n)) {
            Mat img = Imgcodecs.imread(p.toString(), Imgcodecs.IMREAD_COLOR);
            if (img.empty()) {
                throw new IOException(p + ": not readable");
            }
            out.add(new Source(img, new Rect(14, 20, 64, 80)));
        }
        return out;
    }

    /** n files spread over the sorted images of a folder-per-person set. */
    static List<Path> spread(Path root, int n) throws IOException {
        List<Path> all = org.privface.agent.dataset.DatasetFolder.people(root).images().stream()
                .filter(p -> p.toString().matches(".*\\.(jpg|pgm)$")).sorted().toList();
        List<Path> out = new ArrayList<>();
        double step = Math.max(1.0, all.size() / (double) n);
        for (double i = 0; i < all.size() && out.size() < n; i += step) {
            out.add(all.get((int) i));
        }
        return out;
    }

    static List<EdgeScenes.Scene> scenes(List<Source> sources, int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        List<EdgeScenes.Scene> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(EdgeScenes.compose(r, i, (px, patches) -> place(sources, r, px, patches, 40, 120)));
        }
        return out;
    }

    /**
     * Crowd frames: 10–20 faces each (frame i asks for 10 + i % 11; as many as fit clear of each other in
     * 500 tries), 36–60 px wide, as faces across a hall or a platform appear to one camera.
     */
    static List<EdgeScenes.Scene> crowdScenes(List<Source> sources, int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed ^ 0x5ca1ab1eL);
        List<EdgeScenes.Scene> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(EdgeScenes.composeWith(r, CROWD_MIN + i % (CROWD_MAX - CROWD_MIN + 1),
                    (px, patches) -> place(sources, r, px, patches, 36, 60)));
        }
        return out;
    }

    /** A whole face image, {@code min}–{@code max} px across its face box, untinted. */
    private static EdgeScenes.Placed place(List<Source> sources, SplittableRandom r, byte[] px, List<Rect> patches,
                                           int min, int max) {
        Source s = sources.get(r.nextInt(sources.size()));
        double sc = (min + r.nextInt(max - min + 1)) / (double) s.face().width;
        int pw = (int) Math.round(s.bgr().cols() * sc);
        int ph = (int) Math.round(s.bgr().rows() * sc);
        Rect dest = new Rect(r.nextInt(EdgeScenes.WIDTH - pw + 1), r.nextInt(EdgeScenes.HEIGHT - ph + 1), pw, ph);
        if (patches.stream().anyMatch(q -> EdgeScenes.overlaps(q, dest, 6))) {
            return null;
        }
        Mat patch = new Mat();
        Imgproc.resize(s.bgr(), patch, new Size(pw, ph), 0, 0, sc < 1 ? Imgproc.INTER_AREA : Imgproc.INTER_LINEAR);
        EdgeScenes.blend(px, patch, dest, new double[] {1, 1, 1});
        patch.release();
        Rect f = s.face();
        return new EdgeScenes.Placed(dest, new Rect(dest.x + (int) Math.round(f.x * sc), dest.y + (int) Math.round(f.y * sc),
                (int) Math.round(f.width * sc), (int) Math.round(f.height * sc)));
    }

    /** One network's cost per face (alignment and network) on the faces the deep detector found. */
    private static void embeddingCost(EdgeBenchmark.Options opt, Report report, String network, String runtime,
                                      java.util.function.Supplier<FaceEmbedder> factory, List<Mat> frames,
                                      List<DetectedFace> faces, String deepName) {
        try (FaceEmbedder embedder = factory.get()) {
            for (int i = 0; i < Math.min(20, faces.size()); i++) {
                embedder.embed(frames.get(i), faces.get(i)); // warm-up
            }
            List<Double> msWall = new ArrayList<>();
            List<Double> msCpu = new ArrayList<>();
            List<Double> alignMs = new ArrayList<>();
            for (int r = 0; r < opt.reps(); r++) {
                long cpu0 = Host.processCpuNanos();
                long t0 = System.nanoTime();
                for (int i = 0; i < faces.size(); i++) {
                    embedder.embed(frames.get(i), faces.get(i));
                }
                long t1 = System.nanoTime();
                long cpu1 = Host.processCpuNanos();
                msWall.add((t1 - t0) / 1e6 / faces.size());
                msCpu.add((cpu1 - cpu0) / 1e6 / faces.size());
                long a0 = System.nanoTime();
                for (int i = 0; i < faces.size(); i++) {
                    if (network.equals(FaceEmbedders.DLIB)) {
                        FaceAlignment.align(frames.get(i), faces.get(i).landmarks(), DlibEmbedder.TEMPLATE, DlibResNet.SIDE).release();
                    } else {
                        FaceAlignment.align(frames.get(i), faces.get(i).landmarks(), FaceAlignment.SIDE).release();
                    }
                }
                alignMs.add((System.nanoTime() - a0) / 1e6 / faces.size());
            }
            report.line("");
            report.line(String.format(Locale.ROOT, "Embedding (%s, %d-d, %s) on the %d faces %s found, %d runs: **%s ms per face (wall)**,"
                            + " %s ms of CPU time; of which alignment %s ms.", embedder.modelId(), embedder.dimension(),
                    network.equals(FaceEmbedders.DLIB) ? runtime : "OpenCV DNN",
                    faces.size(), deepName, opt.reps(), Report.meanSd(msWall, 1), Report.meanSd(msCpu, 1),
                    Report.meanSd(alignMs, 2)));
        }
    }
}
