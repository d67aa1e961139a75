package org.privface.agent.detect;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Builds the configured detector: {@code haar}, {@code yunet} or {@code ultraface} (docs/face-stack.md). */
public final class FaceFinders {
    private static final Logger LOG = LoggerFactory.getLogger(FaceFinders.class);

    public enum Kind {
        HAAR, YUNET, ULTRAFACE;

        public static Kind parse(String name) {
            try {
                return valueOf(name.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException | NullPointerException e) {
                throw new IllegalArgumentException("unknown detector '" + name + "'; known: "
                        + Arrays.toString(values()).toLowerCase(Locale.ROOT));
            }
        }
    }

    /** The cascade's settings. */
    public record Haar(String cascade, double scaleFactor, int minNeighbors, int minFaceSize) {
    }

    private FaceFinders() {
    }

    /**
     * @param yunetModel     YuNet's path; null looks in FACE_MODELS. When YuNet is asked for but
     *                       absent (a fresh machine), the packaged UltraFace runs instead, logged
     * @param score          a deep detector's score threshold; null for its default
     * @param maxDetectWidth Haar and YuNet scan wider frames at this width; 0 at full resolution.
     *                       UltraFace always runs at 320×240
     */
    public static FaceFinder create(String kind, Haar haar, String yunetModel, Double score, int maxDetectWidth) {
        return switch (Kind.parse(kind)) {
            case HAAR -> new FaceDetector(haar.cascade(), haar.scaleFactor(), haar.minNeighbors(), haar.minFaceSize(),
                    maxDetectWidth);
            case YUNET -> {
                Optional<Path> model = FaceModels.findYunet(yunetModel);
                if (model.isPresent()) {
                    yield new YuNetDetector(model.get(), score == null ? YuNetDetector.DEFAULT_SCORE : score.floatValue(),
                            maxDetectWidth);
                }
                LOG.warn("YuNet model not found under {} (set agent.yunet-model or FACE_MODELS); using the packaged UltraFace detector",
                        FaceModels.sharedModels().resolve(FaceModels.YUNET_FILE).toAbsolutePath());
                yield ultraface(score);
            }
            case ULTRAFACE -> ultraface(score);
        };
    }

    private static FaceFinder ultraface(Double score) {
        return UltraFaceDetector.fromPackage(score == null ? UltraFaceDetector.DEFAULT_SCORE : score.floatValue());
    }
}
