package org.privface.agent.embed;

import java.util.List;

/**
 * The embedding networks the agent can run, by the name that {@code agent.embedder.network} and the
 * bundled public bases ({@code embedding/<name>-lfwpublic.bin}) use. docs/face-stack.md compares them.
 */
public final class FaceEmbedders {
    /** {@code fr_feature.onnx} (512-d) from the faceplugin npm package, through OpenCV DNN. */
    public static final String FR_FEATURE = "fr_feature";
    /** dlib's ResNet descriptor (128-d) from @vladmandic/face-api's TF.js weights, as an ONNX graph. */
    public static final String DLIB = DlibEmbedder.MODEL;
    public static final List<String> NAMES = List.of(FR_FEATURE, DLIB);

    /**
     * Cosine at which appearance linking takes two faces for one person, per network: the highest
     * threshold whose miss rate (a person taken for someone new, which over-spends) is at most 0.5 %
     * on same-session pairs (ORL: one sitting, as a gateway sees a person within a window), from
     * {@code docs/results/link-calibration-<network>.csv} ({@code -Plink-eval}); docs/privacy.md gives
     * the rates across photos too. Cosines of different networks are not comparable, so each has its own.
     */
    public static double linkThreshold(String network) {
        return switch (network) {
            case FR_FEATURE -> 0.40;
            case DLIB -> 0.92;
            default -> throw new IllegalArgumentException("unknown embedding network '" + network + "'; known: " + NAMES);
        };
    }

    /**
     * The network appearance linking uses by default, whatever network releases: on the project's
     * calibration it misses fewer same-person pairs at far fewer false links (docs/privacy.md).
     */
    public static final String LINK_NETWORK = FR_FEATURE;

    /**
     * Appearances a person's link score averages, per network ({@code PersonLedger}): chosen with
     * {@link #linkThreshold} on the crowd benchmark ({@code docs/results/crowd-*.csv}).
     */
    public static int linkMatches(String network) {
        return switch (network) {
            case FR_FEATURE -> 1;
            case DLIB -> 2;
            default -> throw new IllegalArgumentException("unknown embedding network '" + network + "'; known: " + NAMES);
        };
    }

    /** Why the packaged network cannot run here (its files are not installed), or empty when it can. */
    public static java.util.Optional<String> missing(String network) {
        boolean present = switch (network) {
            case FR_FEATURE -> org.privface.agent.detect.FaceModels.hasFaceplugin(org.privface.agent.detect.FaceModels.FEATURE);
            case DLIB -> org.privface.agent.detect.FaceModels.hasFaceapi(org.privface.agent.detect.FaceModels.DLIB_WEIGHTS);
            default -> false;
        };
        return present ? java.util.Optional.empty()
                : java.util.Optional.of("the " + network + " embedding network is not installed (the agent's build fetches it)");
    }

    private FaceEmbedders() {
    }

    /** A new embedder (one per thread) of a packaged network; a clear error for an unknown name. */
    public static FaceEmbedder create(String network) {
        return create(network, DlibResNet.Runtime.DEFAULT);
    }

    /** As {@link #create(String)}, dlib's network run by {@code runtime} (fr_feature is always OpenCV DNN). */
    public static FaceEmbedder create(String network, DlibResNet.Runtime runtime) {
        return switch (network) {
            case FR_FEATURE -> OnnxEmbedder.fromPackage();
            case DLIB -> DlibEmbedder.fromPackage(runtime);
            default -> throw new IllegalArgumentException("unknown embedding network '" + network + "'; known: " + NAMES);
        };
    }
}
