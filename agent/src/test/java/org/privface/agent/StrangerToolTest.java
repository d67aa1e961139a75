package org.privface.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.agent.detect.DeepModels;
import org.privface.privacy.embedding.EmbeddingBasis;
import org.privface.wire.FaceRecordFiles;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;

/** Real public faces through YuNet, dlib and the EMBEDDING release into a strangers file. */
class StrangerToolTest {
    @Test
    void releasesEachPublicFaceOnceLabelledWithItsPerson(@TempDir Path dir) throws Exception {
        DeepModels.yunetOrSkip().close();
        DeepModels.faceapiOrSkip();
        Path lfw = DeepModels.datasetOrSkip("lfw-public");
        // Three public people, two images each, linked into a small set.
        Path faces = Files.createDirectories(dir.resolve("faces"));
        List<Path> people;
        try (Stream<Path> s = Files.list(lfw)) {
            people = s.filter(Files::isDirectory).sorted().limit(40).filter(p -> images(p).size() >= 2).limit(3).toList();
        }
        for (Path p : people) {
            Path to = Files.createDirectories(faces.resolve(p.getFileName()));
            for (Path img : images(p).subList(0, 2)) {
                Files.createSymbolicLink(to.resolve(img.getFileName()), img);
            }
        }
        Path out = dir.resolve("strangers.bin");
        StrangerTool.main(new String[] {"--faces", faces.toString(), "--site", "north", "--network", "dlib",
                "--mode", "sign-cap", "--epsilon", "20", "--out", out.toString()});
        List<PerturbedFace> records = FaceRecordFiles.read(out);
        assertTrue(records.size() >= 5 && records.size() <= 6, "one release per detected face: " + records.size());
        for (PerturbedFace f : records) {
            assertEquals(RecordKind.ENROLLMENT, f.getKind());
            assertTrue(people.stream().anyMatch(p -> p.getFileName().toString().equals(f.getEnrollmentLabel())));
            assertEquals("EMBEDDING", f.getMechanism().getName());
            assertTrue(f.getMechanism().getSensitivityMode().startsWith("sign-cap-"), f.getMechanism().getSensitivityMode());
            assertEquals(20, f.getMechanism().getEpsilonPerFace(), 1e-6, "the exact sampler's ε, at most 20");
            assertTrue(f.getMechanism().getEpsilonPerFace() <= 20);
            assertTrue(f.getMechanism().getBasisId().startsWith(EmbeddingBasis.bundled("dlib").id() + ".k"),
                    f.getMechanism().getBasisId());
        }
        assertEquals(records.size(), records.stream().map(PerturbedFace::getEventId).distinct().count());
    }

    private static List<Path> images(Path person) {
        try (Stream<Path> s = Files.list(person)) {
            return s.filter(Files::isRegularFile).sorted().toList();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
