package org.privface.agent.detect;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Finds the deep face models. None is committed to the project (docs/face-stack.md):
 * <ul>
 *   <li>YuNet comes from a public repository, not a registry: an explicit path from configuration,
 *       else {@code yunet/face_detection_yunet_2023mar.onnx} under {@code FACE_MODELS} (environment
 *       or system property {@code privface.models}), default {@code ../shared/models}.</li>
 *   <li>The faceplugin models (UltraFace detector, 68-point landmarks, 512-d embedding) come from
 *       the npm package {@value #FACEPLUGIN_PACKAGE}, which the agent's build fetches into
 *       {@link #facepluginDir()} (src/main/sh/fetch-models.sh). Each file's SHA-256 is checked
 *       against the pinned value here before it is used.</li>
 *   <li>dlib's face descriptor network (TensorFlow.js weights) comes the same way from
 *       {@value #FACEAPI_PACKAGE}, into {@link #faceapiDir()}.</li>
 * </ul>
 */
public final class FaceModels {
    public static final String YUNET_FILE = "yunet/face_detection_yunet_2023mar.onnx";
    public static final String YUNET_SHA256 = "8f2383e4dd3cfbb4553ea8718107fc0423210dc964f9f4280604804ed2552fa4";
    public static final String FACEPLUGIN_PACKAGE = "faceplugin-face-recognition-js@0.0.1";
    public static final String DETECT = "fr_detect.onnx";
    public static final String LANDMARK = "fr_landmark.onnx";
    public static final String FEATURE = "fr_feature.onnx";
    /** Pinned with the build script; a different file is refused, not loaded. */
    static final Map<String, String> FACEPLUGIN_SHA256 = Map.of(
            DETECT, "6c0256ccd3164f844736a401faf936ec2930764a87ae39442180887d0c5c8854",
            LANDMARK, "f10b0ba1d2a8a099adefede1ebf3733e44fe370715e7303dbeb7f59c02142258",
            FEATURE, "87aacdfe57510db2af90c0251df680e8eec88f122ee94712121d09bcaaaf3581");
    /** dlib's face descriptor network in TensorFlow.js's format, from this npm package (fetch-models.sh). */
    public static final String FACEAPI_PACKAGE = "@vladmandic/face-api@1.7.15";
    public static final String DLIB_MANIFEST = "face_recognition_model-weights_manifest.json";
    public static final String DLIB_WEIGHTS = "face_recognition_model.bin";
    static final Map<String, String> FACEAPI_SHA256 = Map.of(
            DLIB_MANIFEST, "cbaffa501b0b9275a12b63357a6843e7e30c054e1c9151e1a5f879b26e32986b",
            DLIB_WEIGHTS, "b413e420d6840b2775fba32008db6f3cddb07d485967fb42cfcf379c16a8c589");
    /** The pinned SHA-256 of dlib's weights: names the ONNX graph written from them ({@link #modelCache()}). */
    public static final String DLIB_WEIGHTS_SHA256 = FACEAPI_SHA256.get(DLIB_WEIGHTS);
    private static final Map<Path, Boolean> VERIFIED = new ConcurrentHashMap<>();

    private FaceModels() {
    }

    /** YuNet's file if present; a configured path that does not exist is an error, not a silent miss. */
    public static Optional<Path> findYunet(String configured) {
        if (configured != null && !configured.isBlank()) {
            Path p = Path.of(configured);
            if (!Files.isRegularFile(p)) {
                throw new IllegalStateException("agent.yunet-model points to " + p.toAbsolutePath() + ", which does not exist");
            }
            return Optional.of(p);
        }
        Path p = sharedModels().resolve(YUNET_FILE);
        return Files.isRegularFile(p) ? Optional.of(p) : Optional.empty();
    }

    /** {@code FACE_MODELS} (environment, then system property {@code privface.models}), default {@code ../shared/models}. */
    public static Path sharedModels() {
        for (String c : new String[] {System.getenv("FACE_MODELS"), System.getProperty("privface.models")}) {
            if (c != null && !c.isBlank()) {
                return Path.of(c);
            }
        }
        return Path.of("..", "shared", "models");
    }

    /**
     * Where the build unpacks the faceplugin package's {@code model/} folder: {@code FACEPLUGIN_MODELS}
     * (environment, then system property {@code privface.faceplugin}), default
     * {@code ~/.cache/privface/models/faceplugin-face-recognition-js-0.0.1/model}, outside
     * {@code target} so that {@code mvn clean} does not fetch it again.
     */
    public static Path facepluginDir() {
        return npmDir(FACEPLUGIN_PACKAGE, "FACEPLUGIN_MODELS", "privface.faceplugin");
    }

    /** The same for {@value #FACEAPI_PACKAGE}: {@code FACEAPI_MODELS} or {@code privface.faceapi}. */
    public static Path faceapiDir() {
        return npmDir(FACEAPI_PACKAGE, "FACEAPI_MODELS", "privface.faceapi");
    }

    private static Path npmDir(String pkg, String env, String property) {
        for (String c : new String[] {System.getenv(env), System.getProperty(property)}) {
            if (c != null && !c.isBlank()) {
                return Path.of(c);
            }
        }
        return Path.of(System.getProperty("user.home"), ".cache", "privface", "models",
                pkg.replaceFirst("^@", "").replace('/', '-').replace('@', '-'), "model");
    }

    /**
     * Where graphs the agent writes from fetched weights are kept, written once and loaded after
     * (dlib's ONNX graph): {@code FACE_MODEL_CACHE} (environment, then system property
     * {@code privface.model-cache}), default the folder above {@link #faceapiDir()}.
     */
    public static Path modelCache() {
        for (String c : new String[] {System.getenv("FACE_MODEL_CACHE"), System.getProperty("privface.model-cache")}) {
            if (c != null && !c.isBlank()) {
                return Path.of(c);
            }
        }
        Path parent = faceapiDir().toAbsolutePath().getParent();
        return parent == null ? faceapiDir() : parent;
    }

    /** Whether the faceplugin file is where the build puts it (not yet checked). */
    public static boolean hasFaceplugin(String file) {
        return Files.isRegularFile(facepluginDir().resolve(file));
    }

    /** Whether the face-api file is where the build puts it (not yet checked). */
    public static boolean hasFaceapi(String file) {
        return Files.isRegularFile(faceapiDir().resolve(file));
    }

    /** A faceplugin model file, checked against its pinned SHA-256; a clear error when missing or different. */
    public static Path faceplugin(String file) {
        return pinned(FACEPLUGIN_PACKAGE, facepluginDir(), "FACEPLUGIN_MODELS", FACEPLUGIN_SHA256, file);
    }

    /** A face-api model file (dlib's network), checked against its pinned SHA-256. */
    public static Path faceapi(String file) {
        return pinned(FACEAPI_PACKAGE, faceapiDir(), "FACEAPI_MODELS", FACEAPI_SHA256, file);
    }

    private static Path pinned(String pkg, Path dir, String env, Map<String, String> pins, String file) {
        String sha = pins.get(file);
        if (sha == null) {
            throw new IllegalArgumentException("unknown model file " + file + " of " + pkg + "; known: " + pins.keySet());
        }
        Path p = dir.resolve(file);
        if (!Files.isRegularFile(p)) {
            throw new IllegalStateException(file + " not found in " + dir.toAbsolutePath() + ": the agent's build fetches "
                    + pkg + " from the npm registry (agent/src/main/sh/fetch-models.sh); run it, or set " + env);
        }
        verify(p, sha);
        return p;
    }

    /** Refuses a file whose SHA-256 is not the pinned one; each file is hashed once per JVM. */
    public static void verify(Path file, String sha256) {
        Path key = file.toAbsolutePath().normalize();
        if (VERIFIED.containsKey(key)) {
            return;
        }
        String actual = sha256(file);
        if (!actual.equalsIgnoreCase(sha256)) {
            throw new IllegalStateException(file + " has SHA-256 " + actual + ", expected " + sha256
                    + ": a different or damaged model is not loaded");
        }
        VERIFIED.put(key, true);
    }

    static String sha256(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
