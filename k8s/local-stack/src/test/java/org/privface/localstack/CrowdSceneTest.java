package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import javax.imageio.ImageIO;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.embed.FaceEmbedders;
import org.privface.wire.FaceRecords;
import org.privface.wire.topics.Topics;

/**
 * Issue 30's crowd, small enough for {@code mvn verify}: one gateway's three MJPEG cameras see 20
 * different real people (10 of lfw139, 10 of lfw-public) in one window, each two or three times, on a
 * different camera each time (one photo per person, at each camera's own size), at policy
 * {@code once}, through the agent's default linking. The showings come in rounds, and a person is on one camera per round, so no
 * person is ever on two cameras at once.
 *
 * <p>Privacy is counted from the gateway's own logs against the truth, not from record fields: the
 * origin ledger traces each release to its camera and frame, hence to the person shown there, and
 * each release at {@code once} spends the policy's ε. Every release must also be on the broker.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class CrowdSceneTest extends BrokerProcessTest {
    private static final double EPSILON = 2;
    private static final int PEOPLE = 20;
    private static final int CAMERAS = 3;
    /**
     * Frames a face is shown, then frames without: consecutive showings alternate between the frame's
     * left and right halves, so each is a new track, and a place is empty for 16 frames, longer than
     * the tracker's 15 missed frames, before it is used again (else the tracker would carry one
     * track on to the next person there, which the split then has to undo).
     */
    private static final int FACE_FRAMES = 8;
    private static final int BLANK_FRAMES = 4;
    private static final int SLOT = FACE_FRAMES + BLANK_FRAMES;
    private static final int FPS = 10;
    /** The release's default network, and the network linking embeds with by default. */
    private static final String NETWORK = new org.privface.agent.AgentSettings.Embedder().getNetwork();
    private static final String LINK_NETWORK = new org.privface.agent.AgentSettings.Link()
            .network(new org.privface.agent.AgentSettings.Embedder());

    private Path lfw139;
    private Path lfwPublic;

    @Override
    protected String name() {
        return "crowd-scene";
    }

    @Override
    protected void assumeReady() {
        Path r = FaceDatasets.root().orElse(null);
        lfw139 = r == null ? null : r.resolve("lfw139");
        lfwPublic = r == null ? null : r.resolve("lfw-public");
        assumeTrue(lfw139 != null && Files.isDirectory(lfw139) && Files.isDirectory(lfwPublic),
                "lfw139 and lfw-public not found: set FACE_DATASETS to the shared datasets folder");
        assumeTrue(FaceEmbedders.missing(NETWORK).isEmpty(), FaceEmbedders.missing(NETWORK).orElse(""));
        assumeTrue(FaceEmbedders.missing(LINK_NETWORK).isEmpty(), FaceEmbedders.missing(LINK_NETWORK).orElse(""));
        assumeTrue(FaceModels.findYunet(null).isPresent(), "YuNet not found under FACE_MODELS: linking needs its landmarks");
    }

    /** Person p's showings: 2 or 3. */
    static int showings(int p) {
        return 2 + p % 2;
    }

    /**
     * The schedule: per camera, the person in each slot (-1: no one). In round j every person with
     * more than j showings is on camera (p + j) mod 3; rounds are padded to the same length on every camera.
     */
    static List<List<Integer>> schedule() {
        List<List<Integer>> cams = new ArrayList<>();
        for (int c = 0; c < CAMERAS; c++) {
            cams.add(new ArrayList<>());
        }
        for (int j = 0; j < 3; j++) {
            List<List<Integer>> round = new ArrayList<>();
            int longest = 0;
            for (int c = 0; c < CAMERAS; c++) {
                List<Integer> on = new ArrayList<>();
                for (int p = 0; p < PEOPLE; p++) {
                    if (showings(p) > j && (p + j) % CAMERAS == c) {
                        on.add(p);
                    }
                }
                round.add(on);
                longest = Math.max(longest, on.size());
            }
            for (int c = 0; c < CAMERAS; c++) {
                while (round.get(c).size() < longest) {
                    round.get(c).add(-1);
                }
                cams.get(c).addAll(round.get(c));
            }
        }
        for (List<Integer> c : cams) {
            c.add(-1); // the loop ends with no one, so a second loop is a return, not a longer showing
        }
        return cams;
    }

    @Test
    void aCrowdIsReleasedOnceEachAndNobodyIsDoubleSpentBeyondTheMissesPredicted() throws Exception {
        boolean ok = false;
        try {
            List<List<Path>> photos = new ArrayList<>();
            photos.addAll(people(lfw139, 10));
            photos.addAll(people(lfwPublic, 10));
            List<List<Integer>> schedule = schedule();
            List<Path> feeds = new ArrayList<>();
            for (int c = 0; c < CAMERAS; c++) {
                feeds.add(feed(work.resolve("crowd-cam" + c), schedule, photos, c));
            }
            String site = "crowd";
            Path ledger = work.resolve("crowd-origins.csv");
            List<String> urls = new ArrayList<>();
            Map<String, Object> linking = SceneAgent.run(bootstrap, work, site, feeds, FPS, schedule.get(0).size() * SLOT,
                    ledger, EPSILON, Map.of(), urls);

            // Truth from the gateway's origin ledger: camera and frame of each release.
            Map<String, Integer> personOfEvent = new HashMap<>();
            for (Map.Entry<String, String> e : SceneAgent.origins(ledger).entrySet()) {
                String origin = e.getValue();
                int camera = urls.indexOf(origin.substring(0, origin.lastIndexOf('#')));
                assertTrue(camera >= 0, "the origin " + origin + " names one of the feeds " + urls);
                long frame = Long.parseLong(origin.substring(origin.lastIndexOf('#') + 1));
                List<Integer> slots = schedule.get(camera);
                int i = (int) (frame % (slots.size() * SLOT));
                personOfEvent.put(e.getKey(), i % SLOT < FACE_FRAMES ? slots.get(i / SLOT) : -1);
            }
            Set<String> onBroker = new HashSet<>();
            for (ConsumerRecord<String, byte[]> r : FaultKit.readAll(bootstrap, List.of(Topics.query(site)), Duration.ofSeconds(30))) {
                onBroker.add(FaceRecords.decodeFace(r.value()).getEventId());
            }
            int[] releases = new int[PEOPLE];
            int untraced = 0;
            for (var e : personOfEvent.entrySet()) {
                assertTrue(onBroker.contains(e.getKey()), "release " + e.getKey() + " reached the broker");
                if (e.getValue() < 0) {
                    untraced++;
                } else {
                    releases[e.getValue()]++;
                }
            }
            int released = 0;
            int over = 0;
            int repeats = 0;
            for (int p = 0; p < PEOPLE; p++) {
                released += releases[p] > 0 ? 1 : 0;
                over += releases[p] > 1 ? 1 : 0;
                repeats += showings(p) - 1;
            }
            double miss = PersonBudgetSceneTest.missRateAt(root, LINK_NETWORK, FaceEmbedders.linkThreshold(LINK_NETWORK));
            int predicted = (int) Math.ceil(repeats * miss);
            System.out.printf(Locale.ROOT, "CROWD %d people, %d showings on %d cameras, ε %.1f once, %s threshold %.2f: "
                            + "released %d/%d, over ε %d (predicted misses %d at miss rate %.4f); releases per person %s; linking %s%n",
                    PEOPLE, PEOPLE + repeats, CAMERAS, EPSILON, LINK_NETWORK, FaceEmbedders.linkThreshold(LINK_NETWORK), released, PEOPLE,
                    over, predicted, miss, java.util.Arrays.toString(releases), linking);
            assertEquals(0, untraced, "every release traces to a face segment of the scene");
            assertTrue(over <= predicted, over + " people spent more than ε; the miss rate predicts " + predicted);
            assertTrue(released >= PEOPLE * 3 / 4, "a crowd of 20 is mostly released: " + released);
            assertTrue(((Number) linking.get("maxPersonEpsilon")).doubleValue() <= EPSILON + 1e-9);
            ok = true;
        } finally {
            passed &= ok;
        }
    }

    /** The first {@code n} people (sorted) with at least three photos, and their photos. */
    private static List<List<Path>> people(Path set, int n) throws Exception {
        List<List<Path>> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(set)) {
            for (Path d : s.filter(Files::isDirectory).sorted().toList()) {
                List<Path> jpgs;
                try (Stream<Path> f = Files.list(d)) {
                    jpgs = f.filter(p -> p.toString().endsWith(".jpg")).sorted().toList();
                }
                if (jpgs.size() >= 3 && out.size() < n) {
                    out.add(jpgs);
                }
            }
        }
        return out;
    }

    /**
     * One camera's loop. A person looks the same all window (one photo), but each camera sees them at
     * its own size and on alternating sides; photographs of other days are the crowd benchmark's case.
     */
    private static Path feed(Path dir, List<List<Integer>> schedule, List<List<Path>> photos, int camera) throws Exception {
        Files.createDirectories(dir);
        BufferedImage blank = frame(null, 0, 0);
        int n = 0;
        for (int p : schedule.get(camera)) {
            BufferedImage face = null;
            if (p >= 0) {
                // One window, one look: the person's first photo on every camera, at the camera's own size.
                face = frame(ImageIO.read(photos.get(p).get(0).toFile()), n / SLOT % 2, 225 - 40 * camera);
            }
            for (int i = 0; i < SLOT; i++) {
                ImageIO.write(i < FACE_FRAMES && face != null ? face : blank, "png",
                        dir.resolve(String.format("f%04d.png", n++)).toFile());
            }
        }
        return dir;
    }

    /** A 480×360 grey frame, with the 150×150 photo drawn {@code size} wide in its left (0) or right (1) half. */
    private static BufferedImage frame(BufferedImage photo, int side, int size) {
        BufferedImage f = new BufferedImage(480, 360, BufferedImage.TYPE_3BYTE_BGR);
        java.awt.Graphics2D g = f.createGraphics();
        g.setColor(new java.awt.Color(128, 128, 128));
        g.fillRect(0, 0, 480, 360);
        if (photo != null) {
            g.setRenderingHint(java.awt.RenderingHints.KEY_INTERPOLATION, java.awt.RenderingHints.VALUE_INTERPOLATION_BILINEAR);
            g.drawImage(photo, side == 0 ? 8 : 247, 68, size, size, null);
        }
        g.dispose();
        return f;
    }
}
