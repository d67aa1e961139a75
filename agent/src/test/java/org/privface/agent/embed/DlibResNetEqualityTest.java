package org.privface.agent.embed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.opencv.core.Mat;
import org.opencv.imgcodecs.Imgcodecs;
import org.privface.agent.detect.DeepModels;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.detect.YuNetDetector;

/**
 * dlib's network as an ONNX graph ({@link DlibResNet}, the agent's), on ONNX Runtime and on OpenCV DNN,
 * gives today's descriptors: those of
 * the same layers on DJL/PyTorch ({@link DlibResNetDjl}), cosine ≥ 0.9999 per face. Skipped without the
 * face-api weights (the build fetches them) or, for real faces, lfw5 under FACE_DATASETS.
 */
class DlibResNetEqualityTest {
    static final double MIN_COSINE = 0.9999;

    private static TfjsWeights weights() {
        DeepModels.faceapiOrSkip();
        FaceModels.faceapi(FaceModels.DLIB_WEIGHTS);
        return DlibEmbedder.weights(FaceModels.faceapi(FaceModels.DLIB_MANIFEST));
    }

    /** A face-like synthetic chip: a lit oval, two dark eyes and a mouth, on a gradient; no data set needed. */
    static byte[] syntheticFace() {
        byte[] px = new byte[DlibResNet.SIDE * DlibResNet.SIDE * 3];
        for (int y = 0; y < DlibResNet.SIDE; y++) {
            for (int x = 0; x < DlibResNet.SIDE; x++) {
                double dx = (x - 75) / 45.0;
                double dy = (y - 78) / 60.0;
                double v = dx * dx + dy * dy < 1 ? 190 - 30 * dy : 60 + 0.4 * x;
                if (Math.hypot(x - 55, y - 62) < 7 || Math.hypot(x - 95, y - 62) < 7 || Math.abs(y - 112) < 3 && Math.abs(x - 75) < 18) {
                    v = 40;
                }
                for (int c = 0; c < 3; c++) {
                    px[3 * (y * DlibResNet.SIDE + x) + c] = (byte) Math.max(0, Math.min(255, (int) v - 15 * c));
                }
            }
        }
        return px;
    }

    static double cosine(float[] a, float[] b) {
        double ab = 0;
        double aa = 0;
        double bb = 0;
        for (int i = 0; i < a.length; i++) {
            ab += (double) a[i] * b[i];
            aa += (double) a[i] * a[i];
            bb += (double) b[i] * b[i];
        }
        return ab / Math.sqrt(aa * bb);
    }

    @ParameterizedTest
    @EnumSource(DlibResNet.Runtime.class)
    void syntheticFaceMatchesDjl(DlibResNet.Runtime runtime) {
        TfjsWeights w = weights();
        try (DlibResNet onnx = new DlibResNet(w, runtime); DlibResNetDjl djl = new DlibResNetDjl(w)) {
            byte[] face = syntheticFace();
            float[] a = onnx.forward(face);
            float[] b = djl.forward(face);
            assertEquals(DlibResNet.DIMENSION, a.length);
            double cos = cosine(a, b);
            assertTrue(cos >= MIN_COSINE, "cosine " + cos + " between " + runtime + " and DJL");
            for (int i = 0; i < a.length; i++) {
                assertEquals(b[i], a[i], 1e-3 * (1 + Math.abs(b[i])), "component " + i);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(DlibResNet.Runtime.class)
    void lfw5FacesMatchDjl(DlibResNet.Runtime runtime) throws IOException {
        TfjsWeights w = weights();
        YuNetDetector yunet = DeepModels.yunetOrSkip();
        Path lfw5 = DeepModels.datasetOrSkip("lfw5");
        List<Path> people;
        try (Stream<Path> s = Files.list(lfw5)) {
            people = s.filter(Files::isDirectory).sorted().toList();
        }
        double worst = 1;
        int faces = 0;
        try (DlibEmbedder onnx = new DlibEmbedder(new DlibResNet(w, runtime)); DlibEmbedder djl = new DlibEmbedder(new DlibResNetDjl(w))) {
            for (Path person : people) {
                for (Path f : DeepModels.images(person, 4)) {
                    Mat img = Imgcodecs.imread(f.toString(), Imgcodecs.IMREAD_COLOR);
                    for (DetectedFace face : yunet.detect(img)) {
                        double cos = OnnxEmbedderTest.cosine(onnx.embed(img, face), djl.embed(img, face));
                        worst = Math.min(worst, cos);
                        faces++;
                    }
                    img.release();
                }
            }
        }
        assertTrue(faces >= 10, "only " + faces + " faces found in lfw5");
        assertTrue(worst >= MIN_COSINE, "worst cosine " + worst + " over " + faces + " lfw5 faces");
        System.out.printf("dlib on %s vs DJL: worst cosine %.9f over %d lfw5 faces%n", runtime, worst, faces);
    }
}
