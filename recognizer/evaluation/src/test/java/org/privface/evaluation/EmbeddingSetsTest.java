package org.privface.evaluation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.agent.dataset.BadDataset;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.embed.FaceEmbedders;

/** The deep harness's data-set loading on bad input (the progress bar once died on a linked folder). */
class EmbeddingSetsTest {

    @Test
    void aDataSetThatIsALinkIsEmbeddedWithTheBarCountingEveryImage(@TempDir Path tmp) throws Exception {
        assumeTrue(FaceModels.findYunet(null).isPresent(), "YuNet absent (FACE_MODELS): skipping");
        assumeTrue(FaceModels.hasFaceplugin(FaceModels.FEATURE), FaceModels.FEATURE + " absent from "
                + FaceModels.facepluginDir() + " (the build fetches it from npm): skipping");
        Path synthetic = Path.of(System.getProperty("privface.root", "../..")).resolve("test-data/synthetic/enroll");
        Path real = tmp.resolve("real");
        for (String person : new String[] {"person-a", "person-b"}) {
            Path dir = Files.createDirectories(real.resolve(person));
            for (String f : new String[] {"000.png", "001.png"}) {
                Files.copy(synthetic.resolve(person).resolve(f), dir.resolve(f));
            }
        }
        Files.writeString(real.resolve("person-a").resolve("notes.txt"), "not an image");
        Path datasets = Files.createDirectories(tmp.resolve("datasets"));
        Files.createSymbolicLink(datasets.resolve("tiny"), real);
        Path cache = Files.createDirectories(tmp.resolve("cache"));

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream was = System.out;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        EmbeddingCache c;
        try {
            c = EmbeddingSets.load(datasets, "tiny", cache, FaceEmbedders.FR_FEATURE);
        } finally {
            System.setOut(was);
        }
        String printed = out.toString(StandardCharsets.UTF_8);
        System.out.println(printed);
        assertTrue(printed.contains("4/4"), "the bar ends at the 4 images listed: " + printed);
        assertTrue(printed.contains("4 images: " + c.x().length + " faces embedded"), printed);
        assertTrue(c.x().length >= 1, "some synthetic faces are found");
        assertTrue(Files.exists(cache.resolve("tiny-" + FaceEmbedders.FR_FEATURE + ".emb")));
    }

    @Test
    void aMissingOrBrokenDataSetIsABadDataSetNamingIt(@TempDir Path tmp) throws Exception {
        BadDataset missing = assertThrows(BadDataset.class, () -> EmbeddingSets.load(tmp, "nope", tmp, "dlib"));
        assertTrue(missing.getMessage().contains("data set nope not found"), missing.getMessage());
        Path nested = Files.createDirectories(tmp.resolve("set/ann/inner"));
        Files.write(nested.resolve("1.png"), new byte[] {1});
        BadDataset bad = assertThrows(BadDataset.class, () -> EmbeddingSets.load(tmp, "set", tmp, "dlib"));
        assertTrue(bad.getMessage().startsWith(nested.toString()), bad.getMessage());
    }

    @Test
    void theProgressBarSurvivesAnEmptyOrOverrunTotal() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Progress none = new Progress(new PrintStream(out, true, StandardCharsets.UTF_8), 0);
        none.step("x");
        Progress one = new Progress(new PrintStream(out, true, StandardCharsets.UTF_8), 1);
        one.step("x");
        one.step("x");
        assertEquals(3, out.toString(StandardCharsets.UTF_8).split("\r").length - 1);
    }
}
