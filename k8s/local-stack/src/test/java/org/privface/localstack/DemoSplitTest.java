package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.MatOfByte;
import org.opencv.core.Scalar;
import org.opencv.imgcodecs.Imgcodecs;
import org.privface.agent.dataset.BadDataset;
import org.privface.agent.image.OpenCv;

/** The demo's {@code -Ddemo.faces} folder on bad input: it splits what it can and says what it left out, or stops naming the file. */
class DemoSplitTest {
    @TempDir
    Path tmp;

    private static byte[] jpeg(int shade) {
        OpenCv.load();
        Mat m = new Mat(60, 60, CvType.CV_8UC3, new Scalar(shade, shade, shade));
        MatOfByte out = new MatOfByte();
        Imgcodecs.imencode(".jpg", m, out);
        m.release();
        return out.toArray();
    }

    private Path person(Path root, String name, int images) throws Exception {
        Path dir = Files.createDirectories(root.resolve(name));
        for (int i = 1; i <= images; i++) {
            Files.write(dir.resolve(name + "_" + i + ".jpg"), jpeg(10 * i));
        }
        return dir;
    }

    @Test
    void aLinkedFolderWithAOneImagePersonNonImagesAndAnEmptyFolderSplitsTheRestAndSaysSo() throws Exception {
        Path real = Files.createDirectories(tmp.resolve("real"));
        person(real, "ann", 3);
        person(real, "bob", 2);
        person(real, "solo", 1);
        Files.createDirectories(real.resolve("empty"));
        Files.writeString(real.resolve("ann").resolve("notes.txt"), "not a face");
        Path faces = Files.createSymbolicLink(tmp.resolve("faces"), real);
        Path work = Files.createDirectories(tmp.resolve("work"));

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream was = System.out;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        DemoFaces.Split s;
        try {
            s = DemoFaces.split(faces, work);
        } finally {
            System.setOut(was);
        }
        String said = out.toString(StandardCharsets.UTF_8);
        assertEquals(2, s.people());
        assertEquals(2 + 1, s.enrollImages(), "round(0.7 × 3) of ann and round(0.7 × 2) of bob");
        assertEquals(1 + 1, s.queryImages());
        assertTrue(Files.exists(work.resolve("enroll/ann/ann_1.jpg")) && Files.exists(work.resolve("query/ann/ann_3.jpg")));
        assertTrue(Files.notExists(work.resolve("enroll/solo")) && Files.notExists(work.resolve("query/solo")));
        assertTrue(said.contains("left out 1 people with one image") && said.contains("solo"), said);
        assertTrue(said.contains("ann/notes.txt: not an image") && said.contains("empty/: no images"), said);
    }

    @Test
    void aTruncatedImageOrOnlyOneImagePeopleStopTheDemoNamingTheCause() throws Exception {
        Path faces = Files.createDirectories(tmp.resolve("faces"));
        Path ann = person(faces, "ann", 3);
        Path cut = ann.resolve("ann_2.jpg");
        byte[] b = Files.readAllBytes(cut);
        Files.write(cut, Arrays.copyOf(b, b.length - 40));
        BadDataset e = assertThrows(BadDataset.class, () -> DemoFaces.split(faces, Files.createDirectories(tmp.resolve("w1"))));
        assertTrue(e.getMessage().startsWith(cut.toString()) && e.getMessage().contains("truncated"), e.getMessage());

        Path singles = Files.createDirectories(tmp.resolve("singles"));
        person(singles, "ann", 1);
        person(singles, "bob", 1);
        BadDataset one = assertThrows(BadDataset.class, () -> DemoFaces.split(singles, Files.createDirectories(tmp.resolve("w2"))));
        assertTrue(one.getMessage().contains("every person has one image"), one.getMessage());
    }
}
