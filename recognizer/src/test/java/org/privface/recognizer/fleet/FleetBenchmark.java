package org.privface.recognizer.fleet;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;

import io.micronaut.context.ApplicationContext;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;
import org.privface.recognizer.ownership.SiteOwnership;
import org.privface.recognizer.model.ModelRegistry;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.topics.Topics;

/**
 * The fleet benchmark (issue 41), against the real test broker, replicas as Micronaut contexts in
 * this JVM: heap per owned site (retained heap after a full GC, over every site, each held by one
 * replica, measured around the arrival of every site's enrollments), the sites a replica fits in
 * a given heap from that, and the fleet-wide retrain time (from every site's enrollments sent at
 * once, to every site with a model) at each replica count. Writes {@code target/fleet-bench.md} and {@code target/fleet-bench.svg}.
 *
 * <p>Replicas in one JVM share its cores, so the retrain time here says nothing about scaling
 * across machines; run one replica per machine (or container with its own CPUs) for that.
 *
 * <pre>
 * mvn -B -pl recognizer -am test -Pfleet-bench -Dtest=FleetBenchmark -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dprivface.bench.sites=1000 -Dprivface.bench.replicas=3,6 -Dprivface.bench.enrollments=30
 * </pre>
 */
@EnabledIfSystemProperty(named = "privface.fleet.bench", matches = "true")
class FleetBenchmark {
    private static final int SITES = Integer.getInteger("privface.bench.sites", 12);
    private static final String REPLICAS = System.getProperty("privface.bench.replicas", "3,6");
    private static final int ENROLLMENTS = Integer.getInteger("privface.bench.enrollments", 30);
    private static final int DIM = Integer.getInteger("privface.bench.dim", 128);
    private static final int PEOPLE = 3;
    private static final long HEAP = Long.getLong("privface.bench.heap-mib", 1536) << 20;

    @Test
    void heapPerSiteAndFleetRetrainTime(@TempDir Path dir) throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 6);
        Path key = FleetRecords.signingKey(dir);
        long idle = idleReplicaHeap(key, run);
        log("an idle replica retains %.1f MiB", idle / 1048576.0);
        StringBuilder table = new StringBuilder("| replicas | sites | enrollments per site | dim | retrain (s) | heap per site (KiB)"
                + " | sites per replica at " + (HEAP >> 20) + " MiB |\n|---|---|---|---|---|---|---|\n");
        Map<Integer, Double> seconds = new HashMap<>();
        for (String rs : REPLICAS.split(",")) {
            int replicas = Integer.parseInt(rs.trim());
            // Sites of their own per run, so each run's replicas start on empty topics.
            String prefix = "fb" + run + "r" + replicas + "-";
            List<String> sites = new ArrayList<>();
            for (int s = 0; s < SITES; s++) {
                sites.add(prefix + s);
            }
            Instant t = Instant.now();
            FleetRecords.createTopics(sites);
            log("created the topics of %d sites in %s", SITES, Duration.between(t, Instant.now()));
            String group = "bench-" + run + "-" + replicas;
            List<ApplicationContext> fleet = new ArrayList<>();
            try {
                for (int i = 0; i < replicas; i++) {
                    fleet.add(FleetRecords.replica("bench-" + i, group, prefix + "[0-9]+", key, Map.of(
                            "recognizer.min-enrollments", String.valueOf(ENROLLMENTS),
                            "recognizer.validation-every", "0",
                            "recognizer.quiet-period", "200ms")));
                }
                List<SiteOwnership> owners = fleet.stream().map(c -> c.getBean(SiteOwnership.class)).toList();
                assertTrue(FleetRecords.await(Duration.ofMinutes(10), () -> sites.stream().allMatch(s ->
                        owners.stream().anyMatch(o -> o.ready(s)))), "every site owned and replayed");
                long before = usedAfterGc();
                long t0 = System.nanoTime();
                produce(sites);
                List<ModelRegistry> registries = fleet.stream().map(c -> c.getBean(ModelRegistry.class)).toList();
                assertTrue(FleetRecords.await(Duration.ofMinutes(60), () -> sites.stream().allMatch(s ->
                        registries.stream().anyMatch(reg -> reg.models().keySet().stream().anyMatch(k -> k.site().equals(s))))),
                        "every site trained");
                double secs = (System.nanoTime() - t0) / 1e9;
                seconds.put(replicas, secs);
                long perSite = Math.max(0, (usedAfterGc() - before) / SITES);
                long fit = perSite == 0 ? -1 : (HEAP - idle) / perSite;
                List<Integer> owned = owners.stream().map(o -> o.sites().size()).toList();
                log("%d replicas (owning %s): every site trained in %.1f s; %.1f KiB retained per site", replicas, owned,
                        secs, perSite / 1024.0);
                table.append(String.format("| %d | %d | %d | %d | %.1f | %.1f | %d |%n", replicas, SITES, ENROLLMENTS, DIM,
                        secs, perSite / 1024.0, fit));
            } finally {
                fleet.forEach(ApplicationContext::close);
            }
        }
        String load = String.format("load average %.2f on %d CPUs", ManagementFactory.getOperatingSystemMXBean()
                .getSystemLoadAverage(), Runtime.getRuntime().availableProcessors());
        table.append("\n").append(load).append(", all replicas in one JVM (-Xmx ")
                .append(Runtime.getRuntime().maxMemory() >> 20).append(" MiB)\n");
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target", "fleet-bench.md"), table.toString());
        Files.writeString(Path.of("target", "fleet-bench.svg"), chart(seconds));
        log("%s", table);
    }

    /** Every site's enrollments, all at once: the fleet-wide (re)training starts here. */
    private static void produce(List<String> sites) {
        try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(FleetRecords.client(), new StringSerializer(),
                new ByteArraySerializer())) {
            SplittableRandom r = new SplittableRandom(41);
            for (String site : sites) {
                for (int i = 0; i < ENROLLMENTS; i++) {
                    PerturbedFace f = enrollment(site, site + "-" + i, i % PEOPLE, r);
                    p.send(new ProducerRecord<>(Topics.enrollment(site), "p" + (i % PEOPLE), FaceRecords.encode(f)));
                }
            }
            p.flush();
        }
    }

    /** Heap retained by one replica that owns nothing (its pattern matches no site). */
    private static long idleReplicaHeap(Path key, String run) throws Exception {
        long before = usedAfterGc();
        try (ApplicationContext c = FleetRecords.replica("idle", "bench-idle-" + run, "no-such-site-" + run, key, Map.of())) {
            Thread.sleep(2_000);
            return Math.max(0, usedAfterGc() - before);
        }
    }

    private static long usedAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
        }
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    private static PerturbedFace enrollment(String site, String id, int person, SplittableRandom r) {
        List<Float> v = new ArrayList<>(DIM);
        for (int i = 0; i < DIM; i++) {
            v.add((float) ((i % PEOPLE == person ? 1 : 0) + r.nextGaussian() * 0.3));
        }
        return PerturbedFace.newBuilder().setEventId(id).setSiteId(site).setCameraId("enrollment").setTrackId("t-" + id)
                .setCaptureTimestamp(Instant.now()).setKind(RecordKind.ENROLLMENT)
                .setMechanism(MechanismParams.newBuilder().setName("PEEP").setSensitivityMode("l1-clip")
                        .setEpsilonPerCoordinate(1).setEpsilonPerFace(DIM).setNoiseScale(1).setBasisId("bench").build())
                .setDimension(DIM).setVector(v).setEnrollmentLabel("p" + person).build();
    }

    /** A bar chart of the retrain time per replica count, as SVG. */
    static String chart(Map<Integer, Double> seconds) {
        double max = seconds.values().stream().mapToDouble(d -> d).max().orElse(1);
        StringBuilder svg = new StringBuilder("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"420\" height=\""
                + (40 + 30 * seconds.size()) + "\" font-family=\"sans-serif\" font-size=\"12\">\n"
                + "<text x=\"10\" y=\"18\">fleet-wide retrain time (s) by replicas</text>\n");
        int y = 30;
        for (var e : new java.util.TreeMap<>(seconds).entrySet()) {
            int w = (int) Math.round(300 * e.getValue() / max);
            svg.append(String.format("<text x=\"10\" y=\"%d\">%d</text><rect x=\"40\" y=\"%d\" width=\"%d\" height=\"20\" fill=\"#4a7\"/>"
                    + "<text x=\"%d\" y=\"%d\">%.1f</text>%n", y + 15, e.getKey(), y, w, 45 + w, y + 15, e.getValue()));
            y += 30;
        }
        return svg.append("</svg>\n").toString();
    }

    private static void log(String format, Object... args) {
        System.out.println("[fleet-bench] " + String.format(format, args));
    }
}
