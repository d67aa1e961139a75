package org.privface.agent.embed;

import java.util.List;

/**
 * The embedding networks the agent can run, by the name that {@code agent.embedder.network} and the
 * bundled public bases ({@code embedding/<name>-lfwpublic.bin}) use. docs/face-stack.md compares them.
 */
public final class FaceEmbedders {
    /** {@code fr_feature.onnx} (512-d) from the faceplugin npm package, through OpenCV DNN. */
    public static final String FR_FEATURE = "fr_feature";
    /** dlib's ResNet descriptor (128-d) from @vladmandic/face-api's TF.js weights, on DJL. */
    public static final String DLIB = DlibEmbedder.MODEL;
    public static final List<String> NAMES = List.of(FR_FEATURE, DLIB);

    private FaceEmbedders() {
    }

    /** A new embedder (one per thread) of a packaged network; a clear error for an unknown name. */
    public static FaceEmbedder create(String network) {
        return switch (network) {
            case FR_FEATURE -> OnnxEmbedder.fromPackage();
            case DLIB -> DlibEmbedder.fromPackage();
            default -> throw new IllegalArgumentException("unknown embedding network '" + network + "'; known: " + NAMES);
        };
    }
}
