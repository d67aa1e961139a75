package org.privface.agent.detect;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.image.OpenCv;

/** Test fixtures for the deep models and the real-face sets: each skips, with the reason, when absent. */
public final class DeepModels {
    private DeepModels() {
    }

    public static YuNetDetector yunetOrSkip() {
        OpenCv.load();
        Path p = FaceModels.sharedModels().resolve(FaceModels.YUNET_FILE);
        assumeTrue(Files.isRegularFile(p), "YuNet absent at " + p.toAbsolutePath() + " (FACE_MODELS): skipping");
        return new YuNetDetector(p, YuNetDetector.DEFAULT_SCORE, 0);
    }

    public static void facepluginOrSkip() {
        OpenCv.load();
        for (String f : List.of(FaceModels.DETECT, FaceModels.LANDMARK, FaceModels.FEATURE)) {
            assumeTrue(FaceModels.hasFaceplugin(f), f + " absent from " + FaceModels.facepluginDir()
                    + " (the build fetches it from npm; offline?): skipping");
        }
    }

    /** dlib's network from {@value FaceModels#FACEAPI_PACKAGE}, where the build puts it. */
    public static void faceapiOrSkip() {
        OpenCv.load();
        for (String f : List.of(FaceModels.DLIB_MANIFEST, FaceModels.DLIB_WEIGHTS)) {
            assumeTrue(FaceModels.hasFaceapi(f), f + " absent from " + FaceModels.faceapiDir()
                    + " (the build fetches it from npm; offline?): skipping");
        }
    }

    public static UltraFaceDetector ultrafaceOrSkip() {
        facepluginOrSkip();
        return UltraFaceDetector.fromPackage();
    }

    public static Path datasetOrSkip(String name) {
        Path root = FaceDatasets.root().orElse(null);
        assumeTrue(root != null, "FACE_DATASETS not set and ../shared/datasets absent: skipping real-data test");
        Path p = root.resolve(name);
        assumeTrue(Files.isDirectory(p), "dataset " + p + " absent: skipping");
        return p;
    }

    /** Up to {@code n} images of a folder-per-person set, spread over its people: every k-th file in sorted order. */
    public static List<Path> images(Path root, int n) throws IOException {
        List<Path> all;
        try (Stream<Path> s = Files.walk(root, 2)) {
            all = s.filter(Files::isRegularFile).filter(p -> p.toString().matches(".*\\.(jpg|pgm|png)$")).sorted().toList();
        }
        List<Path> out = new ArrayList<>();
        double step = Math.max(1.0, all.size() / (double) n);
        for (double i = 0; i < all.size() && out.size() < n; i += step) {
            out.add(all.get((int) i));
        }
        return out;
    }
}
