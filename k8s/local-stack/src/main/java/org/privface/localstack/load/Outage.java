package org.privface.localstack.load;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import javax.imageio.ImageIO;

import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.publish.DiskSpool;
import org.privface.agent.publish.DropPolicy;
import org.privface.broker.KafkaServerProcess;
import org.privface.broker.ManagedProcess;
import org.privface.localstack.Cameras;
import org.privface.localstack.DemoProcesses;
import org.privface.wire.topics.Topics;

/**
 * Issue 31's broker outage through a real day: the agent's JVM with its shipped defaults (YuNet,
 * dlib, EMBEDDING sign-cap at ε 20, budget {@code once}, per-person linking) reads a live MJPEG
 * camera at 25 frames/s showing one LFW person after another; the broker process is stopped for
 * {@code --outage-seconds} and started again on the same ports and data. Sampled throughout: the
 * agent's frames, releases, acknowledgements, spool depth and spool bytes, and the camera's frames
 * skipped because the agent had not read the earlier ones. After the restart: time to the first
 * acknowledgement and until the backlog is sent; at the end every event id in the agent's ledger
 * must be on the query topic (duplicates only under the same id), and the spool must have dropped
 * nothing.
 *
 * <p>The frames: 640×480 grey, each person's first lfw-public photo enlarged to 200×200 and shown for
 * {@code --hold-frames} frames in one of four places in turn (so the tracker starts a new track per
 * person), one person after another; 1,522 people, then again from the first. Writes
 * {@code outage-NAME.csv}, {@code outage-NAME-spool.png} and {@code outage-NAME-summary.txt} to
 * {@code --out}. Exit 0 when nothing was lost, 2 otherwise.
 */
public final class Outage extends LoadRun {
    private static final String SITE = "outage-day";
    private static final String CAMERA = "door";
    private static final String TOKEN = "outage-day-token";

    private int outageSeconds;
    private int beforeSeconds;
    private int afterSeconds;
    private int fps;
    private double sampleSeconds;
    private String name;
    private List<byte[]> frames;

    private Outage() {
        super("outage", "outage-logs");
    }

    public static void main(String[] args) throws Exception {
        new Outage().run(args);
    }

    @Override
    protected void options(Map<String, String> d) {
        d.put("--outage-seconds", "600");
        d.put("--before-seconds", "30");
        d.put("--after-seconds", "30");
        d.put("--fps", "25");
        d.put("--hold-frames", "12");
        d.put("--sample-seconds", "2");
        d.put("--agent-heap", "512m");
        d.put("--name", "");
        // Niceness for the agent alone (renice): a busy machine can starve a niced broker's restart past the
        // launcher's minute.
        d.put("--agent-nice", "0");
    }

    @Override
    protected void prepare() throws IOException {
        outageSeconds = Integer.parseInt(opt.get("--outage-seconds"));
        beforeSeconds = Integer.parseInt(opt.get("--before-seconds"));
        afterSeconds = Integer.parseInt(opt.get("--after-seconds"));
        fps = Integer.parseInt(opt.get("--fps"));
        int hold = Integer.parseInt(opt.get("--hold-frames"));
        sampleSeconds = Double.parseDouble(opt.get("--sample-seconds"));
        name = opt.get("--name").isBlank() ? outageSeconds + "s" : opt.get("--name");
        Path datasets = FaceDatasets.root().orElseThrow(() -> new IllegalStateException(
                "lfw-public not found: set FACE_DATASETS to the shared datasets folder"));
        frames = frames(datasets.resolve("lfw-public"), hold, 0);
        t0 = System.nanoTime(); // the run's clock starts once the frames are drawn
        System.out.printf("outage: %d frames (%d people x %d frames) at %d frames/s; %d s up, %d s broker down, %d s after%n",
                frames.size(), frames.size() / hold, hold, fps, beforeSeconds, outageSeconds, afterSeconds);
    }

    @Override
    protected List<String> sites() {
        return List.of(SITE);
    }

    @Override
    protected LoadStack startStack() throws Exception {
        for (int tries = 1; ; tries++) {
            try {
                return LoadStack.start(root, sites());
            } catch (IllegalStateException e) {
                if (tries == 3) {
                    throw e;
                }
                System.out.println("outage: broker start " + tries + " failed (" + e.getMessage() + "); again");
            }
        }
    }

    @Override
    protected boolean measure() throws Exception {
        String topic = Topics.query(SITE);
        Follower follower = stack.own(new Follower(stack.bootstrap(), List.of(topic),
                Duration.ofSeconds(beforeSeconds + outageSeconds + afterSeconds + 1800L)));
        Cameras.Camera camera = stack.own(Cameras.live(frames, fps, Duration.ofHours(4)));
        int port = KafkaServerProcess.freePort();
        Path data = stack.work.resolve("agent-data");
        Path ledger = stack.work.resolve("ledger.csv");
        // The shipped defaults (application.yml) but for where this gateway is and what it reads.
        ManagedProcess agent = stack.own(ManagedProcess.java("agent", DemoProcesses.classpath(root, "agent"),
                "org.privface.agent.Application", List.of("-Xmx" + opt.get("--agent-heap"),
                        "-Dmicronaut.server.port=" + port,
                        "-Dagent.site-id=" + SITE,
                        "-Dagent.gateway-id=outage-day",
                        "-Dagent.cameras." + CAMERA + ".url=" + camera.url(),
                        "-Dagent.data-dir=" + data,
                        "-Dagent.ledger=" + ledger,
                        "-Dagent.control.token=" + TOKEN),
                List.of(), Map.of("KAFKA_BOOTSTRAP_SERVERS", stack.bootstrap(), "OMP_WAIT_POLICY", "PASSIVE"),
                stack.work));
        int agentNice = Integer.parseInt(opt.get("--agent-nice"));
        if (agentNice > 0) {
            new ProcessBuilder("renice", "-n", Integer.toString(agentNice), "-p", Long.toString(agent.pid()))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
        }
        DemoProcesses.awaitHealthy(agent, port);
        long firstAckDeadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
        // NaN until the pipeline has started (its meters register then): not yet.
        while (!(Prometheus.scrape(port).sum("privface_agent_uplink_acknowledged_total") >= 1)) {
            if (System.nanoTime() > firstAckDeadline || !agent.alive()) {
                throw new IllegalStateException("no acknowledged record within 180 s; see " + agent.log());
            }
            Thread.sleep(500);
        }
        System.out.printf("outage: agent up and acknowledged (%.0f s)%n", seconds(t0));

        SampleTable table = new SampleTable(out.resolve("outage-" + name + ".csv"));
        Sampler s = new Sampler(table, port, agent, camera, follower, data.resolve("spool"), sampleSeconds);
        // 1. Broker up.
        s.run("before", beforeSeconds, 0, null);
        double depthBefore = s.maxOf("spool_depth", 0);
        double releasesAtStop = s.last.get("releases");
        double bytesAtStop = s.last.get("spool_bytes");
        double depthAtStop = s.last.get("spool_depth");
        // 2. Broker stopped (SIGTERM: it shuts down; the agent's producer gets refused connections).
        long stopAt = System.nanoTime();
        stack.kafka.stop();
        double stopTook = seconds(stopAt);
        String[] statusMidOutage = new String[1];
        s.run("outage", outageSeconds, 1, () -> {
            if (statusMidOutage[0] == null && seconds(stopAt) > outageSeconds / 2.0) {
                statusMidOutage[0] = status(port);
            }
        });
        double releasesAtRestart = s.last.get("releases");
        double peakBytes = s.maxOf("spool_bytes", 1);
        double peakDepth = s.maxOf("spool_depth", 1);
        double peakDirBytes = s.maxOf("spool_dir_bytes", 1);
        double ackedAtRestart = s.last.get("acked");
        // 3. Broker restarted on the same ports and data.
        long restartAt = System.nanoTime();
        int restarts = restart(stack.kafka);
        double restartTook = seconds(restartAt);
        double[] firstAck = {Double.NaN};
        double[] caughtUp = {Double.NaN};
        double catchUpLimit = 600;
        s.run("catch-up", catchUpLimit, 2, () -> {
            if (Double.isNaN(firstAck[0]) && s.last.get("acked") > ackedAtRestart) {
                firstAck[0] = seconds(restartAt);
            }
            if (Double.isNaN(caughtUp[0]) && s.last.get("spool_depth") <= Math.max(depthBefore, 2)) {
                caughtUp[0] = seconds(restartAt);
            }
        }, () -> !Double.isNaN(caughtUp[0]));
        s.run("after", afterSeconds, 3, null);
        // 4. The camera goes away; what was released must all be sent.
        camera.close();
        long drainAt = System.nanoTime();
        double prevReleases = -1;
        while (seconds(drainAt) < 180) {
            s.sample("drain", 4);
            if (s.last.get("spool_depth") == 0 && s.last.get("releases") == prevReleases) {
                break;
            }
            prevReleases = s.last.get("releases");
            Thread.sleep(2000);
        }
        String statusEnd = status(port);
        Map<String, Double> end = s.last;
        double agentCpu = ProcessProbe.cpuSeconds(agent.pid());
        agent.close(); // SIGTERM: the agent flushes its release ledger as it stops
        // A frame still in progress at the stop can release into the spool after the uplink stopped sending:
        // kept on disk for the next start, not lost. Counted apart.
        Set<String> leftInSpool = new HashSet<>();
        try (DiskSpool left = DiskSpool.open(data.resolve("spool"), 256L << 20, DropPolicy.DROP_OLDEST)) {
            left.peek(1_000_000).forEach(e -> leftInSpool.add(e.entry().eventId()));
        }
        List<String> made = new ArrayList<>();
        for (String line : Files.readAllLines(ledger)) {
            if (!line.isBlank()) {
                made.add(line.substring(0, line.indexOf(',')));
            }
        }
        Set<String> released = new LinkedHashSet<>(made);
        long readDeadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (!follower.queries.containsAll(released) && System.nanoTime() < readDeadline) {
            Thread.sleep(500);
        }
        Set<String> lost = new LinkedHashSet<>(released);
        lost.removeAll(follower.queries);
        lost.removeAll(leftInSpool);
        Set<String> unknown = new HashSet<>(follower.queries);
        unknown.removeAll(released);
        long copies = follower.queryCopies.get();
        long duplicates = copies - follower.queries.size();

        double seconds = end.get("t_s");
        double releasedWhileDown = releasesAtRestart - releasesAtStop;
        // What each record spooled while the broker was down added to the spool's files (frame and header included).
        double bytesPerRecord = (s.lastOf("spool_bytes", 1) - bytesAtStop) / Math.max(1, s.lastOf("spool_depth", 1) - depthAtStop);
        double releasesPerSecond = end.get("releases") / seconds;
        double framesDue = (double) fps * seconds;
        List<String> report = new ArrayList<>();
        report.add(String.format(Locale.ROOT, "outage   broker stopped %d s (SIGTERM, stop took %.1f s) at %d frames/s,"
                + " shipped defaults (%s); agent niced %d; %.1f min in all", outageSeconds, stopTook, fps, faceStack(agent.log()),
                agentNice, seconds(t0) / 60));
        report.add(String.format(Locale.ROOT, "records  released %d (%d while the broker was down), acknowledged %.0f, on the topic %d"
                        + " distinct in %d copies (%d duplicates, same event id), left in the spool at the stop %d, lost %d,"
                        + " unknown %d, dropped by the spool %.0f", released.size(), Math.round(releasedWhileDown),
                end.get("acked"), follower.queries.size(), copies, duplicates, leftInSpool.size(), lost.size(), unknown.size(),
                end.get("spool_dropped")));
        report.add(String.format(Locale.ROOT, "spool    peak %d records, %.2f MiB (gauge), %.2f MiB of segment files on disk;"
                        + " %.0f bytes per record spooled; at %.2f releases/s that is %.1f MiB per hour of outage"
                        + " (the 256 MiB default spool holds %.1f h)", Math.round(peakDepth), peakBytes / MIB,
                peakDirBytes / MIB, bytesPerRecord, releasesPerSecond, bytesPerRecord * releasesPerSecond * 3600 / MIB,
                256 * MIB / Math.max(1e-9, bytesPerRecord * releasesPerSecond * 3600)));
        report.add(String.format(Locale.ROOT, "catch-up broker restart took %.1f s (%d start(s)); first acknowledgement %.1f s and"
                + " backlog sent (spool back to %.0f records) %.1f s after the restart", restartTook, restarts, firstAck[0],
                Math.max(depthBefore, 2), caughtUp[0]));
        report.add(String.format(Locale.ROOT, "frames   due %.0f, sent by the camera %.0f, skipped by the camera because the agent"
                        + " had not read the earlier ones %.0f (%.1f%%), processed by the agent %.0f (%.1f frames/s);"
                        + " agent CPU %.0f s (%.1f ms per frame)", framesDue, end.get("camera_sent"), end.get("camera_skipped"),
                100 * end.get("camera_skipped") / framesDue, end.get("frames"), end.get("frames") / seconds, agentCpu,
                1000 * agentCpu / Math.max(1, end.get("frames"))));
        report.add("status mid-outage: " + statusMidOutage[0]);
        report.add("status at the end: " + statusEnd);
        boolean ok = lost.isEmpty() && unknown.isEmpty() && end.get("spool_dropped") == 0 && released.size() > 0
                && released.size() == made.size();
        double[] tMin = java.util.Arrays.stream(table.column("t_s")).map(x -> x / 60).toArray();
        Map<String, double[]> spool = new LinkedHashMap<>();
        spool.put("spool (MiB)", java.util.Arrays.stream(table.column("spool_bytes")).map(x -> x / MIB).toArray());
        spool.put("spool depth (thousand records)", java.util.Arrays.stream(table.column("spool_depth")).map(x -> x / 1000).toArray());
        spool.put("records on the topic (thousands)", java.util.Arrays.stream(table.column("topic_distinct")).map(x -> x / 1000).toArray());
        chart("outage-" + name + "-spool.png", String.format(Locale.ROOT,
                "Broker down %d s at %d frames/s (deep default): spool and topic", outageSeconds, fps), "minutes", "", false,
                tMin, spool);
        report(ok, report, "outage-" + name + "-summary.txt");
        if (!lost.isEmpty()) {
            System.out.println("lost, e.g. " + lost.stream().limit(5).toList());
        }
        return ok;
    }

    /**
     * Starts the broker again; on a machine this busy its start can pass the launcher's minute, so up
     * to three tries. Returns the tries it took.
     */
    private static int restart(KafkaServerProcess kafka) throws Exception {
        for (int tries = 1; ; tries++) {
            try {
                kafka.restart();
                return tries;
            } catch (IllegalStateException e) {
                if (tries == 3) {
                    throw e;
                }
                System.out.println("outage: broker start " + tries + " failed (" + e.getMessage() + "); again");
            }
        }
    }

    /** The detector and embedding the agent logged at start (YuNet falls back to UltraFace), for the report. */
    private static String faceStack(Path log) throws IOException {
        List<String> said = new ArrayList<>();
        for (String line : Files.readAllLines(log)) {
            for (String what : new String[] {"face detector: ", "face embedding: "}) {
                int at = line.indexOf(what);
                if (at >= 0) {
                    said.add(line.substring(at).trim());
                }
            }
        }
        return said.isEmpty() ? "see " + log.getFileName() : String.join("; ", said);
    }

    /** The agent's authenticated REST status, as JSON text. */
    private static String status(int port) {
        try {
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/control/status"))
                    .header("Authorization", "Bearer " + TOKEN).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.body().replaceAll("\\s+", " ");
        } catch (IOException e) {
            return "unavailable: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /**
     * A live camera's frames: one person after another (the first {@code people} folders, sorted; 0:
     * all), each one's first photo held for {@code hold} frames in the next of four places.
     */
    public static List<byte[]> frames(Path folder, int hold, int people) throws IOException {
        List<Path> photos = new ArrayList<>();
        try (Stream<Path> s = Files.list(folder)) {
            for (Path person : s.filter(Files::isDirectory).sorted().limit(people > 0 ? people : Long.MAX_VALUE).toList()) {
                try (Stream<Path> p = Files.list(person)) {
                    p.filter(f -> f.toString().endsWith(".jpg")).sorted().findFirst().ifPresent(photos::add);
                }
            }
        }
        if (photos.isEmpty()) {
            throw new IOException("no photos under " + folder);
        }
        int[][] places = {{40, 20}, {400, 20}, {400, 260}, {40, 260}};
        List<byte[]> out = new ArrayList<>(photos.size() * hold);
        for (int i = 0; i < photos.size(); i++) {
            BufferedImage photo = ImageIO.read(photos.get(i).toFile());
            if (photo == null) {
                throw new IOException("cannot decode " + photos.get(i));
            }
            BufferedImage f = new BufferedImage(640, 480, BufferedImage.TYPE_3BYTE_BGR);
            Graphics2D g = f.createGraphics();
            g.setColor(new Color(128, 128, 128));
            g.fillRect(0, 0, 640, 480);
            g.setRenderingHint(RenderingHints.KEY_INTERPOLATION, RenderingHints.VALUE_INTERPOLATION_BILINEAR);
            int[] at = places[i % places.length];
            g.drawImage(photo, at[0], at[1], 200, 200, null);
            g.dispose();
            byte[] jpeg = Cameras.jpeg(f);
            for (int k = 0; k < hold; k++) {
                out.add(jpeg);
            }
        }
        return out;
    }

    /** Samples the agent, the camera, the topic and the spool's folder into the table. */
    private static final class Sampler {
        private final SampleTable table;
        private final int port;
        private final ManagedProcess agent;
        private final Cameras.Camera camera;
        private final Follower follower;
        private final Path spoolDir;
        private final double period;
        private final long start = System.nanoTime();
        Map<String, Double> last = Map.of();

        Sampler(SampleTable table, int port, ManagedProcess agent, Cameras.Camera camera, Follower follower, Path spoolDir,
                double period) {
            this.table = table;
            this.port = port;
            this.agent = agent;
            this.camera = camera;
            this.follower = follower;
            this.spoolDir = spoolDir;
            this.period = period;
        }

        void run(String phase, double seconds, int code, Runnable each) throws Exception {
            run(phase, seconds, code, each, () -> false);
        }

        /** Samples every period for {@code seconds}, or until {@code done}; prints a line every 30 s. */
        void run(String phase, double seconds, int code, Runnable each, java.util.function.BooleanSupplier done)
                throws Exception {
            long phaseStart = System.nanoTime();
            long next = phaseStart;
            double lastPrint = -30;
            while (seconds(phaseStart) < seconds) {
                next += (long) (period * 1e9);
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000);
                }
                sample(phase, code);
                if (each != null) {
                    each.run();
                }
                if (seconds(phaseStart) - lastPrint >= 30) {
                    lastPrint = seconds(phaseStart);
                    System.out.printf(Locale.ROOT, "outage: %-8s %4.0f s  frames %.0f  releases %.0f  acked %.0f  spool %.0f records"
                                    + " %.2f MiB  skipped %.0f%n", phase, lastPrint, last.get("frames"), last.get("releases"),
                            last.get("acked"), last.get("spool_depth"), last.get("spool_bytes") / MIB, last.get("camera_skipped"));
                }
                if (done.getAsBoolean()) {
                    return;
                }
            }
        }

        void sample(String phase, int code) throws IOException {
            if (!agent.alive()) {
                throw new IllegalStateException("the agent exited; see " + agent.log());
            }
            Prometheus p = Prometheus.scrape(port);
            if (p.empty()) {
                throw new IllegalStateException("the agent's /prometheus did not answer; see " + agent.log());
            }
            LinkedHashMap<String, Double> row = new LinkedHashMap<>();
            row.put("t_s", seconds(start));
            row.put("phase", (double) code);
            row.put("frames", counted(p, "privface_agent_frames_total"));
            row.put("releases", counted(p, "privface_agent_releases_total"));
            row.put("acked", counted(p, "privface_agent_uplink_acknowledged_total"));
            row.put("spool_depth", counted(p, "privface_agent_spool_depth"));
            row.put("spool_bytes", counted(p, "privface_agent_spool_bytes"));
            row.put("spool_dropped", counted(p, "privface_agent_spool_dropped"));
            row.put("spool_dir_bytes", (double) folderBytes(spoolDir));
            row.put("camera_sent", (double) camera.partsSent());
            row.put("camera_skipped", (double) camera.partsSkipped());
            row.put("topic_distinct", (double) follower.queries.size());
            row.put("agent_rss_mib", ProcessProbe.rssBytes(agent.pid()) / MIB);
            table.add(row);
            last = row;
        }

        /** A meter's value; 0 while it is not registered yet (a camera's meters appear with its first frame). */
        private static double counted(Prometheus p, String name) {
            double v = p.sum(name);
            return Double.isNaN(v) ? 0 : v;
        }

        /** The column's value in the last row of phase code {@code code}. */
        double lastOf(String column, int code) {
            double[] v = table.column(column);
            double[] ph = table.column("phase");
            for (int i = v.length - 1; i >= 0; i--) {
                if (ph[i] == code) {
                    return v[i];
                }
            }
            return Double.NaN;
        }

        /** The largest value of a column over the rows of phase code {@code code} and before. */
        double maxOf(String column, int code) {
            double[] v = table.column(column);
            double[] ph = table.column("phase");
            double m = 0;
            for (int i = 0; i < v.length; i++) {
                if (ph[i] <= code && Double.isFinite(v[i])) {
                    m = Math.max(m, v[i]);
                }
            }
            return m;
        }

        private static long folderBytes(Path dir) throws IOException {
            if (!Files.isDirectory(dir)) {
                return 0;
            }
            try (Stream<Path> s = Files.walk(dir)) {
                return s.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
            }
        }
    }
}
