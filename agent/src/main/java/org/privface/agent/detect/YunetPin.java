package org.privface.agent.detect;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks YuNet's SHA-256 against {@link FaceModels#YUNET_SHA256} while the agent starts, before
 * any camera or enrollment runs: a mounted model that is not the measured one (a different
 * version, a damaged ConfigMap) stops the start-up with an error that names the file and both
 * hashes, instead of failing later on the pipeline's thread. A configured path that does not exist
 * stops it too; with no path configured and no file under FACE_MODELS, the packaged UltraFace runs
 * (logged by {@link FaceFinders}). Built eagerly from the settings by {@code org.privface.agent.ModelPins}.
 */
public final class YunetPin {
    private static final Logger LOG = LoggerFactory.getLogger(YunetPin.class);

    private final Optional<Path> checked;

    /**
     * @param detectors  the gateway's detector and each camera's (null entries: a camera without its own)
     * @param yunetModel {@code agent.yunet-model}, or null to look under FACE_MODELS
     */
    public YunetPin(List<String> detectors, String yunetModel) {
        boolean wanted = detectors.stream().anyMatch(d -> d != null && isYunet(d));
        checked = wanted ? check(yunetModel) : Optional.empty();
    }

    /** The checked model, empty when no detector asks for YuNet or none is installed. */
    public Optional<Path> checked() {
        return checked;
    }

    /** YuNet's file, if configured or present under FACE_MODELS, checked against the pinned hash. */
    static Optional<Path> check(String configured) {
        Optional<Path> model = FaceModels.findYunet(configured);
        model.ifPresent(p -> {
            try {
                FaceModels.verify(p, FaceModels.YUNET_SHA256);
            } catch (IllegalStateException e) {
                throw new IllegalStateException("the agent does not start on this YuNet: " + e.getMessage()
                        + ". Provide face_detection_yunet_2023mar.onnx (OpenCV's model zoo; in k8s the ConfigMap"
                        + " privface-face-models, k8s/README.md \"Face models\"), or choose another detector", e);
            }
            LOG.info("YuNet model {}: SHA-256 {} as pinned", p.toAbsolutePath(), FaceModels.YUNET_SHA256);
        });
        return model;
    }

    private static boolean isYunet(String detector) {
        return FaceFinders.Kind.parse(detector) == FaceFinders.Kind.YUNET;
    }
}
