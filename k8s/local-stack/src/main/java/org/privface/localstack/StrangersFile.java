package org.privface.localstack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.detect.YuNetDetector;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.embed.FaceEmbedders;
import org.privface.recognizer.answer.PublicStrangers;

/**
 * Builds the public strangers file a gallery's open-set threshold is calibrated on, from any
 * public folder of people (folder per person; never a site's faces): every image of every other
 * person ({@code --offset 0}: the 1st, 3rd, ...; sorted by name), detected by YuNet and embedded
 * by the gateway's network. The file holds the raw embeddings ({@code raw-<network>}), so one file
 * serves every site of that network: the recognizer projects them into each gallery's space as the
 * gateway projects a query ({@code PublicStrangers.inSpace}). The other half of the people
 * ({@code --offset 1}) is what the demo measures the false-positive rate on, people calibration
 * never saw. Prints the faces and the file's SHA-256, which the recognizer pins
 * ({@code recognizer.answer.strangers-sha256}).
 *
 * <pre>
 *   --faces ../shared/datasets/lfw-public [--network dlib] [--offset 0] --out public-strangers-dlib.txt
 * </pre>
 */
public final class StrangersFile {
    /** The least number of strangers a file should hold: about 20 at the 1 % target set the threshold (20 / 0.01). */
    public static final int MIN_FACES = 2000;

    private StrangersFile() {
    }

    /** What was built. */
    public record Built(Path file, int faces, String space, String sha256) {
    }

    public static void main(String[] args) throws Exception {
        Path faces = null;
        Path out = null;
        String network = FaceEmbedders.DLIB;
        int offset = 0;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--faces" -> faces = Path.of(args[i + 1]);
                case "--out" -> out = Path.of(args[i + 1]);
                case "--network" -> network = args[i + 1];
                case "--offset" -> offset = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i] + "; see the class doc");
            }
        }
        if (faces == null || out == null) {
            throw new IllegalArgumentException("--faces and --out are required");
        }
        Path yunet = FaceModels.findYunet(null).orElseThrow(() -> new IllegalStateException("YuNet not found under "
                + FaceModels.sharedModels().toAbsolutePath() + " (set FACE_MODELS)"));
        double[][] embeddings = embed(faces, network, offset, out.toAbsolutePath().getParent().resolve("strangers-links"), yunet);
        Built b = write(out, faces.getFileName().toString(), network, embeddings);
        System.out.printf("%d faces of public people (every other person from the %s, %s) in space %s -> %s%nsha256 %s%n",
                b.faces(), offset == 0 ? "first" : "second", faces, b.space(), b.file(), b.sha256());
        if (b.faces() < MIN_FACES) {
            System.out.printf("warning: fewer than %d faces: the Wilson rule then names few strangers' faces%n", MIN_FACES);
        }
    }

    /** The raw embeddings of every image of every other person of {@code folder}, from {@code offset}. */
    public static double[][] embed(Path folder, String network, int offset, Path links, Path yunet) throws IOException {
        Files.createDirectories(links);
        List<Path> all;
        try (Stream<Path> s = Files.list(folder)) {
            all = s.filter(Files::isDirectory).sorted().toList();
        }
        for (int i = offset; i < all.size(); i += 2) {
            Path link = links.resolve(all.get(i).getFileName());
            if (!Files.exists(link)) {
                Files.createSymbolicLink(link, all.get(i).toAbsolutePath());
            }
        }
        LabelledFaces embedded;
        try (YuNetDetector detector = new YuNetDetector(yunet, YuNetDetector.DEFAULT_SCORE, 0);
             FaceEmbedder embedder = FaceEmbedders.create(network)) {
            embedded = FaceDatasets.embedded(links, detector, embedder);
        }
        return embedded.faces();
    }

    /** Writes raw embeddings as a strangers file of every space of the network. */
    public static Built write(Path out, String setId, String network, double[][] embeddings) throws IOException {
        PublicStrangers p = new PublicStrangers(setId, PublicStrangers.RAW + network, embeddings);
        p.write(out);
        return new Built(out, embeddings.length, p.basisId(), sha256(out));
    }

    public static String sha256(Path file) throws IOException {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
