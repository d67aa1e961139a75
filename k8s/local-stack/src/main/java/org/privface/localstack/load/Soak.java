package org.privface.localstack.load;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.privface.localstack.Cameras;
import org.privface.localstack.DemoProcesses;
import org.privface.broker.KafkaServerProcess;
import org.privface.broker.ManagedProcess;
import org.privface.evaluation.Progress;
import org.privface.wire.topics.Topics;

/**
 * The soak: a real Kafka broker process, the recognizer and {@code --agents} agents, each its own
 * JVM, each agent with {@code --cameras} live HTTP MJPEG cameras looping the synthetic query frames
 * (test-data/synthetic/query, 320×240) at {@code --fps}, for {@code --minutes}. A camera ends each
 * connection after 120 s and the agent reconnects, as cameras do. Every {@code --sample-seconds} it
 * records each JVM's resident memory, CPU and GC pauses (GC log), the agents' /prometheus (frames,
 * releases, acknowledgements, spool, publish latency p50/p99), the recognizer's /prometheus
 * (results, dead letters) and its group's lag (Admin API), and what an operator reading the topics
 * sees (records, answers, latencies). Every {@code --full-gc-seconds} it runs a full GC in each
 * agent and the recognizer through their management beans (Attach API) and records the heap right
 * after: the live set, not G1's lazily collected old generation.
 *
 * <p>Each agent is its own site (soak-1, soak-2, ...), enrolls the synthetic enrollment faces with
 * the agent's default mechanism (PEEP l1-clip, 8 components) and releases every face it detects:
 * budget {@code every-n:n=1,epsilon=2} under a cap no run reaches, the heaviest release path.
 * The detector runs at {@code --scale-factor} (1.2, docs/performance.md's setting for throughput).
 *
 * <p>Pass criteria, checked at the end (exit code 2 when one fails):
 * <ul>
 *   <li>memory flat: for each agent and the recognizer, the least-squares slope of heap after the
 *       forced full GCs over the last two thirds of the run is at most {@code --heap-slope} MiB/min;</li>
 *   <li>latency stable: each agent's publish latency p99 (its /prometheus), median over the last
 *       third of the samples, is at most {@code --p99-factor} times its median over the first third
 *       (after {@code --warmup-seconds}); the same for the capture-to-topic p99 the reader measures;</li>
 *   <li>nothing lost: every release in the agents' ledgers is on its query topic (distinct event ids),
 *       and the spools dropped nothing.</li>
 * </ul>
 * Writes {@code soak.csv}, {@code soak-summary.txt} and {@code soak-memory.png}, {@code soak-heap.png},
 * {@code soak-latency.png}, {@code soak-throughput.png} to {@code --out}.
 */
public final class Soak extends LoadRun {
    private double minutes;
    private int agents;
    private int cameras;
    private int fps;
    private int sampleSeconds;
    private int fullGcSeconds;
    private double warmup;
    private double heapSlopeBound;
    private double p99Factor;
    private Path frames;
    private Path enroll;
    /** "pixel": the pre-deep stack Soak measured first; "deployed": the agent's defaults with the bundle's JVM flags. */
    private String agentStack;
    private final List<String> sites = new ArrayList<>();
    private List<String> queryTopics;

    private Soak() {
        super("soak", "soak-logs");
    }

    /** One agent JVM and what is known about it. */
    private static final class Agent {
        final String site;
        final ManagedProcess process;
        final int port;
        final GcLog gc;
        final Path ledger;
        double lastCpu = Double.NaN;
        Prometheus last;

        Agent(String site, ManagedProcess process, int port, GcLog gc, Path ledger) {
            this.site = site;
            this.process = process;
            this.port = port;
            this.gc = gc;
            this.ledger = ledger;
        }
    }

    public static void main(String[] args) throws Exception {
        new Soak().run(args);
    }

    @Override
    protected void options(Map<String, String> d) {
        d.put("--minutes", "10");
        d.put("--agents", "2");
        d.put("--cameras", "4");
        d.put("--fps", "10");
        d.put("--scale-factor", "1.2");
        d.put("--sample-seconds", "10");
        d.put("--full-gc-seconds", "60");
        d.put("--warmup-seconds", "60");
        d.put("--agent-heap", "256m");
        d.put("--recognizer-heap", "1g");
        d.put("--heap-slope", "1.0");
        d.put("--p99-factor", "2.0");
        d.put("--stack", "pixel");
    }

    @Override
    protected void prepare() {
        minutes = Double.parseDouble(opt.get("--minutes"));
        agents = Integer.parseInt(opt.get("--agents"));
        cameras = Integer.parseInt(opt.get("--cameras"));
        fps = Integer.parseInt(opt.get("--fps"));
        sampleSeconds = Integer.parseInt(opt.get("--sample-seconds"));
        fullGcSeconds = Integer.parseInt(opt.get("--full-gc-seconds"));
        warmup = Double.parseDouble(opt.get("--warmup-seconds"));
        heapSlopeBound = Double.parseDouble(opt.get("--heap-slope"));
        p99Factor = Double.parseDouble(opt.get("--p99-factor"));
        agentStack = opt.get("--stack");
        if (!agentStack.equals("pixel") && !agentStack.equals("deployed")) {
            throw new IllegalArgumentException("--stack is pixel or deployed, was " + agentStack);
        }
        frames = root.resolve("test-data/synthetic/query");
        enroll = root.resolve("test-data/synthetic/enroll");
        if (!Files.isDirectory(frames) || !Files.isDirectory(enroll)) {
            throw new IllegalStateException("synthetic faces not found under " + root.resolve("test-data/synthetic"));
        }
        for (int a = 1; a <= agents; a++) {
            sites.add("soak-" + a);
        }
        queryTopics = sites.stream().map(Topics::query).toList();
        System.out.printf("soak: %d agent(s) x %d camera(s) at %d frames/s for %.1f min, sampling every %d s%n", agents,
                cameras, fps, minutes, sampleSeconds);
    }

    @Override
    protected List<String> sites() {
        return sites;
    }

    @Override
    protected boolean measure() throws Exception {
        stack.startRecognizer(opt.get("--recognizer-heap"));
        System.out.printf("soak: broker on %s, recognizer up (%.0f s)%n", stack.bootstrap(), seconds(t0));
        Duration followFor = Duration.ofSeconds((long) (minutes * 60) + 1200);
        List<Agent> gateways = new ArrayList<>();
        List<Cameras.Camera> feeds = new ArrayList<>();
        for (int a = 1; a <= agents; a++) {
            String site = sites.get(a - 1);
            int port = KafkaServerProcess.freePort();
            Path gc = stack.work.resolve("gc-agent-" + a + ".log");
            Path ledger = stack.work.resolve("ledger-" + a + ".csv");
            List<String> jvm = new ArrayList<>();
            Map<String, String> env = new LinkedHashMap<>(Map.of("KAFKA_BOOTSTRAP_SERVERS", stack.bootstrap()));
            if (agentStack.equals("deployed")) {
                // What a gateway runs: the bundle's JVM flags and allocator setting, read from the shipped unit
                // file (so the figure describes it), and the agent's defaults (YuNet, dlib, EMBEDDING, shared models).
                DeployedAgent.Settings bundle = DeployedAgent.read(root.resolve(DeployedAgent.UNIT));
                jvm.addAll(bundle.jvm());
                env.putAll(bundle.env());
                env.put("FACE_MODEL_CACHE", stack.work.resolve("model-cache").toString());
            } else {
                jvm.add("-Xmx" + opt.get("--agent-heap"));
            }
            jvm.addAll(List.of(GcLog.option(gc),
                    "-Dmicronaut.server.port=" + port,
                    "-Dagent.site-id=" + site,
                    "-Dagent.gateway-id=gw-" + a,
                    "-Dagent.enroll-folder=" + enroll,
                    "-Dagent.data-dir=" + stack.work.resolve("agent-data-" + a),
                    "-Dagent.ledger=" + ledger));
            if (agentStack.equals("pixel")) {
                jvm.addAll(List.of(
                        // PEEP l1-clip, 8 components on the cascade (the agent's default before the deep stack): with
                        // FISHER an every-n budget releases queries at another preset than the enrollments, whose
                        // model they never match.
                        "-Dagent.detector=haar",
                        "-Dagent.mechanism=peep",
                        "-Dagent.sensitivity-mode=l1-clip",
                        // Every detected face released at ε 2, under a per-track cap no run reaches.
                        "-Dagent.budget=every-n:n=1,epsilon=2",
                        "-Dagent.epsilon=100000",
                        "-Dagent.floor.epsilon-max=100000",
                        "-Dagent.scale-factor=" + opt.get("--scale-factor")));
            }
            for (int c = 1; c <= cameras; c++) {
                Cameras.Camera feed = stack.own(Cameras.mjpeg(frames, fps));
                feeds.add(feed);
                jvm.add("-Dagent.cameras.cam-" + a + "-" + c + ".url=" + feed.url());
            }
            ManagedProcess p = stack.own(ManagedProcess.java("agent-" + a, DemoProcesses.classpath(root, "agent"),
                    "org.privface.agent.Application", jvm, List.of(), env, stack.work));
            gateways.add(new Agent(site, p, port, new GcLog(gc), ledger));
        }
        for (Agent g : gateways) {
            DemoProcesses.awaitHealthy(g.process, g.port);
        }
        System.out.printf("soak: agents up (%.0f s); streaming%n", seconds(t0));

        Follower follower = stack.own(new Follower(stack.bootstrap(), queryTopics, followFor));
        SampleTable table = new SampleTable(out.resolve("soak.csv"));
        int samples = (int) Math.ceil(minutes * 60 / sampleSeconds);
        Progress progress = new Progress(System.out, samples);
        long start = System.nanoTime();
        double[] machineBefore = ProcessProbe.machineSeconds();
        double harnessCpuBefore = ProcessProbe.cpuSeconds(ProcessHandle.current().pid());
        double brokerCpuBefore = ProcessProbe.cpuSeconds(stack.kafka.pid());
        double recognizerCpuBefore = ProcessProbe.cpuSeconds(stack.recognizer.pid());
        for (Agent g : gateways) {
            g.lastCpu = ProcessProbe.cpuSeconds(g.process.pid());
        }
        for (Agent g : gateways) {
            g.last = Prometheus.scrape(g.port);
        }
        Prometheus recognizerBefore = Prometheus.scrape(stack.recognizerPort);
        // Management beans of each JVM: a full GC on demand, and the heap right after it.
        Map<String, JvmProbe> probes = new LinkedHashMap<>();
        for (int a = 0; a < gateways.size(); a++) {
            probes.put("agent" + (a + 1), probe(gateways.get(a).process.pid()));
        }
        probes.put("recognizer", probe(stack.recognizer.pid()));
        probes.values().stream().filter(java.util.Objects::nonNull).forEach(stack::own);
        List<ManagedProcess> children = new ArrayList<>(List.of(stack.recognizer));
        gateways.forEach(g -> children.add(g.process));
        long lastSample = start;
        int fullGcEvery = fullGcSeconds <= 0 ? Integer.MAX_VALUE : Math.max(1, fullGcSeconds / sampleSeconds);
        for (int s = 1; s <= samples; s++) {
            sleepUntil(start + (long) (s * sampleSeconds * 1e9));
            for (ManagedProcess c : children) {
                if (!c.alive()) {
                    throw new IllegalStateException(c.name() + " exited during the soak (killed from outside, or "
                            + "crashed); see " + c.log());
                }
            }
            if (!ProcessHandle.of(stack.kafka.pid()).map(ProcessHandle::isAlive).orElse(false)) {
                throw new IllegalStateException("the broker exited during the soak");
            }
            Map<String, Double> liveHeap = new LinkedHashMap<>();
            if (s % fullGcEvery == 0) {
                probes.forEach((name, p) -> liveHeap.put(name, p == null ? Double.NaN : p.heapAfterFullGc()));
            }
            long now = System.nanoTime();
            double interval = (now - lastSample) / 1e9;
            lastSample = now;
            LinkedHashMap<String, Double> row = new LinkedHashMap<>();
            row.put("t_s", (System.nanoTime() - start) / 1e9);
            double ourCpu = 0;
            double fpsSum = 0;
            double releases = 0;
            double spool = 0;
            for (int a = 0; a < gateways.size(); a++) {
                Agent g = gateways.get(a);
                String n = "agent" + (a + 1) + "_";
                Prometheus p = Prometheus.scrape(g.port);
                double cpu = ProcessProbe.cpuSeconds(g.process.pid());
                row.put(n + "rss_mib", ProcessProbe.rssBytes(g.process.pid()) / MIB);
                HeapWindow h = heap(g.gc.drain());
                row.put(n + "heap_after_full_gc_mib", liveHeap.getOrDefault("agent" + (a + 1), Double.NaN) / MIB);
                row.put(n + "heap_after_gc_min_mib", h.minAfter() / MIB);
                row.put(n + "gc_pause_max_ms", h.maxPauseMillis());
                row.put(n + "cpu_pct", 100 * (cpu - g.lastCpu) / interval);
                ourCpu += cpu - g.lastCpu;
                g.lastCpu = cpu;
                double fr = rate(p, g.last, "privface_agent_frames_total", interval);
                double rel = rate(p, g.last, "privface_agent_releases_total", interval);
                row.put(n + "frames_per_s", fr);
                row.put(n + "releases_per_s", rel);
                row.put(n + "acked_per_s", rate(p, g.last, "privface_agent_uplink_acknowledged_total", interval));
                row.put(n + "spool_depth", p.sum("privface_agent_spool_depth"));
                row.put(n + "spool_dropped", p.sum("privface_agent_spool_dropped"));
                row.put(n + "publish_p50_ms", 1000 * p.max("privface_agent_publish_latency_seconds", "quantile", "0.5"));
                row.put(n + "publish_p99_ms", 1000 * p.max("privface_agent_publish_latency_seconds", "quantile", "0.99"));
                row.put(n + "publish_mean_ms", 1000 * delta(p, g.last, "privface_agent_publish_latency_seconds_sum")
                        / delta(p, g.last, "privface_agent_publish_latency_seconds_count"));
                fpsSum += fr;
                releases += rel;
                spool += p.sum("privface_agent_spool_depth");
                if (!p.empty()) {
                    g.last = p;
                }
            }
            row.put("frames_per_s", fpsSum);
            row.put("releases_per_s", releases);
            row.put("spool_depth", spool);

            Prometheus rp = Prometheus.scrape(stack.recognizerPort);
            double rcpu = ProcessProbe.cpuSeconds(stack.recognizer.pid());
            HeapWindow rh = heap(stack.recognizerGc.drain());
            row.put("recognizer_rss_mib", ProcessProbe.rssBytes(stack.recognizer.pid()) / MIB);
            row.put("recognizer_heap_after_full_gc_mib", liveHeap.getOrDefault("recognizer", Double.NaN) / MIB);
            row.put("recognizer_heap_after_gc_min_mib", rh.minAfter() / MIB);
            row.put("recognizer_gc_pause_max_ms", rh.maxPauseMillis());
            row.put("recognizer_cpu_pct", 100 * (rcpu - recognizerCpuBefore) / interval);
            ourCpu += rcpu - recognizerCpuBefore;
            recognizerCpuBefore = rcpu;
            row.put("recognizer_results_per_s", rate(rp, recognizerBefore, "privface_recognizer_results_total", interval));
            row.put("recognizer_dead_letters", rp.sum("privface_recognizer_dead_letters_total"));
            row.put("recognizer_duplicates", rp.sum("privface_recognizer_duplicates_total"));
            if (!rp.empty()) {
                recognizerBefore = rp;
            }
            long lag = safeLag(stack, queryTopics);
            row.put("recognizer_lag", lag < 0 ? Double.NaN : lag);
            double bcpu = ProcessProbe.cpuSeconds(stack.kafka.pid());
            row.put("broker_rss_mib", ProcessProbe.rssBytes(stack.kafka.pid()) / MIB);
            row.put("broker_cpu_pct", 100 * (bcpu - brokerCpuBefore) / interval);
            ourCpu += bcpu - brokerCpuBefore;
            brokerCpuBefore = bcpu;
            double hcpu = ProcessProbe.cpuSeconds(ProcessHandle.current().pid());
            row.put("harness_cpu_pct", 100 * (hcpu - harnessCpuBefore) / interval);
            ourCpu += hcpu - harnessCpuBefore;
            harnessCpuBefore = hcpu;
            double[] machine = ProcessProbe.machineSeconds();
            double busy = machine[0] - machineBefore[0];
            double total = machine[1] - machineBefore[1];
            machineBefore = machine;
            row.put("machine_busy_pct", 100 * busy / total);
            // CPU the machine spent on anything but this run's processes (other jobs), as a share of all CPUs.
            row.put("others_pct", 100 * Math.max(0, busy - ourCpu) / total);

            Follower.Window w = follower.take();
            row.put("topic_queries_per_s", w.newQueries() / interval);
            row.put("capture_to_topic_p50_ms", Stats.percentile(w.queryMillis(), 0.5));
            row.put("capture_to_topic_p99_ms", Stats.percentile(w.queryMillis(), 0.99));
            row.put("topic_results_per_s", w.newResults() / interval);
            row.put("capture_to_result_p50_ms", Stats.percentile(w.resultMillis(), 0.5));
            row.put("capture_to_result_p99_ms", Stats.percentile(w.resultMillis(), 0.99));
            table.add(row);
            progress.step(String.format(Locale.ROOT, "%.0f fps, %.0f rel/s, lag %.0f", fpsSum, releases,
                    row.get("recognizer_lag")));
        }
        double soakSeconds = (System.nanoTime() - start) / 1e9;
        // Each agent's peak resident memory since it started (VmHWM), read while it still runs.
        List<Double> peakRss = new ArrayList<>();
        for (Agent g : gateways) {
            peakRss.add(ProcessProbe.peakRssBytes(g.process.pid()) / MIB);
        }

        // The cameras go away; every release must reach the broker, then the ledgers are complete.
        feeds.forEach(Cameras.Camera::close);
        long drainDeadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        double spoolLeft = Double.NaN;
        double releasesBefore = -1;
        while (System.nanoTime() < drainDeadline) {
            Thread.sleep(2000);
            double spoolNow = 0;
            double releasesNow = 0;
            for (Agent g : gateways) {
                Prometheus p = Prometheus.scrape(g.port);
                spoolNow += p.sum("privface_agent_spool_depth");
                releasesNow += p.sum("privface_agent_releases_total");
                if (!p.empty()) {
                    g.last = p;
                }
            }
            spoolLeft = spoolNow;
            if (spoolNow == 0 && releasesNow == releasesBefore) {
                break;
            }
            releasesBefore = releasesNow;
        }
        double releasedByMetrics = 0;
        double dropped = 0;
        double resent = 0;
        for (Agent g : gateways) {
            releasedByMetrics += g.last.sum("privface_agent_releases_total");
            dropped += g.last.sum("privface_agent_spool_dropped");
            resent += nz(g.last.sum("privface_agent_uplink_resent_total"));
            g.process.close(); // SIGTERM: the agent flushes its ledger as it stops
        }
        Set<String> released = new HashSet<>();
        long ledgerLines = 0;
        for (Agent g : gateways) {
            for (String line : Files.readAllLines(g.ledger)) {
                if (!line.isBlank()) {
                    ledgerLines++;
                    released.add(line.substring(0, line.indexOf(',')));
                }
            }
        }
        long catchUp = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!follower.queries.containsAll(released) && System.nanoTime() < catchUp) {
            Thread.sleep(500);
        }
        Set<String> lost = new HashSet<>(released);
        lost.removeAll(follower.queries);
        long answerDeadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        long finalLag = safeLag(stack, queryTopics);
        while (finalLag > 0 && System.nanoTime() < answerDeadline) {
            Thread.sleep(1000);
            finalLag = safeLag(stack, queryTopics);
        }
        Thread.sleep(1000);
        long answered = released.stream().filter(follower.results::contains).count();

        // Charts.
        double[] tMin = java.util.Arrays.stream(table.column("t_s")).map(x -> x / 60).toArray();
        Map<String, double[]> rss = new LinkedHashMap<>();
        Map<String, double[]> heap = new LinkedHashMap<>();
        Map<String, double[]> lat = new LinkedHashMap<>();
        for (int a = 1; a <= agents; a++) {
            rss.put("agent " + a, table.column("agent" + a + "_rss_mib"));
            heap.put("agent " + a + " after full GC", table.column("agent" + a + "_heap_after_full_gc_mib"));
            heap.put("agent " + a + " lowest after any GC", table.column("agent" + a + "_heap_after_gc_min_mib"));
            lat.put("agent " + a + " publish p50", table.column("agent" + a + "_publish_p50_ms"));
            lat.put("agent " + a + " publish p99", table.column("agent" + a + "_publish_p99_ms"));
        }
        rss.put("recognizer", table.column("recognizer_rss_mib"));
        rss.put("broker", table.column("broker_rss_mib"));
        heap.put("recognizer after full GC", table.column("recognizer_heap_after_full_gc_mib"));
        heap.put("recognizer lowest after any GC", table.column("recognizer_heap_after_gc_min_mib"));
        lat.put("capture to topic p99 (reader)", table.column("capture_to_topic_p99_ms"));
        lat.put("capture to result p50", table.column("capture_to_result_p50_ms"));
        lat.put("capture to result p99", table.column("capture_to_result_p99_ms"));
        Map<String, double[]> tput = new LinkedHashMap<>();
        tput.put("frames/s (all cameras)", table.column("frames_per_s"));
        tput.put("releases/s", table.column("releases_per_s"));
        tput.put("results/s (recognizer)", table.column("recognizer_results_per_s"));
        tput.put("recognizer lag (records)", table.column("recognizer_lag"));
        tput.put("spool depth (records)", table.column("spool_depth"));
        tput.put("CPU of other jobs (% of machine)", table.column("others_pct"));
        chart("soak-memory.png", "Soak: resident memory", "minutes", "MiB", false, tMin, rss);
        chart("soak-heap.png", "Soak: heap after GC", "minutes", "MiB", false, tMin, heap);
        chart("soak-latency.png", "Soak: latency", "minutes", "ms (log)", true, tMin, lat);
        chart("soak-throughput.png", "Soak: throughput, lag, spool, other load", "minutes",
                "per second / records / %", false, tMin, tput);

        // Criteria.
        int n = table.size();
        int firstThirdEnd = n / 3;
        int lastThirdStart = n - n / 3;
        int lastTwoThirdsStart = n - (2 * n) / 3;
        int warm = (int) Math.ceil(warmup / sampleSeconds);
        double[] t = table.column("t_s");
        List<String> report = new ArrayList<>();
        boolean ok = true;
        List<String> jvms = new ArrayList<>();
        for (int a = 1; a <= agents; a++) {
            jvms.add("agent" + a);
        }
        jvms.add("recognizer");
        for (String j : jvms) {
            double[] x = java.util.Arrays.copyOfRange(t, lastTwoThirdsStart, n);
            double[] y = table.column(j + "_heap_after_full_gc_mib", lastTwoThirdsStart, n);
            double slope = Stats.slope(x, y) * 60;
            double rssSlope = Stats.slope(x, table.column(j + "_rss_mib", lastTwoThirdsStart, n)) * 60;
            boolean pass = Double.isFinite(slope) && slope <= heapSlopeBound;
            ok &= pass;
            report.add(String.format(Locale.ROOT, "memory %-10s heap after full GC %.1f -> %.1f MiB, slope over last 2/3 "
                            + "%+.2f MiB/min (bound %.1f): %s; RSS %.0f -> %.0f MiB, slope %+.2f MiB/min",
                    j, firstFinite(table.column(j + "_heap_after_full_gc_mib")),
                    lastFinite(table.column(j + "_heap_after_full_gc_mib")), slope, heapSlopeBound, pass ? "PASS" : "FAIL",
                    firstFinite(table.column(j + "_rss_mib")), lastFinite(table.column(j + "_rss_mib")), rssSlope));
        }
        List<String> latencyColumns = new ArrayList<>();
        for (int a = 1; a <= agents; a++) {
            latencyColumns.add("agent" + a + "_publish_p99_ms");
        }
        latencyColumns.add("capture_to_topic_p99_ms");
        for (String c : latencyColumns) {
            double early = Stats.median(table.column(c, Math.max(warm, 0), Math.max(firstThirdEnd, warm + 1)));
            double late = Stats.median(table.column(c, lastThirdStart, n));
            boolean pass = Double.isFinite(early) && Double.isFinite(late) && late <= p99Factor * early;
            ok &= pass;
            report.add(String.format(Locale.ROOT, "latency %-24s median p99 first third %.0f ms, last third %.0f ms, "
                    + "ratio %.2f (bound %.1f): %s", c, early, late, late / early, p99Factor, pass ? "PASS" : "FAIL"));
        }
        boolean noLoss = lost.isEmpty() && dropped == 0 && !released.isEmpty();
        ok &= noLoss;
        report.add(String.format(Locale.ROOT, "records  %d releases in the ledgers (%d lines; agents' metrics %.0f), %d distinct "
                        + "event ids on the query topics (%d copies, %d resent by the uplinks), lost %d, spool dropped %.0f: %s",
                released.size(), ledgerLines, releasedByMetrics, follower.queries.size(), follower.queryCopies.get(),
                (long) resent, lost.size(), dropped, noLoss ? "PASS" : "FAIL"));
        report.add(String.format(Locale.ROOT, "answers  %d of %d releases answered on %s (final lag %d; %d unreadable; "
                        + "dead letters %.0f)", answered, released.size(), Topics.RESULTS, finalLag, follower.unreadable.get(),
                nz(recognizerBefore.sum("privface_recognizer_dead_letters_total"))));
        double meanFps = mean(table.column("frames_per_s"));
        report.add(String.format(Locale.ROOT, "load     offered %d frames/s, processed %.1f frames/s on average, %.1f releases/s, "
                        + "machine busy %.0f%% on average of which other jobs %.0f%%; soak %.1f min, %.1f min in all",
                agents * cameras * fps, meanFps, mean(table.column("releases_per_s")), mean(table.column("machine_busy_pct")),
                mean(table.column("others_pct")), soakSeconds / 60, seconds(t0) / 60));
        for (int a = 1; a <= agents; a++) {
            report.add(String.format(Locale.ROOT, "peak     agent%d resident memory since start (VmHWM) %.0f MiB, %d camera(s),"
                    + " stack %s%s", a, peakRss.get(a - 1), cameras, agentStack, agentStack.equals("deployed")
                    ? " (the JVM flags and allocator setting of " + DeployedAgent.UNIT + ")" : ", -Xmx" + opt.get("--agent-heap")));
        }
        report(ok, report, "soak-summary.txt");
        System.out.println("samples: " + root.relativize(table.csv()) + "; charts: soak-{memory,heap,latency,throughput}.png");
        return ok;
    }

    private static JvmProbe probe(long pid) {
        try {
            return JvmProbe.attach(pid);
        } catch (Exception e) {
            System.err.println("soak: cannot attach to JVM " + pid + " (" + e + "); its heap after full GC stays empty");
            return null;
        }
    }

    private static long safeLag(LoadStack stack, List<String> topics) {
        try {
            return stack.lag(topics);
        } catch (Exception e) {
            return -1;
        }
    }
}
