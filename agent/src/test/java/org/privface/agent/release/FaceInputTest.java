package org.privface.agent.release;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import org.opencv.core.Mat;
import org.opencv.imgcodecs.Imgcodecs;
import org.privface.agent.detect.DeepModels;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.YuNetDetector;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.embed.OnnxEmbedder;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.policy.PolicyOverride;
import org.privface.agent.policy.SitePolicy;

/** The mechanism's input from one real detected face: a crop for the pixel families, the embedding (only on demand) for EMBEDDING. */
class FaceInputTest {
    @Test
    void pixelPoliciesTakeTheCropAndEmbeddingPoliciesTheUnitEmbeddingOnlyWhenAsked() throws Exception {
        YuNetDetector yunet = DeepModels.yunetOrSkip();
        DeepModels.facepluginOrSkip();
        Path file = DeepModels.images(DeepModels.datasetOrSkip("lfw5"), 1).get(0);
        Mat frame = Imgcodecs.imread(file.toString(), Imgcodecs.IMREAD_COLOR);
        Mat grey = FaceCrops.grey(frame);
        DetectedFace face = yunet.detect(frame).get(0);

        SitePolicy peep = new SitePolicy(Mechanism.PEEP, "l1-clip", 8, "once", Duration.ofMinutes(10), false);
        SitePolicy rdp = new SitePolicy(Mechanism.RDP, "strict", 8, "once", Duration.ofMinutes(10), false);
        SitePolicy embedding = new SitePolicy(Mechanism.EMBEDDING, PolicyOverride.defaultMode(Mechanism.EMBEDDING), 8, "once",
                Duration.ofMinutes(10), false);
        AtomicInteger made = new AtomicInteger();
        try (OnnxEmbedder embedder = OnnxEmbedder.fromPackage()) {
            Supplier<FaceEmbedder> counted = () -> {
                made.incrementAndGet();
                return embedder;
            };
            Supplier<double[]> lazy = FaceInput.embedding(frame, face, counted);
            assertEquals(FaceCrops.Shape.PEEP.pixels(), FaceInput.of(peep, grey, face, lazy).orElseThrow().get().length);
            assertEquals(FaceCrops.Shape.RDP.pixels(), FaceInput.of(rdp, grey, face, lazy).orElseThrow().get().length);
            assertEquals(0, made.get(), "pixel policies never load the network");

            Optional<Supplier<double[]>> in = FaceInput.of(embedding, null, face, lazy);
            assertEquals(0, made.get(), "nothing is embedded before the budget grants a release");
            double[] v = in.orElseThrow().get();
            assertEquals(1, made.get());
            assertSame(v, lazy.get(), "linking and the release share one network pass per face");
            assertEquals(1, made.get());
            assertEquals(embedder.dimension(), v.length);
            double norm = 0;
            for (double x : v) {
                norm += x * x;
            }
            assertEquals(1.0, Math.sqrt(norm), 1e-9);
        }
    }
}
