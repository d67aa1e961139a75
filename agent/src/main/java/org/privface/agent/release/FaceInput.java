package org.privface.agent.release;

import java.util.Optional;
import java.util.function.Supplier;

import org.opencv.core.Mat;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.policy.SitePolicy;

/**
 * What a policy's mechanism takes from one detected face: the grey pixel crop at the mechanism's
 * shape for the pixel families (PEEP, RDP, GAUSSIAN, FISHER), the unit-length deep embedding for
 * {@link Mechanism#EMBEDDING}. The mechanisms themselves see only a vector.
 */
public final class FaceInput {
    private FaceInput() {
    }

    /** The pixel crop's shape a policy's mechanism takes; the EMBEDDING family takes no crop. */
    public static FaceCrops.Shape shape(SitePolicy p) {
        return switch (p.mechanism()) {
            case PEEP -> FaceCrops.Shape.PEEP;
            case RDP -> FaceCrops.Shape.RDP;
            case GAUSSIAN, FISHER -> FaceCrops.Shape.PEEP;
            case EMBEDDING -> throw new IllegalArgumentException("EMBEDDING takes the deep embedding, not a pixel crop");
        };
    }

    public static boolean needsEmbedding(SitePolicy p) {
        return p.mechanism() == Mechanism.EMBEDDING;
    }

    /**
     * The face's input, to be taken only once its track's budget grants a release: a crop is
     * cheap and already cut (it decides whether the face counts), but an embedding costs about
     * 12 ms, so it is computed on {@code get()}, never for a withheld face.
     *
     * @param frame    the colour frame (embedding)
     * @param grey      the same frame in grey (pixel crops); may be the frame itself when it is grey
     * @param embedding the face's embedding, computed on first use ({@link #embedding}), so pixel
     *                  policies never load the network
     * @return empty when the face gives no input: a box that does not fit in the frame
     */
    public static Optional<Supplier<double[]>> of(SitePolicy p, Mat grey, DetectedFace face, Supplier<double[]> embedding) {
        if (needsEmbedding(p)) {
            return Optional.of(embedding);
        }
        return FaceCrops.crop(grey, face.box(), shape(p)).map(v -> () -> v);
    }

    /**
     * The face's embedding, computed at most once: appearance linking and the EMBEDDING release
     * both ask for the same face's vector, and a network pass costs 15–30 ms on the gateway.
     */
    public static Supplier<double[]> embedding(Mat frame, DetectedFace face, Supplier<FaceEmbedder> embedder) {
        return once(() -> embedder.get().embed(frame, face));
    }

    /** {@code s}'s value, computed on the first call only (one face's embedding, its linking). */
    static <T> Supplier<T> once(Supplier<T> s) {
        return new Supplier<>() {
            private T value;
            private boolean done;

            @Override
            public T get() {
                if (!done) {
                    value = s.get();
                    done = true;
                }
                return value;
            }
        };
    }
}
