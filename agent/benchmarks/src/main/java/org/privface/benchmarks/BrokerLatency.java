package org.privface.benchmarks;

import static org.privface.benchmarks.EdgeBenchmark.SITE;
import static org.privface.benchmarks.Host.deleteTree;
import static org.privface.benchmarks.Host.loadAverage;
import static org.privface.benchmarks.Host.processCpuNanos;
import static org.privface.benchmarks.Host.status;
import static org.privface.benchmarks.Report.meanSd;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.cumulative.CumulativeTimer;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.distribution.pause.PauseDetector;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.privface.agent.AgentSettings;
import org.privface.agent.capture.CameraSupervisor;
import org.privface.agent.capture.Frame;
import org.privface.agent.capture.FrameSource;
import org.privface.agent.publish.DiskSpool;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.publish.Uplink;
import org.privface.agent.track.BudgetPolicy;
import org.privface.benchmarks.EdgeBenchmark.Options;
import org.privface.benchmarks.EdgePasses.Config;
import org.privface.benchmarks.EdgeScenes.Scene;
import org.privface.benchmarks.Host.CpuShare;
import org.privface.broker.KafkaServerProcess;
import org.privface.privacy.PeepMechanism;

/**
 * {@link EdgeBenchmark}'s broker part: the pipeline forwarding through the agent's {@link Uplink} to
 * a real Kafka broker at a paced frame rate, with the latency from capture to the broker's
 * acknowledgement, the CPU it took and the resident memory of both processes.
 */
record BrokerLatency(Options opt, KafkaServerProcess kafka, List<Scene> scenes, PeepMechanism mechanism,
                     BudgetPolicy policy, AgentSettings defaults, FacePublisher publisher, Path work) {
    static final String LATENCY_TIMER = "privface.agent.publish.latency";

    /** {@code cpuMsPerFrame}: the whole JVM's CPU time (uplink, producer, GC included) per processed frame. */
    record Paced(long due, long processed, long dropped, long released, long acked, double p50, double p99, double max,
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

    /**
     * The report's broker section: {@code --paced-reps} runs of each of {@code interleaved}, interleaved,
     * then one of {@code defaultConfig} unless {@code --no-paced-default}.
     */
    void report(Report report, List<Config> interleaved, Config defaultConfig) throws Exception {
        report.line("");
        report.line(String.format(Locale.ROOT, "## With the broker: paced %.0f frames/s for %.0f s, latency from capture to broker acknowledgement",
                opt.fps(), opt.seconds()));
        report.line("");
        report.line(String.format(Locale.ROOT, "%d runs of each maxDetectWidth configuration, interleaved (mean ± sd over runs;"
                + " \"pooled\" over all their records), then one of the default.", opt.pacedReps()));
        report.line("");
        Map<Config, List<Paced>> pacedRuns = new LinkedHashMap<>();
        for (int r = 0; r < opt.pacedReps(); r++) {
            for (Config c : interleaved) {
                Paced p = paced(c);
                pacedRuns.computeIfAbsent(c, k -> new ArrayList<>()).add(p);
                System.out.printf(Locale.ROOT, "  paced %s: %d/%d frames, p50 %.0f ms, p99 %.0f ms (load %s)%n", c.name(),
                        p.processed(), p.due(), p.p50(), p.p99(), loadAverage());
            }
        }
        if (opt.pacedDefault()) {
            pacedRuns.put(defaultConfig, List.of(paced(defaultConfig)));
        }
        table(report, pacedRuns);
    }

    /** The paced runs' table (one row per configuration, mean ± sd over its runs) and notes. */
    static void table(Report report, Map<Config, List<Paced>> pacedRuns) {
        report.line("| detector | frames processed / due | frames dropped | records acked | p50 ms | p99 ms | p99 pooled | max ms | JVM CPU ms per frame | others on the CPU | agent VmRSS max MiB | broker VmRSS max MiB |");
        report.line("|---|---|---|---|---|---|---|---|---|---|---|---|");
        List<String> notes = new ArrayList<>();
        pacedRuns.forEach((c, ps) -> {
            List<Long> pooled = new ArrayList<>();
            ps.forEach(p -> pooled.addAll(p.latencies()));
            Collections.sort(pooled);
            report.line(String.format(Locale.ROOT, "| %s | %s | %s | %d / %d | %s | %s | %.0f | %s | %s | %s | %.0f | %.0f |", c.name(),
                    ps.stream().map(p -> p.processed() + "/" + p.due()).reduce((x, y) -> x + ", " + y).orElse(""),
                    ps.stream().map(p -> Long.toString(p.dropped())).reduce((x, y) -> x + ", " + y).orElse(""),
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
    }

    Paced paced(Config c) throws Exception {
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
            EdgePipeline p = new EdgePipeline(c, mechanism, policy, defaults, publisher, spool, uplink);
            long period = Math.round(1e9 / fps);
            long due = Math.round(seconds * fps);
            long startWall = System.currentTimeMillis() + 100;
            long start = System.nanoTime() + 100_000_000L;
            long[] busy = {0};
            long[] maxLate = {0};
            long[] rssMax = {0};
            long[] brokerRssMax = {0};
            long cpu0 = processCpuNanos();
            CpuShare share = CpuShare.start(cpuId);
            // The agent's own frame hand-off: a live camera's thread reads, the pipeline takes the newest frame,
            // and a frame it had no time for is dropped and counted (CameraSupervisor).
            PacedCamera camera = new PacedCamera(scenes, start, startWall, period, due);
            AtomicBoolean opened = new AtomicBoolean();
            CameraSupervisor cam = new CameraSupervisor(EdgeBenchmark.CAMERA, () -> {
                if (!opened.compareAndSet(false, true)) {
                    throw new IOException("the paced camera has ended");
                }
                return camera;
            }, true, CameraSupervisor.Settings.defaults(), f -> {
                long now = System.nanoTime();
                // The camera captured this frame at its tick; any lag until here counts in the latency.
                maxLate[0] = Math.max(maxLate[0], now - (start + f.sequence() * period));
                p.accept(f.image(), f.sequence() + 1, f.capturedAt());
                busy[0] += System.nanoTime() - now;
                if (f.sequence() % Math.max(1, Math.round(fps)) == 0) {
                    rssMax[0] = Math.max(rssMax[0], status(self, "VmRSS"));
                    brokerRssMax[0] = Math.max(brokerRssMax[0], status(brokerPid, "VmRSS"));
                }
            });
            cam.start();
            long giveUp = start + due * period + TimeUnit.SECONDS.toNanos(120);
            CameraSupervisor.Status st;
            while ((st = cam.status()).frames() + st.dropped() < due && System.nanoTime() < giveUp) {
                Thread.sleep(20);
            }
            long end = System.nanoTime();
            cam.stop();
            if (!cam.awaitTermination(Duration.ofSeconds(10))) {
                System.err.println("the paced camera's threads did not end");
            }
            st = cam.status();
            long processed = st.frames();
            long wall = Math.max(1, end - start);
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
            return new Paced(due, processed, st.dropped(), p.counts().released(), acked, rank(lat, 0.50) / 1000.0,
                    rank(lat, 0.99) / 1000.0, lat.isEmpty() ? Double.NaN : lat.get(lat.size() - 1) / 1000.0,
                    microP50, microP99, maxLate[0] / 1e6, busy[0] / (double) wall, cpu / 1e6 / Math.max(1, processed),
                    contention.others(), rssMax[0], brokerRssMax[0], lat);
        } finally {
            deleteTree(dir);
        }
    }

    /**
     * A live camera at a fixed rate: frame i is captured at its tick (start + i × period), a copy of scene
     * i mod n, as a camera's decoder hands a fresh buffer; after {@code due} frames the stream ends.
     */
    static final class PacedCamera implements FrameSource {
        private final List<Scene> scenes;
        private final long start;
        private final long startWall;
        private final long period;
        private final long due;
        private long next;

        PacedCamera(List<Scene> scenes, long start, long startWall, long period, long due) {
            this.scenes = scenes;
            this.start = start;
            this.startWall = startWall;
            this.period = period;
            this.due = due;
        }

        @Override
        public Optional<Frame> next() {
            if (next >= due) {
                return Optional.empty();
            }
            long i = next++;
            long at = start + i * period;
            long now;
            while ((now = System.nanoTime()) < at) {
                LockSupport.parkNanos(at - now);
            }
            Instant captured = Instant.ofEpochMilli(startWall + (i * period) / 1_000_000L);
            return Optional.of(new Frame(scenes.get((int) (i % scenes.size())).bgr().clone(), i, captured, "paced#" + i));
        }

        @Override
        public long skipped() {
            return 0;
        }

        @Override
        public void close() {
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
}
