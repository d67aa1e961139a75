package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import javax.imageio.ImageIO;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.privface.agent.AgentPipeline;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.detect.FaceModels;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.security.PrincipalSpec;
import org.privface.wire.security.Security;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * Issue 33's audit, on a real broker process and real faces (lfw139): two cameras of one gateway
 * show person P three times (twice on one camera, once on the other: a return and a second camera)
 * and then a stranger S. The same scene runs twice on one site: once with a link threshold every
 * pair of faces passes, so the gateway links P's three appearances (true links) and S to P (a false
 * link), and once with a threshold no two different photos reach, so it links nothing. The policy,
 * max-k with k = 4 and far-apart releases, gives each appearance one release and the linked person
 * room for all four, so both runs release at the same positions.
 *
 * <p>Every record on every topic a vendor may read (computed from security.yml with a vendor
 * declared for the site) is read back and traced to its scene position through the origin ledger.
 * {@link LinkAudit} then asserts that no field but the vector and the capture time differs between
 * the runs at any position, or groups different records: whatever the gateway decided about who is
 * whom, the records say the same. Revision 3's track.person fails this ({@link LinkAuditTest}).
 */
@Timeout(value = 420, unit = TimeUnit.SECONDS)
class LinkingAuditTest extends BrokerProcessTest {

    private static final String SITE = "link-audit";
    private static final String TOKEN = "link-audit-token";
    private static final double EPSILON = 2;
    private static final String POLICY = "max-k:k=4,every=1000";
    private static final int FACE_FRAMES = 10;
    /** More than the tracker's 15 missed frames: every showing is a new track. */
    private static final int BLANK_FRAMES = 22;
    private static final int SLOT = FACE_FRAMES + BLANK_FRAMES;
    private static final int SLOTS = 4;
    /** Blank frames after the scene, so the feeds are closed long before they loop. */
    private static final int TAIL = 300;
    private static final int FPS = 10;
    /** Every pair of faces links: P's appearances, and the stranger to P. */
    private static final double LINK_ALL = -0.99;
    /** No two different photos link. */
    private static final double LINK_NONE = 0.9999;

    /** Who each camera shows in each slot: P, photo; or null. P = 0, S = 1. */
    private static final int[][][] SCENE = {
            {{0, 0}, null, {0, 2}, null},
            {null, {0, 1}, null, {1, 0}}};

    private Path lfw139;

    @Override
    protected String name() {
        return "link-audit";
    }

    @Override
    protected void assumeReady() {
        lfw139 = FaceDatasets.root().map(r -> r.resolve("lfw139")).filter(Files::isDirectory).orElse(null);
        assumeTrue(lfw139 != null, "lfw139 not found: set FACE_DATASETS to the shared datasets folder");
        String network = new org.privface.agent.AgentSettings.Embedder().getNetwork();
        assumeTrue(org.privface.agent.embed.FaceEmbedders.missing(network).isEmpty(),
                org.privface.agent.embed.FaceEmbedders.missing(network).orElse(""));
        assumeTrue(FaceModels.findYunet(null).isPresent(), "YuNet not found under FACE_MODELS: linking needs its landmarks");
    }

    @Test
    void noFieldAVendorReadsCarriesTheGatewaysLinks() throws Exception {
        boolean ok = false;
        try {
            List<String> vendorTopics = vendorReadableTopics();
            assertEquals(Set.of(Topics.enrollment(SITE), Topics.query(SITE)), Set.copyOf(vendorTopics),
                    "a vendor reads the face topics only (the status topic is the operator's and the recognizer's)");
            applyTopics();
            List<List<Path>> people = people();
            List<Path> feeds = new ArrayList<>();
            for (int c = 0; c < SCENE.length; c++) {
                feeds.add(scene(work.resolve("cam" + c), people, c));
            }
            Map<String, Object> linked = run("linked", feeds, LINK_ALL);
            Map<String, Object> unlinked = run("unlinked", feeds, LINK_NONE);
            assertEquals(3L, ((Number) linked.get("linkedAppearances")).longValue(),
                    "P's two returns and the stranger were linked: " + linked);
            assertEquals(0L, ((Number) unlinked.get("linkedAppearances")).longValue(), "nothing was linked: " + unlinked);

            Map<String, String> originsLinked = origins(work.resolve("linked-origins.csv"));
            Map<String, String> originsUnlinked = origins(work.resolve("unlinked-origins.csv"));
            Map<String, PerturbedFace> a = new HashMap<>();
            Map<String, PerturbedFace> b = new HashMap<>();
            int records = 0;
            for (ConsumerRecord<String, byte[]> r : FaultKit.readAll(bootstrap, vendorTopics, Duration.ofSeconds(30))) {
                PerturbedFace f = FaceRecords.decodeFromTopic(r.topic(), r.value());
                records++;
                String inA = originsLinked.get(f.getEventId());
                String inB = originsUnlinked.get(f.getEventId());
                assertTrue(inA != null ^ inB != null, "every record traces to one run: " + f.getEventId());
                (inA != null ? a : b).put(position(f.getCameraId(), inA != null ? inA : inB), f);
                assertEquals(Boolean.TRUE, f.getTrack().getLinking());
                assertEquals(EPSILON, f.getTrack().getPersonEpsilonBudget(), 1e-12);
            }
            Set<String> expected = new TreeSet<>();
            for (int c = 0; c < SCENE.length; c++) {
                for (int s = 0; s < SLOTS; s++) {
                    if (SCENE[c][s] != null) {
                        expected.add(String.format("cam%d@slot%d", c, s));
                    }
                }
            }
            System.out.printf("LINK-AUDIT %d records on %s; positions with links %s, without %s%n", records,
                    vendorTopics, new TreeSet<>(a.keySet()), new TreeSet<>(b.keySet()));
            assertEquals(expected, new TreeSet<>(a.keySet()), "with links, every appearance released once");
            assertEquals(expected, new TreeSet<>(b.keySet()), "without links, every appearance released once");
            List<String> problems = LinkAudit.compare(a, b);
            System.out.println("LINK-AUDIT fields audited: " + LinkAudit.leaves(a.values().iterator().next()).keySet());
            assertTrue(problems.isEmpty(), "fields that carry the gateway's links:\n" + String.join("\n", problems));
            ok = true;
        } finally {
            passed &= ok;
        }
    }

    /** The topics security.yml lets a vendor of this site read. */
    private List<String> vendorReadableTopics() throws Exception {
        String yml = Files.readString(root.resolve("broker-config/security.yml"))
                .replaceFirst("(?m)^vendors: \\[\\]", "vendors:\n  - {name: audit-vendor, sites: [" + SITE + "]}");
        List<PrincipalSpec> all = Security.parse(new ByteArrayInputStream(yml.getBytes(StandardCharsets.UTF_8)), List.of(SITE));
        PrincipalSpec vendor = all.stream().filter(p -> p.name().equals("audit-vendor")).findFirst().orElseThrow();
        return vendor.acls().stream()
                .filter(b -> b.pattern().resourceType() == ResourceType.TOPIC && b.entry().operation() == AclOperation.READ)
                .peek(b -> assertEquals(PatternType.LITERAL, b.pattern().patternType()))
                .map(b -> b.pattern().name()).distinct().collect(Collectors.toList());
    }

    /** P: the first lfw139 person with three photos; S: the next person. */
    private List<List<Path>> people() throws Exception {
        List<List<Path>> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(lfw139)) {
            for (Path dir : s.filter(Files::isDirectory).sorted().toList()) {
                List<Path> photos;
                try (Stream<Path> p = Files.list(dir)) {
                    photos = p.filter(x -> x.toString().endsWith(".jpg")).sorted().toList();
                }
                if (photos.size() >= (out.isEmpty() ? 3 : 1)) {
                    out.add(photos);
                }
                if (out.size() == 2) {
                    return out;
                }
            }
        }
        throw new IllegalStateException("lfw139 lacks a person with three photos and a second person");
    }

    private static Path scene(Path dir, List<List<Path>> people, int camera) throws Exception {
        Files.createDirectories(dir);
        BufferedImage blank = frame(null);
        int n = 0;
        for (int slot = 0; slot < SLOTS; slot++) {
            int[] who = SCENE[camera][slot];
            BufferedImage face = who == null ? blank : frame(ImageIO.read(people.get(who[0]).get(who[1]).toFile()));
            for (int i = 0; i < SLOT; i++) {
                ImageIO.write(i < FACE_FRAMES ? face : blank, "png", dir.resolve(String.format("f%04d.png", n++)).toFile());
            }
        }
        for (int i = 0; i < TAIL; i++) {
            ImageIO.write(blank, "png", dir.resolve(String.format("f%04d.png", n++)).toFile());
        }
        return dir;
    }

    /** A 480×360 grey frame, with the 150×150 photo enlarged to 225×225 in its middle. */
    private static BufferedImage frame(BufferedImage photo) {
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

    /** The scene slot of a record: its camera and the slot its frame index falls in. */
    private static String position(String camera, String origin) {
        long frame = Long.parseLong(origin.substring(origin.lastIndexOf('#') + 1));
        assertTrue(frame % SLOT < FACE_FRAMES && frame < (long) SLOTS * SLOT, "a record from a face frame of the scene");
        return camera + "@slot" + frame / SLOT;
    }

    private static Map<String, String> origins(Path ledger) throws Exception {
        Map<String, String> out = new HashMap<>();
        for (String line : Files.readAllLines(ledger)) {
            int comma = line.indexOf(',');
            if (comma > 0) {
                out.put(line.substring(0, comma), line.substring(comma + 1));
            }
        }
        return out;
    }

    /** Runs the gateway over the scene once; returns its exact linking counters (REST, local). */
    private Map<String, Object> run(String name, List<Path> folders, double threshold) throws Exception {
        Path data = Files.createDirectories(work.resolve(name + "-data"));
        List<MjpegFeed> feeds = new ArrayList<>();
        ApplicationContext ctx = null;
        try {
            Map<String, Object> props = new HashMap<>();
            props.put("kafka.bootstrap.servers", bootstrap);
            props.put("micronaut.server.port", -1);
            props.put("micronaut.server.host", "127.0.0.1");
            props.put("agent.site-id", SITE);
            props.put("agent.gateway-id", name + "-gw");
            props.put("agent.publish-enrollments", false);
            props.put("agent.data-dir", data.toString());
            props.put("agent.ledger", work.resolve(name + "-origins.csv").toString());
            props.put("agent.detector", "yunet");
            props.put("agent.mechanism", "embedding");
            props.put("agent.sensitivity-mode", "sign-cap");
            props.put("agent.epsilon", EPSILON);
            props.put("agent.budget", POLICY);
            props.put("agent.control.token", TOKEN);
            props.put("agent.link.enabled", true);
            props.put("agent.link.threshold", threshold);
            for (int c = 0; c < folders.size(); c++) {
                MjpegFeed f = new MjpegFeed(folders.get(c), FPS);
                feeds.add(f);
                props.put("agent.cameras.cam" + c + ".url", f.url());
            }
            ctx = ApplicationContext.builder()
                    .classLoader(new BrokerOutageTest.HidingClassLoader(getClass().getClassLoader(),
                            org.privface.recognizer.Application.class))
                    .properties(BrokerOutageTest.HidingClassLoader.agentAlone(props))
                    .start();
            ctx.getBean(EmbeddedServer.class).start();
            AgentPipeline pipeline = ctx.getBean(AgentPipeline.class);
            String base = "http://127.0.0.1:" + ctx.getBean(EmbeddedServer.class).getPort();
            long frames = (long) SLOTS * SLOT + 5;
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
            Object exact = FaultKit.at(FaultKit.json(base + "/control/status", TOKEN), "local.linking");
            @SuppressWarnings("unchecked")
            Map<String, Object> l = new LinkedHashMap<>((Map<String, Object>) exact);
            return l;
        } finally {
            feeds.forEach(MjpegFeed::close);
            if (ctx != null) {
                ctx.close();
            }
        }
    }

    private void applyTopics() throws Exception {
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
        }
    }
}
