package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import javax.imageio.ImageIO;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.security.PrincipalSpec;
import org.privface.wire.security.Security;
import org.privface.wire.topics.Topics;

/**
 * Issue 33's audit, on a real broker process and real faces (lfw139): after a warm-up, two cameras
 * of one gateway show person P three times (twice on one camera, once on the other: a return and a
 * second camera) and then a stranger S. The same scene runs twice on one site: once with a link threshold every
 * pair of faces passes, so the gateway links P's three appearances (true links) and S to P (a false
 * link), and once with a threshold no two different photos reach, so it links none of them. The
 * policy, max-k with k = 10 and far-apart releases, gives each appearance one release and the linked
 * person room for all of them, so both runs release at the same positions.
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
    private static final double EPSILON = 2;
    /** One release per appearance (they are far shorter than 1000 frames), room for ten per person. */
    private static final String POLICY = "max-k:k=10,every=1000";
    private static final int FACE_FRAMES = 10;
    /** More than the tracker's 15 missed frames: every showing is a new track. */
    private static final int BLANK_FRAMES = 22;
    private static final int SLOT = FACE_FRAMES + BLANK_FRAMES;
    private static final int SLOTS = 5;
    /** Blank frames after the scene, so the feeds are closed long before they loop. */
    private static final int TAIL = 300;
    private static final int FPS = 10;
    /** Every pair of faces links: P's appearances, and the stranger to P. */
    private static final double LINK_ALL = -0.99;
    /** No two different photos link. */
    private static final double LINK_NONE = 0.9999;

    /**
     * Who each camera shows in each slot: person and photo, or no one. P = 0, S = 1, W = 2. Slot 0 is
     * a warm-up (W, whose first face loads each camera's embedder, which can take longer than the
     * tracker's idle limit and so split W's track); the audit covers slots 1 to 4.
     */
    private static final int[][][] SCENE = {
            {{2, 0}, {0, 0}, null, {0, 2}, null},
            {{2, 1}, null, {0, 1}, null, {1, 0}}};
    private static final int FIRST_AUDITED_SLOT = 1;

    private Path lfw139;

    @Override
    protected String name() {
        return "link-audit";
    }

    @Override
    protected void assumeReady() {
        lfw139 = PersonBudgetSceneTest.assumeLinkingStack();
    }

    @Test
    void noFieldAVendorReadsCarriesTheGatewaysLinks() throws Exception {
        boolean ok = false;
        try {
            List<String> vendorTopics = vendorReadableTopics();
            assertEquals(Set.of(Topics.enrollment(SITE), Topics.query(SITE), Topics.answer(SITE)), Set.copyOf(vendorTopics),
                    "a vendor reads the face and answer topics only (the status topic is the operator's and the recognizer's)");
            applyTopics();
            List<List<Path>> people = people();
            List<Path> feeds = new ArrayList<>();
            for (int c = 0; c < SCENE.length; c++) {
                feeds.add(scene(work.resolve("cam" + c), people, c));
            }
            Map<String, Object> linked = run("linked", feeds, LINK_ALL);
            Map<String, Object> unlinked = run("unlinked", feeds, LINK_NONE);
            System.out.println("LINK-AUDIT gateway's own counts, with links " + linked + ", without " + unlinked);
            assertTrue(((Number) linked.get("linkedAppearances")).longValue()
                    - ((Number) unlinked.get("linkedAppearances")).longValue() >= 3,
                    "P's two returns and the stranger were linked in one run only: " + linked + " vs " + unlinked);

            Map<String, String> originsLinked = SceneAgent.origins(work.resolve("linked-origins.csv"));
            Map<String, String> originsUnlinked = SceneAgent.origins(work.resolve("unlinked-origins.csv"));
            Map<String, PerturbedFace> a = new HashMap<>();
            Map<String, PerturbedFace> b = new HashMap<>();
            int records = 0;
            // The scene releases vectors; an answer site's records carry the same track fields (FaceAnswer).
            assertTrue(FaultKit.readAll(bootstrap, List.of(Topics.answer(SITE)), Duration.ofSeconds(5)).isEmpty(),
                    "a vector site publishes no answers");
            for (ConsumerRecord<String, byte[]> r : FaultKit.readAll(bootstrap, List.of(Topics.enrollment(SITE),
                    Topics.query(SITE)), Duration.ofSeconds(30))) {
                PerturbedFace f = FaceRecords.decodeFromTopic(r.topic(), r.value());
                records++;
                String inA = originsLinked.get(f.getEventId());
                String inB = originsUnlinked.get(f.getEventId());
                assertTrue(inA != null ^ inB != null, "every record traces to one run: " + f.getEventId());
                String at = position(f.getCameraId(), inA != null ? inA : inB);
                if (at != null) {
                    assertEquals(null, (inA != null ? a : b).put(at, f), "one release per appearance, at " + at);
                }
                assertEquals(Boolean.TRUE, f.getTrack().getLinking());
                assertEquals(EPSILON, f.getTrack().getPersonEpsilonBudget(), 1e-12);
            }
            Set<String> expected = new TreeSet<>();
            for (int c = 0; c < SCENE.length; c++) {
                for (int s = FIRST_AUDITED_SLOT; s < SLOTS; s++) {
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

    /** P: the first lfw139 person with three photos; S: the next person; W: the next with two photos. */
    private List<List<Path>> people() throws Exception {
        List<List<Path>> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(lfw139)) {
            for (Path dir : s.filter(Files::isDirectory).sorted().toList()) {
                List<Path> photos;
                try (Stream<Path> p = Files.list(dir)) {
                    photos = p.filter(x -> x.toString().endsWith(".jpg")).sorted().toList();
                }
                if (photos.size() >= new int[] {3, 1, 2}[out.size()]) {
                    out.add(photos);
                }
                if (out.size() == 3) {
                    return out;
                }
            }
        }
        throw new IllegalStateException("lfw139 lacks a person with three photos, a second, and a third with two");
    }

    private static Path scene(Path dir, List<List<Path>> people, int camera) throws Exception {
        Files.createDirectories(dir);
        BufferedImage blank = PersonBudgetSceneTest.frame(null);
        int n = 0;
        for (int slot = 0; slot < SLOTS; slot++) {
            int[] who = SCENE[camera][slot];
            BufferedImage face = who == null ? blank : PersonBudgetSceneTest.frame(ImageIO.read(people.get(who[0]).get(who[1]).toFile()));
            for (int i = 0; i < SLOT; i++) {
                ImageIO.write(i < FACE_FRAMES ? face : blank, "png", dir.resolve(String.format("f%04d.png", n++)).toFile());
            }
        }
        for (int i = 0; i < TAIL; i++) {
            ImageIO.write(blank, "png", dir.resolve(String.format("f%04d.png", n++)).toFile());
        }
        return dir;
    }

    /** The scene slot of a record: its camera and the slot its frame index falls in; null in the warm-up. */
    private static String position(String camera, String origin) {
        long frame = Long.parseLong(origin.substring(origin.lastIndexOf('#') + 1));
        assertTrue(frame % SLOT < FACE_FRAMES && frame < (long) SLOTS * SLOT, "a record from a face frame of the scene");
        return frame / SLOT < FIRST_AUDITED_SLOT ? null : camera + "@slot" + frame / SLOT;
    }

    /** Runs the gateway over the scene once; returns its exact linking counters (REST, local). */
    private Map<String, Object> run(String name, List<Path> folders, double threshold) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put("agent.site-id", SITE);
        props.put("agent.gateway-id", name + "-gw");
        props.put("agent.data-dir", Files.createDirectories(work.resolve(name + "-data")).toString());
        props.put("agent.ledger", work.resolve(name + "-origins.csv").toString());
        props.put("agent.epsilon", EPSILON);
        props.put("agent.budget", POLICY);
        props.put("agent.link.enabled", true);
        props.put("agent.link.threshold", threshold);
        Map<String, Object> status = SceneAgent.runGateway(bootstrap, props, folders, FPS, (long) SLOTS * SLOT + 5, new ArrayList<>());
        @SuppressWarnings("unchecked")
        Map<String, Object> exact = (Map<String, Object>) FaultKit.at(status, "local.linking");
        return new LinkedHashMap<>(exact);
    }

    private void applyTopics() throws Exception {
        applyTopics(SITE);
    }
}
