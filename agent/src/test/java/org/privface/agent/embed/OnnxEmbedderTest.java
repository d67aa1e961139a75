package org.privface.agent.embed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.opencv.imgcodecs.Imgcodecs;
import org.privface.agent.detect.DeepModels;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.FaceFinder;

/** fr_feature.onnx on real lfw5 faces: same person close, different people apart. Skipped without models or data. */
class OnnxEmbedderTest {
    private static final int PER_PERSON = 4;

    static double cosine(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    private static List<List<double[]>> embedLfw5(FaceFinder finder, FaceEmbedder embedder) throws IOException {
        Path lfw5 = DeepModels.datasetOrSkip("lfw5");
        List<List<double[]>> people = new ArrayList<>();
        List<Path> dirs;
        try (Stream<Path> s = Files.list(lfw5)) {
            dirs = s.filter(Files::isDirectory).sorted().toList();
        }
        for (Path person : dirs) {
            List<double[]> v = new ArrayList<>();
            for (Path f : DeepModels.images(person, PER_PERSON)) {
                Mat img = Imgcodecs.imread(f.toString(), Imgcodecs.IMREAD_COLOR);
                v.add(embedder.embed(img, finder.detect(img).get(0)));
                img.release();
            }
            people.add(v);
        }
        return people;
    }

    private static void separates(String name, FaceFinder finder) throws IOException {
        try (OnnxEmbedder embedder = OnnxEmbedder.fromPackage()) {
            assertEquals(512, embedder.dimension());
            separates(name, finder, embedder);
        }
    }

    /** Same-person pairs far closer than different-person pairs, and the nearest neighbour right, on lfw5. */
    static void separates(String name, FaceFinder finder, FaceEmbedder embedder) throws IOException {
        {
            List<List<double[]>> people = embedLfw5(finder, embedder);
            double same = 0;
            double different = 0;
            int ns = 0;
            int nd = 0;
            double worstSame = 1;
            double bestDifferent = -1;
            int nearestRight = 0;
            int total = 0;
            for (int p = 0; p < people.size(); p++) {
                for (int i = 0; i < people.get(p).size(); i++) {
                    double[] a = people.get(p).get(i);
                    double norm = Math.sqrt(cosine(a, a));
                    assertEquals(1.0, norm, 1e-9, "embeddings are unit vectors");
                    double best = -2;
                    int bestPerson = -1;
                    for (int q = 0; q < people.size(); q++) {
                        for (int j = 0; j < people.get(q).size(); j++) {
                            if (p == q && i == j) {
                                continue;
                            }
                            double c = cosine(a, people.get(q).get(j));
                            if (p == q) {
                                same += c;
                                ns++;
                                worstSame = Math.min(worstSame, c);
                            } else {
                                different += c;
                                nd++;
                                bestDifferent = Math.max(bestDifferent, c);
                            }
                            if (c > best) {
                                best = c;
                                bestPerson = q;
                            }
                        }
                    }
                    nearestRight += bestPerson == p ? 1 : 0;
                    total++;
                }
            }
            System.out.printf(Locale.ROOT, "%s + %s on lfw5 (%d faces): mean cosine same person %.3f, different %.3f;"
                            + " worst same %.3f, best different %.3f; nearest neighbour right %d / %d%n", name,
                    embedder.modelId(), total, same / ns, different / nd, worstSame, bestDifferent, nearestRight, total);
            // Scale-free (dlib's unit descriptors sit in a narrow cone, fr_feature's do not): every same-person
            // pair closer than every different-person pair.
            assertTrue(worstSame > bestDifferent, "same-person pairs must all be closer than different-person pairs");
            assertTrue(nearestRight >= total - 1, "nearest neighbour right for " + nearestRight + " of " + total);
        }
    }

    @Test
    void separatesPeopleAfterYunet() throws IOException {
        DeepModels.facepluginOrSkip();
        separates("yunet", DeepModels.yunetOrSkip());
    }

    @Test
    void separatesPeopleAfterUltraface() throws IOException {
        separates("ultraface", DeepModels.ultrafaceOrSkip());
    }

    @Test
    void aFaceWithoutLandmarksIsRefused() {
        DeepModels.facepluginOrSkip();
        try (OnnxEmbedder embedder = OnnxEmbedder.fromPackage()) {
            Mat frame = new Mat(120, 120, org.opencv.core.CvType.CV_8UC3);
            DetectedFace haarBox = new DetectedFace(new Rect(10, 10, 80, 80), null, 1f);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> embedder.embed(frame, haarBox));
            assertTrue(e.getMessage().contains("landmarks"));
        }
    }
}
