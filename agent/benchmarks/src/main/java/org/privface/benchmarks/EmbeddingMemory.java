package org.privface.benchmarks;

import static org.privface.benchmarks.Host.status;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.opencv.core.Mat;
import org.opencv.imgcodecs.Imgcodecs;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.image.OpenCv;
import org.privface.agent.detect.YuNetDetector;
import org.privface.agent.embed.DlibResNet;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.embed.FaceEmbedders;

/**
 * Where the deep default's resident memory goes: the process's VmRSS (and its peak, VmHWM) and the
 * heap after each step of what the agent loads and runs, in one JVM: OpenCV's natives, YuNet on
 * {@code --images} lfw5 images, dlib's graph built and loaded by {@code --runtime} (OPENCV, the
 * default, or ONNXRUNTIME), and every face found embedded. Run it with the heap flags under study.
 */
public final class EmbeddingMemory {
    private EmbeddingMemory() {
    }

    public static void main(String[] args) throws Exception {
        Path lfw = Path.of(args.length > 0 ? args[0] : "../shared/datasets/lfw5");
        DlibResNet.Runtime runtime = DlibResNet.Runtime.valueOf(args.length > 1 ? args[1] : DlibResNet.Runtime.DEFAULT.name());
        int images = args.length > 2 ? Integer.parseInt(args[2]) : 200;
        step("JVM started");
        OpenCv.load();
        step("OpenCV, OpenBLAS natives loaded");
        YuNetDetector yunet = new YuNetDetector(FaceModels.findYunet(null).orElseThrow(
                () -> new IllegalStateException("YuNet not found under FACE_MODELS")), YuNetDetector.DEFAULT_SCORE, 0);
        List<Mat> frames = new ArrayList<>();
        List<DetectedFace> faces = new ArrayList<>();
        for (Path p : DeepStack.spread(lfw, images)) {
            Mat m = Imgcodecs.imread(p.toString());
            for (DetectedFace f : yunet.detect(m)) {
                frames.add(m);
                faces.add(f);
            }
        }
        step("YuNet ran on " + images + " images (" + faces.size() + " faces)");
        try (FaceEmbedder dlib = FaceEmbedders.create(FaceEmbedders.DLIB, runtime)) {
            step("dlib's graph built and loaded by " + runtime);
            for (int i = 0; i < faces.size(); i++) {
                dlib.embed(frames.get(i), faces.get(i));
            }
            step(faces.size() + " faces embedded");
            System.gc();
            step("after a full GC");
        }
    }

    private static void step(String what) {
        long self = ProcessHandle.current().pid();
        Runtime rt = Runtime.getRuntime();
        System.out.printf(Locale.ROOT, "| %s | %d | %d | %d | %d |%n", what, status(self, "VmRSS") / 1024,
                status(self, "VmHWM") / 1024, (rt.totalMemory() - rt.freeMemory()) >> 20, rt.totalMemory() >> 20);
    }
}
