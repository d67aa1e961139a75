package org.privface.benchmarks;

import static org.privface.benchmarks.Host.deleteTree;
import static org.privface.benchmarks.Host.processCpuNanos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.function.Supplier;

import org.opencv.core.Core;
import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.privface.agent.AgentSettings;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceDetector;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.publish.DiskSpool;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.track.BudgetPolicy;
import org.privface.benchmarks.EdgePipeline.PipelineCounts;
import org.privface.benchmarks.EdgeScenes.Scene;
import org.privface.privacy.PeepMechanism;

/**
 * {@link EdgeBenchmark}'s detector configurations and its passes over the frames: detection
 * accuracy (untimed), detection alone, and the whole per-frame pipeline ({@link EdgePipeline}),
 * each timed in wall and CPU time.
 */
final class EdgePasses {
    private EdgePasses() {
    }

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

    record PipelineRun(Run run, PipelineCounts counts) {
    }

    static PipelineRun pipelinePass(List<Scene> scenes, Config c, PeepMechanism mechanism, BudgetPolicy policy,
                                    AgentSettings defaults, FacePublisher publisher, Path work) throws IOException {
        Path dir = Files.createTempDirectory(work, "spool");
        try (DiskSpool spool = DiskSpool.open(dir, DiskSpool.Options.of(defaults.getSpool().getMaxBytes(),
                defaults.getSpool().getDropPolicy()))) {
            EdgePipeline p = new EdgePipeline(c, mechanism, policy, defaults, publisher, spool, null);
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
}
