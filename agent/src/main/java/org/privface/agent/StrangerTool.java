package org.privface.agent;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.detect.YuNetDetector;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.embed.FaceEmbedders;
import org.privface.agent.publish.PerturbedRecords;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.wire.FaceRecordFiles;
import org.privface.wire.avro.PerturbedFace;

/**
 * Releases a public face set (lfw-public, or an operator's own public set; never a site's faces)
 * the way a site releases its faces: YuNet, the site's embedding network, and the EMBEDDING
 * mechanism at the site's mode and ε, each face once. The records, labelled with the public
 * person's folder name, go to a file the recognizer reads as {@code recognizer.strangers-file} to
 * calibrate its open-set threshold (docs/recognizer.md, "Open set").
 *
 * <pre>
 *   --faces DIR --site SITE --network dlib|fr_feature --mode sign-cap --epsilon 20 --out strangers.bin
 * </pre>
 */
public final class StrangerTool {
    private StrangerTool() {
    }

    public static void main(String[] args) throws Exception {
        Path faces = null;
        Path out = null;
        String site = null;
        String network = FaceEmbedders.DLIB;
        String mode = "sign-cap";
        double epsilon = Double.NaN;
        for (int i = 0; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--faces" -> faces = Path.of(value);
                case "--out" -> out = Path.of(value);
                case "--site" -> site = value;
                case "--network" -> network = value;
                case "--mode" -> mode = value;
                case "--epsilon" -> epsilon = Double.parseDouble(value);
                default -> throw new IllegalArgumentException("unknown argument " + args[i] + "; see the class doc");
            }
            i++;
        }
        if (faces == null || out == null || site == null || Double.isNaN(epsilon)) {
            throw new IllegalArgumentException("--faces, --site, --epsilon and --out are required");
        }
        EmbeddingMechanism mechanism = EmbeddingMechanism.publicPreset(network, EmbeddingMechanism.Noise.parse(mode),
                epsilon);
        Path yunet = FaceModels.findYunet(null).orElseThrow(() -> new IllegalStateException("YuNet not found under "
                + FaceModels.sharedModels().toAbsolutePath() + " (set FACE_MODELS)"));
        LabelledFaces embedded;
        try (FaceFinder detector = new YuNetDetector(yunet, YuNetDetector.DEFAULT_SCORE, 0);
             FaceEmbedder embedder = FaceEmbedders.create(network)) {
            embedded = FaceDatasets.embedded(faces, detector, embedder);
        }
        List<PerturbedFace> records = new ArrayList<>(embedded.size());
        Instant now = Instant.now();
        // The agent's own record builder: the records are written to a file, not sent.
        PerturbedRecords builder = new PerturbedRecords(site);
        for (int i = 0; i < embedded.size(); i++) {
            String person = embedded.names().get(embedded.labels()[i]);
            records.add(builder.of(mechanism.perturb(embedded.faces()[i]), "public-set", "public-" + (i + 1), now, person));
        }
        FaceRecordFiles.write(out, records);
        System.out.printf("%d faces of %d public people, each released once at ε %s per face (%s, %s) -> %s%n",
                records.size(), embedded.names().size(), mechanism.epsilonPerFace(), network, mode, out);
    }
}
