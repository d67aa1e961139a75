package org.privface.agent.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.MatOfByte;
import org.opencv.core.Scalar;
import org.opencv.imgcodecs.Imgcodecs;
import org.privface.agent.capture.Frame;
import org.privface.agent.capture.ImageFolderSource;
import org.privface.agent.detect.FaceDetector;
import org.privface.agent.image.OpenCv;

/**
 * Every bad input a data-set folder can hold, on small data sets generated in a temp folder: each
 * either loads (with what was left out reported) or stops with a {@link BadDataset} naming the file.
 */
class BadDatasetTest {
    @TempDir
    Path tmp;

    /** A 150×150 grey JPEG, the shape the LFW loader takes; {@code shade} tells images apart. */
    private static byte[] jpeg(int shade) {
        OpenCv.load();
        Mat m = new Mat(150, 150, CvType.CV_8UC1, new Scalar(shade));
        Mat block = m.submat(40, 110, 50, 100);
        block.setTo(new Scalar(255 - shade));
        MatOfByte out = new MatOfByte();
        Imgcodecs.imencode(".jpg", m, out);
        byte[] b = out.toArray();
        out.release();
        m.release();
        return b;
    }

    /** root/person/1.jpg … n.jpg for each (person, n). */
    private Path set(String name, Object... personAndCount) throws IOException {
        Path root = Files.createDirectories(tmp.resolve(name));
        for (int i = 0; i < personAndCount.length; i += 2) {
            Path person = Files.createDirectories(root.resolve((String) personAndCount[i]));
            for (int k = 1; k <= (Integer) personAndCount[i + 1]; k++) {
                Files.write(person.resolve(k + ".jpg"), jpeg(20 * k + i));
            }
        }
        return root;
    }

    @Test
    void aDataSetFolderThatIsALinkLoadsWhatItsTargetHolds() throws Exception {
        Path real = set("real", "ann", 3, "bob", 2);
        Path link = Files.createSymbolicLink(tmp.resolve("link"), real);
        LabelledFaces direct = FaceDatasets.lfw(real);
        LabelledFaces linked = FaceDatasets.lfw(link);
        assertEquals(5, linked.size());
        assertEquals(direct.names(), linked.names());
        assertEquals(direct.origins(), linked.origins());
        assertEquals(5, DatasetFolder.people(link).images().size(), "the count a progress bar gets");
        assertEquals(5, DatasetFolder.imagesUnder(link).images().size());
    }

    @Test
    void linkedPersonFoldersAndLinkedImagesAreFollowed() throws Exception {
        Path elsewhere = set("elsewhere", "ann", 2, "loose", 1);
        Path root = set("root", "bob", 2);
        Files.createSymbolicLink(root.resolve("ann"), elsewhere.resolve("ann"));
        Files.createSymbolicLink(root.resolve("bob").resolve("3.jpg"), elsewhere.resolve("loose/1.jpg"));
        LabelledFaces f = FaceDatasets.lfw(root);
        assertEquals(List.of("ann", "bob"), f.names());
        assertEquals(5, f.size());
        assertEquals(List.of("ann/1.jpg", "ann/2.jpg", "bob/1.jpg", "bob/2.jpg", "bob/3.jpg"), f.origins());
    }

    @Test
    void aLinkCycleIsRefusedNamingTheLink() throws Exception {
        Path root = set("root", "ann", 2);
        Path loop = Files.createSymbolicLink(root.resolve("ann").resolve("loop"), root);
        BadDataset people = assertThrows(BadDataset.class, () -> FaceDatasets.lfw(root));
        assertTrue(people.getMessage().startsWith(loop.toString()), people.getMessage());
        // The camera walks every depth: there the cycle is found as such.
        BadDataset walk = assertThrows(BadDataset.class, () -> new ImageFolderSource(root));
        assertTrue(walk.getMessage().contains(loop.toString()) && walk.getMessage().contains("link cycle"), walk.getMessage());
    }

    @Test
    void aLinkToNothingIsRefusedNamingIt() throws Exception {
        Path root = set("root", "ann", 2);
        Path gone = Files.createSymbolicLink(root.resolve("ann").resolve("3.jpg"), tmp.resolve("deleted.jpg"));
        BadDataset e = assertThrows(BadDataset.class, () -> FaceDatasets.lfw(root));
        assertTrue(e.getMessage().startsWith(gone.toString()) && e.getMessage().contains("does not exist"), e.getMessage());
    }

    @Test
    void aFolderInsideAPersonFolderIsRefusedNamingIt() throws Exception {
        Path root = set("root", "ann", 2, "bob", 1);
        Path inner = Files.createDirectories(root.resolve("ann").resolve("2019"));
        Files.write(inner.resolve("9.jpg"), jpeg(90));
        BadDataset e = assertThrows(BadDataset.class, () -> FaceDatasets.lfw(root));
        assertTrue(e.getMessage().startsWith(inner.toString()) && e.getMessage().contains("<root>/<person>/<image>"),
                e.getMessage());
        // A camera's image folder may nest: every image under it is a frame.
        assertEquals(4, DatasetFolder.imagesUnder(root).images().size());
    }

    @Test
    void emptyPersonFoldersAndNonImageFilesAreLeftOutAndReported() throws Exception {
        Path root = set("root", "ann", 2, "bob", 2);
        Files.createDirectories(root.resolve("empty"));
        Files.createDirectories(root.resolve("notes-only"));
        Files.writeString(root.resolve("notes-only").resolve("who.txt"), "nobody");
        Files.writeString(root.resolve("ann").resolve("notes.txt"), "not a face");
        Files.writeString(root.resolve("README"), "a data set");
        LabelledFaces f = FaceDatasets.lfw(root);
        assertEquals(List.of("ann", "bob"), f.names());
        assertEquals(4, f.size());
        String skipped = String.join("\n", f.skipped());
        for (String s : List.of("README: not in a person folder", "empty/: no images", "notes-only/: no images",
                "ann/notes.txt: not an image", "notes-only/who.txt: not an image")) {
            assertTrue(skipped.contains(s), s + " missing from " + skipped);
        }
        assertEquals(5, f.skipped().size(), skipped);
    }

    @Test
    void aFolderWithNoImagesAtAllIsRefused() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Files.createDirectories(root.resolve("ann"));
        Files.writeString(root.resolve("ann").resolve("a.txt"), "x");
        BadDataset e = assertThrows(BadDataset.class, () -> DatasetFolder.people(root));
        assertTrue(e.getMessage().startsWith(root.toString()) && e.getMessage().contains("no person folder with images"),
                e.getMessage());
        BadDataset missing = assertThrows(BadDataset.class, () -> FaceDatasets.lfw(tmp.resolve("typo")));
        assertTrue(missing.getMessage().contains("typo: no such folder"), missing.getMessage());
    }

    @Test
    void aTruncatedJpegStopsTheLoaderNamingItAndTheCameraSkipsAndCountsIt() throws Exception {
        Path root = set("root", "ann", 3);
        Path cut = root.resolve("ann").resolve("2.jpg");
        byte[] whole = Files.readAllBytes(cut);
        Files.write(cut, Arrays.copyOf(whole, whole.length * 2 / 3));
        BadDataset e = assertThrows(BadDataset.class, () -> FaceDatasets.lfw(root));
        assertTrue(e.getMessage().startsWith(cut.toString()) && e.getMessage().contains("truncated"), e.getMessage());

        try (ImageFolderSource camera = new ImageFolderSource(root)) {
            List<String> frames = new ArrayList<>();
            for (Optional<Frame> fr = camera.next(); fr.isPresent(); fr = camera.next()) {
                frames.add(fr.get().origin());
                fr.get().image().release();
            }
            assertEquals(List.of("ann/1.jpg", "ann/3.jpg"), frames);
            assertEquals(1, camera.skipped());
        }
    }

    @Test
    void aZeroByteImageStopsTheLoaderNamingIt() throws Exception {
        Path root = set("root", "ann", 2);
        Path empty = Files.write(root.resolve("ann").resolve("3.jpg"), new byte[0]);
        BadDataset e = assertThrows(BadDataset.class, () -> FaceDatasets.lfw(root));
        assertTrue(e.getMessage().startsWith(empty.toString()) && e.getMessage().contains("file size 0"), e.getMessage());
        Path orl = Files.createDirectories(tmp.resolve("orl").resolve("s1"));
        Path pgm = Files.write(orl.resolve("1.pgm"), new byte[0]);
        BadDataset p = assertThrows(BadDataset.class, () -> FaceDatasets.orl(orl.getParent()));
        assertTrue(p.getMessage().startsWith(pgm.toString()) && p.getMessage().contains("not a binary PGM"), p.getMessage());
    }

    @Test
    void aTruncatedPgmStopsTheOrlLoaderNamingIt() throws Exception {
        Path person = Files.createDirectories(tmp.resolve("orl").resolve("s1"));
        Files.write(person.resolve("1.pgm"), pgm(92, 112, 92 * 112));
        Path cut = Files.write(person.resolve("2.pgm"), pgm(92, 112, 500));
        BadDataset e = assertThrows(BadDataset.class, () -> FaceDatasets.orl(person.getParent()));
        assertTrue(e.getMessage().startsWith(cut.toString()) && e.getMessage().contains("truncated"), e.getMessage());
        Files.delete(cut);
        assertEquals(1, FaceDatasets.orl(person.getParent()).size());
    }

    private static byte[] pgm(int w, int h, int pixels) {
        byte[] header = ("P5\n" + w + " " + h + "\n255\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        byte[] b = Arrays.copyOf(header, header.length + pixels);
        Arrays.fill(b, header.length, b.length, (byte) 128);
        return b;
    }

    @Test
    void anUnreadableImageIsRefusedBeforeAnyWorkStarts() throws Exception {
        Path root = set("root", "ann", 2);
        Path locked = root.resolve("ann").resolve("2.jpg");
        Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("---------"));
        try {
            if (Files.isReadable(locked)) {
                // Root reads a mode-000 file anyway (the tests run as root in CI): then the file is
                // readable, and the loader must not refuse it.
                System.out.println("mode 000 is readable to this user (root): checking it loads instead");
                assertEquals(2, FaceDatasets.lfw(root).size());
                return;
            }
            BadDataset e = assertThrows(BadDataset.class, () -> DatasetFolder.people(root));
            assertTrue(e.getMessage().startsWith(locked.toString()) && e.getMessage().contains("not readable"),
                    e.getMessage());
        } finally {
            Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("rw-r--r--"));
        }
    }

    @Test
    void aOneImagePersonIsKeptAndNamed() throws Exception {
        Path root = set("root", "ann", 3, "solo", 1);
        DatasetFolder listing = DatasetFolder.people(root);
        assertEquals(List.of("solo"), listing.singleImagePeople());
        LabelledFaces f = FaceDatasets.lfw(root);
        assertEquals(List.of("ann", "solo"), f.names());
        assertEquals(4, f.size());
    }

    @Test
    void imagesWithoutAFaceAreLeftOutAndReportedNotLostSilently() throws Exception {
        // Real faces from test-data/synthetic beside an image with none: the detector finds no face
        // in a flat grey square.
        Path synthetic = Path.of(System.getProperty("privface.root", "..")).resolve("test-data/synthetic/enroll/person-a");
        Path root = Files.createDirectories(tmp.resolve("root").resolve("person-a"));
        Files.copy(synthetic.resolve("000.png"), root.resolve("000.png"));
        Files.copy(synthetic.resolve("001.png"), root.resolve("001.png"));
        Files.write(root.resolve("002.jpg"), jpeg(128));
        LabelledFaces f = FaceDatasets.detected(root.getParent(), FaceDetector.defaults());
        assertTrue(f.size() >= 1, "the synthetic faces are found");
        assertTrue(f.skipped().contains("person-a/002.jpg: no face found"), f.skipped().toString());
        assertEquals(3, f.size() + f.skipped().size(), "every image is a face or a reported skip: " + f.skipped());
    }
}
