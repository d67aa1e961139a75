package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import javax.imageio.ImageIO;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.privface.agent.AgentPipeline;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.link.GatewayLinking;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * Issue 18's scene, against a real broker process: three MJPEG cameras of one gateway show the same
 * real people (lfw139, a different photo of each person on each camera), one at a time, each
 * leaving and coming back as the feeds loop. Run twice on the same scene: with the per-track
 * accounting of before (linking off) and with the budget per person. Every record is traced to the
 * real person in its frame through the origin ledger (camera and frame index).
 *
 * <p>Asserted: under the per-person budget no person's total ε exceeds the policy's ε by more than
 * the misses the calibrated miss rate predicts for its appearances; the per-track accounting of the
 * same scene is reported beside it (and spends several times ε per person).
 */
@Timeout(value = 420, unit = TimeUnit.SECONDS)
class PersonBudgetSceneTest extends BrokerProcessTest {

    private static final String TOKEN = "scene-test-token";
    private static final double EPSILON = 2;
    private static final int PEOPLE = 4;
    private static final int CAMERAS = 3;
    /** Frames a face is shown, then frames without one: more than the tracker's 15 missed frames, so each showing is a new track. */
    private static final int FACE_FRAMES = 10;
    private static final int BLANK_FRAMES = 22;
    private static final int SLOT = FACE_FRAMES + BLANK_FRAMES;
    private static final int FPS = 10;
    /** Loops of each feed the agent must read: every person appears on every camera this many times. */
    private static final int LOOPS = 2;
    /** The agent's default embedding network, and the link threshold calibrated for it. */
    private static final String NETWORK = new org.privface.agent.AgentSettings.Embedder().getNetwork();
    private static final double THRESHOLD = org.privface.agent.embed.FaceEmbedders.linkThreshold(NETWORK);

    @Override
    protected String name() {
        return "person-scene";
    }

    /** Which person each camera shows in each slot. */
    static int personAt(int camera, int slot) {
        return (slot + camera) % PEOPLE;
    }

    record RunResult(Map<Integer, Double> epsilonByPerson, Map<Integer, Integer> recordsByPerson, int records,
                     int untraced, Map<String, Object> linking) {
    }

    private Path lfw139;

    @Override
    protected void assumeReady() {
        lfw139 = assumeLinkingStack();
    }

    /** lfw139, after assuming it, the default embedding network and YuNet (linking needs its landmarks) are there. */
    static Path assumeLinkingStack() {
        Path lfw = FaceDatasets.root().map(r -> r.resolve("lfw139")).filter(Files::isDirectory).orElse(null);
        assumeTrue(lfw != null, "lfw139 not found: set FACE_DATASETS to the shared datasets folder");
        assumeTrue(org.privface.agent.embed.FaceEmbedders.missing(NETWORK).isEmpty(),
                org.privface.agent.embed.FaceEmbedders.missing(NETWORK).orElse(""));
        assumeTrue(FaceModels.findYunet(null).isPresent(), "YuNet not found under FACE_MODELS: linking needs its landmarks");
        return lfw;
    }

    @Test
    void perPersonBudgetBoundsEachPersonAcrossCamerasAndReturns() throws Exception {
        boolean ok = false;
        try {
            List<Path> people;
            try (Stream<Path> s = Files.list(lfw139)) {
                people = s.filter(Files::isDirectory).sorted().limit(PEOPLE).toList();
            }
            List<Path> feeds = new ArrayList<>();
            for (int c = 0; c < CAMERAS; c++) {
                feeds.add(scene(work.resolve("scene-cam" + c), people, c));
            }
            double missRate = calibratedMissRate();
            RunResult track = run("scene-track", feeds, false);
            RunResult person = run("scene-person", feeds, true);

            int appearances = LOOPS * CAMERAS; // showings of each person the agent read at least
            int allowedMisses = (int) Math.ceil(appearances * missRate);
            double allowed = EPSILON * (1 + allowedMisses);
            System.out.printf(Locale.ROOT, "SCENE %d people × %d cameras × ≥%d loops, ε %.1f per window, policy once;"
                            + " calibrated miss rate %.4f at threshold %.2f → at most %d miss(es) per person predicted%n",
                    PEOPLE, CAMERAS, LOOPS, EPSILON, missRate, THRESHOLD, allowedMisses);
            System.out.printf(Locale.ROOT, "SCENE per-track accounting (before): ε per person %s (max %.1f), %d records, %d untraced%n",
                    track.epsilonByPerson(), max(track), track.records(), track.untraced());
            System.out.printf(Locale.ROOT, "SCENE per-person budget: ε per person %s (max %.1f), %d records, %d untraced; linking %s%n",
                    person.epsilonByPerson(), max(person), person.records(), person.untraced(), person.linking());

            assertEquals(0, track.untraced() + person.untraced(), "every record traces to a face segment of the scene");
            assertEquals(PEOPLE, track.epsilonByPerson().size(), "per track, every person was released");
            assertTrue(max(track) >= 3 * EPSILON, "the scene makes per-track accounting over-spend: " + track.epsilonByPerson());
            for (var e : person.epsilonByPerson().entrySet()) {
                assertTrue(e.getValue() <= allowed + 1e-9, "person " + e.getKey() + " spent " + e.getValue()
                        + ", more than ε " + EPSILON + " plus the " + allowedMisses + " miss(es) predicted");
            }
            assertTrue(max(person) < max(track), "the per-person budget spends less on the most exposed person");
            assertTrue(((Number) person.linking().get("linkedAppearances")).longValue() > 0, "appearances were linked");
            assertTrue(((Number) person.linking().get("maxPersonEpsilon")).doubleValue() <= EPSILON + 1e-9);
            assertEquals("track", String.valueOf(track.linking().get("budgetScope")));
            ok = true;
        } finally {
            passed &= ok;
        }
    }

    private static double max(RunResult r) {
        return r.epsilonByPerson().values().stream().mapToDouble(Double::doubleValue).max().orElse(0);
    }

    /** The miss rate at the default threshold from docs/results/link-calibration-" + NETWORK + ".csv; 1 % where it is absent. */
    private double calibratedMissRate() throws Exception {
        Path csv = root.resolve("docs/results/link-calibration-" + NETWORK + ".csv");
        if (!Files.exists(csv)) {
            return 0.01;
        }
        for (String l : Files.readAllLines(csv)) {
            String[] f = l.split(",");
            if (f.length > 1 && f[0].matches("-?[0-9.]+")
                    && Math.abs(Double.parseDouble(f[0]) - THRESHOLD) < 1e-9) {
                return Double.parseDouble(f[1]);
            }
        }
        return 0.01;
    }

    /** One camera's loop: for each slot a photo of the slot's person (the camera's own photo of them), then no one. */
    private static Path scene(Path dir, List<Path> people, int camera) throws Exception {
        Files.createDirectories(dir);
        BufferedImage blank = frame(null);
        int n = 0;
        for (int slot = 0; slot < PEOPLE; slot++) {
            Path person = people.get(personAt(camera, slot));
            List<Path> photos;
            try (Stream<Path> s = Files.list(person)) {
                photos = s.filter(p -> p.toString().endsWith(".jpg")).sorted().toList();
            }
            BufferedImage face = frame(ImageIO.read(photos.get(camera % photos.size()).toFile()));
            for (int i = 0; i < SLOT; i++) {
                ImageIO.write(i < FACE_FRAMES ? face : blank, "png", dir.resolve(String.format("f%04d.png", n++)).toFile());
            }
        }
        return dir;
    }

    /** A 480×360 grey frame, with the 150×150 photo enlarged to 225×225 in its middle. */
    static BufferedImage frame(BufferedImage photo) {
        BufferedImage f = new BufferedImage(480, 360, BufferedImage.TYPE_3BYTE_BGR);
        Graphics2D g = f.createGraphics();
        g.setColor(new Color(128, 128, 128));
        g.fillRect(0, 0, 480, 360);
        if (photo != null) {
            g.setRenderingHint(RenderingHints.KEY_INTERPOLATION, RenderingHints.VALUE_INTERPOLATION_BILINEAR);
            g.drawImage(photo, 128, 68, 225, 225, null);
        }
        g.dispose();
        return f;
    }

    /** The person in the frame a record came from: its camera's slot at the frame's index, or -1 outside a face segment. */
    static int personOf(int camera, long frameIndex) {
        int i = (int) (frameIndex % (PEOPLE * SLOT));
        int slot = i / SLOT;
        return i % SLOT < FACE_FRAMES ? personAt(camera, slot) : -1;
    }

    private RunResult run(String site, List<Path> folders, boolean link) throws Exception {
        applyTopics(site);
        Path ledger = work.resolve(site + "-origins.csv");
        Map<String, Object> props = new HashMap<>();
        props.put("agent.site-id", site);
        props.put("agent.gateway-id", site + "-gw");
        props.put("agent.data-dir", Files.createDirectories(work.resolve(site + "-data")).toString());
        props.put("agent.ledger", ledger.toString());
        props.put("agent.epsilon", EPSILON);
        props.put("agent.budget", "once");
        props.put("agent.link.enabled", link);
        Map<String, Object> status = runGateway(bootstrap, props, folders, FPS, (long) LOOPS * PEOPLE * SLOT + FACE_FRAMES);
        @SuppressWarnings("unchecked")
        Map<String, Object> linking = new LinkedHashMap<>((Map<String, Object>) status.get("linking"));
        // The exact counts and the person spend are the authenticated REST status's own (issue 33).
        if (FaultKit.at(status, "local.linking") instanceof Map<?, ?> exact) {
            exact.forEach((k, v) -> linking.put(String.valueOf(k), v));
        }
        Map<String, String> origins = origins(ledger);
        Map<Integer, Double> eps = new TreeMap<>();
        Map<Integer, Integer> count = new TreeMap<>();
        Map<String, Boolean> seen = new LinkedHashMap<>();
        int untraced = 0;
        Instant first = null;
        Instant last = null;
        for (ConsumerRecord<String, byte[]> r : FaultKit.readAll(bootstrap, List.of(Topics.query(site)), Duration.ofSeconds(30))) {
            PerturbedFace f = FaceRecords.decodeFace(r.value());
            if (seen.put(f.getEventId(), true) != null) {
                continue; // at-least-once delivery: a duplicate spends nothing more
            }
            String origin = origins.get(f.getEventId());
            int camera = Integer.parseInt(f.getCameraId().substring(3));
            int p = origin == null ? -1 : personOf(camera, Long.parseLong(origin.substring(origin.lastIndexOf('#') + 1)));
            if (p < 0) {
                untraced++;
                continue;
            }
            eps.merge(p, f.getMechanism().getEpsilonPerFace(), Double::sum);
            count.merge(p, 1, Integer::sum);
            Instant at = f.getCaptureTimestamp();
            first = first == null || at.isBefore(first) ? at : first;
            last = last == null || at.isAfter(last) ? at : last;
            if (link) {
                assertEquals(Boolean.TRUE, f.getTrack().getLinking(), "a linked gateway's record says it links");
                assertEquals(EPSILON, f.getTrack().getPersonEpsilonBudget(), 1e-12, "and states the policy's cap, no spend");
            } else {
                assertEquals(Boolean.FALSE, f.getTrack().getLinking(), "without linking the scope is the track");
                assertEquals(null, f.getTrack().getPersonEpsilonBudget());
            }
        }
        // Every record of a run lies inside one budget window, so its sums are per-window totals.
        assertTrue(first == null || Duration.between(first, last).compareTo(Duration.ofMinutes(10)) < 0);
        return new RunResult(eps, count, seen.size(), untraced, linking);
    }

    /**
     * Runs one gateway of the deep stack (YuNet, the embedding mechanism) in this JVM over MJPEG feeds
     * of {@code folders}, one camera each, until every camera read {@code frames} frames, its
     * releases settled and its spool drained; returns its authenticated REST status. {@code props}
     * give the site, gateway, data directory, origin ledger, ε, budget and linking.
     */
    static Map<String, Object> runGateway(String bootstrap, Map<String, Object> props, List<Path> folders, int fps,
                                          long frames) throws Exception {
        List<MjpegFeed> feeds = new ArrayList<>();
        ApplicationContext ctx = null;
        try {
            Map<String, Object> all = new HashMap<>(props);
            all.put("kafka.bootstrap.servers", bootstrap);
            all.put("micronaut.server.port", -1);
            all.put("micronaut.server.host", "127.0.0.1");
            all.put("agent.publish-enrollments", false);
            all.put("agent.detector", "yunet");
            all.put("agent.mechanism", "embedding");
            all.put("agent.sensitivity-mode", "sign-cap");
            all.put("agent.control.token", TOKEN);
            for (int c = 0; c < folders.size(); c++) {
                MjpegFeed f = new MjpegFeed(folders.get(c), fps);
                feeds.add(f);
                all.put("agent.cameras.cam" + c + ".url", f.url());
            }
            ctx = ApplicationContext.builder()
                    .classLoader(new BrokerOutageTest.HidingClassLoader(PersonBudgetSceneTest.class.getClassLoader(),
                            org.privface.recognizer.Application.class))
                    .properties(BrokerOutageTest.HidingClassLoader.agentAlone(all))
                    .start();
            ctx.getBean(EmbeddedServer.class).start();
            AgentPipeline pipeline = ctx.getBean(AgentPipeline.class);
            String base = "http://127.0.0.1:" + ctx.getBean(EmbeddedServer.class).getPort();
            FaultKit.awaitTrue("every camera read " + frames + " frames", Duration.ofSeconds(150), FaultKit.quietly(() -> {
                Map<String, Object> s = FaultKit.json(base + "/control/status", TOKEN);
                for (int c = 0; c < folders.size(); c++) {
                    if (FaultKit.number(s, "cameras.cam" + c + ".frames") < frames) {
                        return false;
                    }
                }
                return true;
            }));
            feeds.forEach(MjpegFeed::close);
            FaultKit.awaitStable("releases after the feeds ended", Duration.ofSeconds(20), pipeline::releases);
            assertTrue(pipeline.uplink().drain(Duration.ofSeconds(30)), "the spool drained");
            return FaultKit.json(base + "/control/status", TOKEN);
        } finally {
            feeds.forEach(MjpegFeed::close);
            if (ctx != null) {
                ctx.close();
            }
        }
    }

    /** The origin ledger's eventId → origin (camera and frame index). */
    static Map<String, String> origins(Path ledger) throws Exception {
        Map<String, String> out = new HashMap<>();
        for (String line : Files.readAllLines(ledger)) {
            int comma = line.indexOf(',');
            if (comma > 0) {
                out.put(line.substring(0, comma), line.substring(comma + 1));
            }
        }
        return out;
    }

    private void applyTopics(String site) throws Exception {
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            new TopicApplier(admin).apply(Topics.definitions(List.of(site)));
        }
    }
}
