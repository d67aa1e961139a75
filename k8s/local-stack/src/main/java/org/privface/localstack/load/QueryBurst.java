package org.privface.localstack.load;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.privface.agent.AgentSettings;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceDetector;
import org.privface.agent.image.OpenCv;
import org.privface.privacy.Release;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.fisher.FisherBasis;
import org.privface.privacy.fisher.FisherMechanism;
import org.privface.agent.publish.FacePublisher;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.TrackRelease;
import org.privface.wire.topics.Topics;

/**
 * The recognizer under a burst of queries: a real Kafka broker process and the recognizer's JVM;
 * the agent's own classes (detector, FISHER preset, secure Laplace, {@link FacePublisher}) enroll
 * the synthetic enrollment faces so the recognizer trains a model, then build {@code --records}
 * query releases of the synthetic query faces and produce them to the query topic as fast as the
 * producer goes (the agent's producer settings, idempotent and acks=all, with 256 KiB batches and
 * 20 ms linger; keyed by {@code --cameras} camera ids). Every
 * {@code --sample-ms} it records the recognizer group's lag (Admin: end offsets against committed
 * offsets), the distinct results read back from privface.results, their capture-to-answer latency
 * (each query's capture timestamp is its send time), dead letters and the recognizer's CPU and memory.
 * Passes when every query is answered exactly once by event id and nothing is dead-lettered.
 * Writes query-burst.csv and query-burst.png, query-burst-rate.png, query-burst-latency.png to {@code --out}.
 */
public final class QueryBurst extends LoadRun {
    private int records;
    private String site;
    private int enrollReleases;
    private int cameras;
    private long sampleMs;
    private Duration timeout;
    private LabelledFaces enroll;
    private LabelledFaces query;
    private FisherMechanism mechanism;

    private QueryBurst() {
        super("query burst", "query-burst-logs");
    }

    public static void main(String[] args) throws Exception {
        new QueryBurst().run(args);
    }

    @Override
    protected void options(Map<String, String> d) {
        d.put("--records", "100000");
        d.put("--site", "burst");
        d.put("--epsilon", "8");
        d.put("--enroll-releases", "4");
        d.put("--cameras", "24");
        d.put("--sample-ms", "1000");
        d.put("--timeout-minutes", "15");
        d.put("--recognizer-heap", "1g");
    }

    @Override
    protected void prepare() throws Exception {
        records = Integer.parseInt(opt.get("--records"));
        site = opt.get("--site");
        double epsilon = Double.parseDouble(opt.get("--epsilon"));
        enrollReleases = Integer.parseInt(opt.get("--enroll-releases"));
        cameras = Integer.parseInt(opt.get("--cameras"));
        sampleMs = Long.parseLong(opt.get("--sample-ms"));
        timeout = Duration.ofMinutes(Long.parseLong(opt.get("--timeout-minutes")));

        // The gateway side, in-process: the agent's detector, basis and mechanism on the synthetic faces.
        OpenCv.load();
        AgentSettings a = new AgentSettings();
        FaceDetector detector = new FaceDetector(a.getCascade(), a.getScaleFactor(), a.getMinNeighbors(), a.getMinFaceSize(),
                a.getMaxDetectWidth());
        enroll = FaceDatasets.detected(root.resolve("test-data/synthetic/enroll"), detector, FaceCrops.Shape.PEEP);
        query = FaceDatasets.detected(root.resolve("test-data/synthetic/query"), detector, FaceCrops.Shape.PEEP);
        FisherMechanism.Preset preset = FisherMechanism.Preset.forEpsilon(epsilon);
        FisherBasis basis = FisherBasis.fit(enroll.faces(), enroll.labels(), enroll.names().size(), FaceCrops.WIDTH,
                FaceCrops.HEIGHT, preset.p(), preset.k(), preset.quantile());
        mechanism = new FisherMechanism(basis, epsilon, new SecureLaplace());
        System.out.printf("query burst: %d records; FISHER at epsilon %.1f (basis %s, %d dimensions); %d enrollment faces "
                        + "of %d people x %d releases, %d query faces%n", records, epsilon, basis.id(), basis.dimension(),
                enroll.size(), enroll.names().size(), enrollReleases, query.size());
    }

    @Override
    protected List<String> sites() {
        return List.of(site);
    }

    @Override
    protected boolean measure() throws Exception {
        // The agent's producer (idempotent, acks=all, lz4), with bigger batches: a bulk sender, not a camera.
        Properties bulk = new Properties();
        bulk.put("batch.size", 256 * 1024);
        bulk.put("linger.ms", 20);
        try (FacePublisher publisher = new FacePublisher(stack.bootstrap(), site, bulk)) {
            stack.startRecognizer(opt.get("--recognizer-heap"));
            System.out.printf("query burst: broker on %s, recognizer up (%.0f s)%n", stack.bootstrap(), seconds(t0));

            // 1. Enrollments, and the model they train.
            List<CompletableFuture<?>> acks = new ArrayList<>();
            Instant now = Instant.now();
            for (int i = 0; i < enroll.size(); i++) {
                for (int r = 1; r <= enrollReleases; r++) {
                    Release rel = mechanism.perturb(enroll.faces()[i]);
                    acks.add(publisher.send(new org.privface.agent.publish.PerturbedRecords(site).of(rel, "cam-enroll", "enroll-" + i, now,
                            enroll.names().get(enroll.labels()[i]), track(r, enrollReleases, rel.epsilonPerFace(),
                                    "enrollment:k=" + enrollReleases, now))));
                }
            }
            CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            awaitModel(stack.recognizerPort, stack.recognizerToken(), site, Duration.ofMinutes(3));
            System.out.printf("query burst: %d enrollments published, model trained (%.0f s)%n", acks.size(), seconds(t0));

            // 2. The queries, built before the clock starts; each is stamped with its send time.
            List<PerturbedFace> burst = new ArrayList<>(records);
            Map<String, String> truth = new java.util.HashMap<>();
            for (int i = 0; i < records; i++) {
                int f = i % query.size();
                Release rel = mechanism.perturb(query.faces()[f]);
                PerturbedFace rec = new org.privface.agent.publish.PerturbedRecords(site).of(rel, "cam-" + (i % cameras), "trk-" + i, Instant.EPOCH, null,
                        track(1, 1, rel.epsilonPerFace(), "once", now));
                burst.add(rec);
                truth.put(rec.getEventId(), query.names().get(query.labels()[f]));
            }
            Follower follower = stack.own(new Follower(stack.bootstrap(), List.of(), timeout.plusMinutes(5)));
            AtomicLong acked = new AtomicLong();
            AtomicLong failed = new AtomicLong();
            long[] producedAt = new long[2];
            Thread producer = new Thread(() -> {
                producedAt[0] = System.nanoTime();
                for (PerturbedFace rec : burst) {
                    long ms = System.currentTimeMillis();
                    rec.setCaptureTimestamp(Instant.ofEpochMilli(ms));
                    follower.captureMillis.put(rec.getEventId(), ms);
                    publisher.send(rec).whenComplete((md, e) -> (e == null ? acked : failed).incrementAndGet());
                }
                publisher.flush();
                producedAt[1] = System.nanoTime();
            }, "burst-producer");
            List<String> topics = List.of(Topics.query(site));
            long endBefore = stack.endOffsets(topics);
            long deadLettersBefore = stack.endOffsets(List.of(Topics.DEAD_LETTER));
            SampleTable table = new SampleTable(out.resolve("query-burst.csv"));
            long start = System.nanoTime();
            long deadline = start + timeout.toNanos();
            producer.start();
            double cpuBefore = ProcessProbe.cpuSeconds(stack.recognizer.pid());
            double brokerCpuBefore = ProcessProbe.cpuSeconds(stack.kafka.pid());
            double harnessCpuBefore = ProcessProbe.cpuSeconds(ProcessHandle.current().pid());
            double[] machineBefore = ProcessProbe.machineSeconds();
            long lastProgress = System.nanoTime();
            long lastResults = 0;
            long lastAcked = 0;
            long peakLag = 0;
            double peakLagAt = 0;
            double lastResultAt = Double.NaN;
            double firstResultAt = Double.NaN;
            double lagZeroAt = Double.NaN;
            double producedAtT = Double.NaN;
            long resultsWhenProduced = 0;
            List<Double> allLatency = new ArrayList<>();
            for (int s = 1; System.nanoTime() < deadline; s++) {
                long due = start + s * sampleMs * 1_000_000L;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000L);
                }
                double t = (System.nanoTime() - start) / 1e9;
                double interval = sampleMs / 1000.0;
                long lag = stack.lag(topics);
                long end = stack.endOffsets(topics) - endBefore;
                Follower.Window w = follower.take();
                for (double x : w.resultMillis()) {
                    allLatency.add(x);
                }
                long results = follower.results.size();
                if (results > 0 && Double.isNaN(firstResultAt)) {
                    firstResultAt = t;
                }
                if (Double.isNaN(producedAtT) && acked.get() + failed.get() >= records) {
                    producedAtT = t;
                    resultsWhenProduced = results;
                }
                if (results > lastResults) {
                    lastResultAt = t;
                    lastProgress = System.nanoTime();
                }
                if (lag > peakLag) {
                    peakLag = lag;
                    peakLagAt = t;
                }
                double cpu = ProcessProbe.cpuSeconds(stack.recognizer.pid());
                HeapWindow h = heap(stack.recognizerGc.drain());
                LinkedHashMap<String, Double> row = new LinkedHashMap<>();
                row.put("t_s", t);
                row.put("produced_acked", (double) acked.get());
                row.put("produced_per_s", (acked.get() - lastAcked) / interval);
                row.put("on_topic", (double) end);
                row.put("lag", (double) lag);
                row.put("results", (double) results);
                row.put("results_per_s", (results - lastResults) / interval);
                row.put("latency_p50_ms", Stats.percentile(w.resultMillis(), 0.5));
                row.put("latency_p99_ms", Stats.percentile(w.resultMillis(), 0.99));
                row.put("dead_letters", (double) (stack.endOffsets(List.of(Topics.DEAD_LETTER)) - deadLettersBefore));
                row.put("recognizer_cpu_pct", 100 * (cpu - cpuBefore) / interval);
                row.put("recognizer_rss_mib", ProcessProbe.rssBytes(stack.recognizer.pid()) / MIB);
                row.put("recognizer_heap_after_gc_min_mib", h.minAfter() / MIB);
                row.put("recognizer_gc_pause_max_ms", h.maxPauseMillis());
                double brokerCpu = ProcessProbe.cpuSeconds(stack.kafka.pid());
                double harnessCpu = ProcessProbe.cpuSeconds(ProcessHandle.current().pid());
                double[] machine = ProcessProbe.machineSeconds();
                double busy = machine[0] - machineBefore[0];
                double total = machine[1] - machineBefore[1];
                row.put("broker_cpu_pct", 100 * (brokerCpu - brokerCpuBefore) / interval);
                row.put("harness_cpu_pct", 100 * (harnessCpu - harnessCpuBefore) / interval);
                row.put("machine_busy_pct", 100 * busy / total);
                // CPU spent on anything but this run's processes (other jobs), as a share of the machine.
                row.put("others_pct", 100 * Math.max(0, busy - (cpu - cpuBefore) - (brokerCpu - brokerCpuBefore)
                        - (harnessCpu - harnessCpuBefore)) / total);
                machineBefore = machine;
                brokerCpuBefore = brokerCpu;
                harnessCpuBefore = harnessCpu;
                table.add(row);
                cpuBefore = cpu;
                lastResults = results;
                lastAcked = acked.get();
                if (s % 5 == 0 || results >= records) {
                    System.out.printf(Locale.ROOT, "  t %5.1f s  produced %6d  lag %6d  results %6d (%5.0f/s)%n", t,
                            acked.get(), lag, results, row.get("results_per_s"));
                }
                if (results >= records && lag == 0) {
                    lagZeroAt = t;
                    break;
                }
                boolean produced = !producer.isAlive();
                if (produced && System.nanoTime() - lastProgress > Duration.ofSeconds(60).toNanos()) {
                    System.out.println("query burst: no new result for 60 s; stopping");
                    break;
                }
            }
            producer.join(TimeUnit.MINUTES.toMillis(1));
            Thread.sleep(1000);
            Prometheus rp = Prometheus.scrape(stack.recognizerPort);

            // Summary and criteria.
            long answeredSent = burst.stream().filter(r -> follower.results.contains(r.getEventId())).count();
            long lost = records - answeredSent;
            long correct = burst.stream().filter(r -> truth.get(r.getEventId()).equals(follower.labels.get(r.getEventId())))
                    .count();
            long unknown = follower.labels.values().stream().filter(String::isEmpty).count();
            long deadLetters = stack.endOffsets(List.of(Topics.DEAD_LETTER)) - deadLettersBefore;
            double produceSeconds = (producedAt[1] - producedAt[0]) / 1e9;
            double[] rate = table.column("results_per_s");
            double peakRate = java.util.Arrays.stream(rate).filter(Double::isFinite).max().orElse(Double.NaN);
            double[] lat = allLatency.stream().mapToDouble(Double::doubleValue).toArray();
            boolean ok = lost == 0 && deadLetters == 0 && follower.results.size() == records && failed.get() == 0;
            List<String> report = new ArrayList<>();
            report.add(String.format(Locale.ROOT, "produced  %d query records in %.1f s (%.0f records/s), %d acknowledged, %d failed",
                    records, produceSeconds, records / produceSeconds, acked.get(), failed.get()));
            report.add(String.format(Locale.ROOT, "recognizer %d distinct results (%d copies read); first after %.1f s, last after "
                            + "%.1f s: %.0f results/s from the burst's start to the last answer, peak %.0f/s in one %.1f s sample",
                    follower.results.size(), follower.resultCopies.get(), firstResultAt, lastResultAt,
                    follower.results.size() / lastResultAt, peakRate, sampleMs / 1000.0));
            report.add(String.format(Locale.ROOT, "drain     once every query was on the topic (%.1f s, %d answered), the rest "
                            + "were answered at %.0f results/s", producedAtT, resultsWhenProduced,
                    (follower.results.size() - resultsWhenProduced) / (lastResultAt - producedAtT)));
            report.add(String.format(Locale.ROOT, "lag       peak %d records at %.1f s; every query answered and committed "
                    + "(lag 0) at %.1f s", peakLag, peakLagAt, lagZeroAt));
            report.add(String.format(Locale.ROOT, "latency   capture (send) to recognizedAt over all results: p50 %.0f ms, p99 %.0f ms, "
                    + "max %.0f ms", Stats.percentile(lat, 0.5), Stats.percentile(lat, 0.99), Stats.percentile(lat, 1.0)));
            report.add(String.format(Locale.ROOT, "answers   %d identified correctly, %d unknown, of %d (%.1f%% correct)", correct,
                    unknown, records, 100.0 * correct / records));
            report.add(String.format(Locale.ROOT, "errors    dead letters %d (recognizer metric %.0f), duplicates dropped by the "
                            + "recognizer %.0f, unreadable results %d", deadLetters,
                    nz(rp.sum("privface_recognizer_dead_letters_total")), nz(rp.sum("privface_recognizer_duplicates_total")),
                    follower.unreadable.get()));
            report.add(String.format(Locale.ROOT, "lost      %d of %d sent queries without a result: %s", lost, records,
                    ok ? "PASS" : "FAIL"));
            report.add(String.format(Locale.ROOT, "resources CPU on average (100%% = one core): recognizer %.0f%%, broker %.0f%%, "
                            + "harness (producer, reader) %.0f%%; recognizer RSS peak %.0f MiB; machine busy %.0f%% of which other "
                            + "jobs %.0f%%; %.1f min in all", mean(table.column("recognizer_cpu_pct")),
                    mean(table.column("broker_cpu_pct")), mean(table.column("harness_cpu_pct")),
                    java.util.Arrays.stream(table.column("recognizer_rss_mib")).filter(Double::isFinite).max().orElse(Double.NaN),
                    mean(table.column("machine_busy_pct")), mean(table.column("others_pct")), seconds(t0) / 60));
            report(ok, report, "query-burst-summary.txt");

            double[] x = table.column("t_s");
            Map<String, double[]> counts = new LinkedHashMap<>();
            counts.put("produced (acknowledged)", table.column("produced_acked"));
            counts.put("distinct results", table.column("results"));
            counts.put("recognizer group lag", table.column("lag"));
            counts.put("dead letters", table.column("dead_letters"));
            chart("query-burst.png", "Query burst of " + records + ": records and lag", "seconds",
                    "records", false, x, counts);
            Map<String, double[]> rates = new LinkedHashMap<>();
            rates.put("produced/s", table.column("produced_per_s"));
            rates.put("results/s", table.column("results_per_s"));
            chart("query-burst-rate.png", "Query burst: production and answer rates", "seconds",
                    "records per second", false, x, rates);
            Map<String, double[]> latency = new LinkedHashMap<>();
            latency.put("p50", table.column("latency_p50_ms"));
            latency.put("p99", table.column("latency_p99_ms"));
            chart("query-burst-latency.png", "Query burst: send to recognizedAt, per sample",
                    "seconds", "ms", false, x, latency);
            return ok;
        }
    }

    private static TrackRelease track(int index, int of, double epsilon, String policy, Instant windowStart) {
        return TrackRelease.newBuilder().setReleaseIndex(index).setEpsilonSpentInWindow(index * epsilon)
                .setEpsilonBudget(of * epsilon).setBudgetPolicy(policy).setWindowStartMillis(windowStart).build();
    }

    /** Waits until GET /models lists a model of the site. */
    private static void awaitModel(int port, String token, String site, Duration timeout) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/models"))
                    .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 200 && r.body().contains("\"site\":\"" + site + "\"")) {
                return;
            }
            Thread.sleep(500);
        }
        throw new IllegalStateException("no model for site " + site + " within " + timeout);
    }
}
