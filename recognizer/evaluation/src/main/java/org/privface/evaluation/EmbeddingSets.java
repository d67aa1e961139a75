package org.privface.evaluation;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.privface.agent.dataset.BadDataset;
import org.privface.agent.dataset.DatasetFolder;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.detect.YuNetDetector;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.embed.FaceEmbedders;

/**
 * The embeddings of a folder-per-person data set as the agent computes them (YuNet → alignment →
 * the network {@code model} names in {@link FaceEmbedders}, through {@link FaceDatasets#embedded}), cached in
 * {@code <cache>/<set>-<model>.emb} after the first run.
 */
public final class EmbeddingSets {
    private EmbeddingSets() {
    }

    public static EmbeddingCache load(Path datasets, String set, Path cache, String model) throws IOException {
        Path file = cache.resolve(set + "-" + model + ".emb");
        if (Files.exists(file)) {
            return EmbeddingCache.read(file);
        }
        Path root = datasets.resolve(set);
        if (!Files.isDirectory(root)) {
            throw new BadDataset("data set " + set + " not found under " + datasets.toAbsolutePath()
                    + " (set FACE_DATASETS or --datasets)");
        }
        DatasetFolder listing = DatasetFolder.people(root);
        System.out.printf("embedding %s with %s (30-100 ms a face; cached in %s) ...%n", root, model, file);
        LabelledFaces faces;
        Path yunet = FaceModels.findYunet(null).orElseThrow(() -> new IOException("YuNet not found under "
                + FaceModels.sharedModels().toAbsolutePath() + " (set FACE_MODELS)"));
        // The bar counts the listing the loader works through, one step an image, face or not.
        Progress progress = new Progress(System.out, listing.images().size());
        try (FaceFinder detector = new YuNetDetector(yunet, YuNetDetector.DEFAULT_SCORE, 0);
             FaceEmbedder embedder = FaceEmbedders.create(model)) {
            faces = FaceDatasets.embedded(listing, detector, embedder, f -> progress.step("images read"));
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException("cannot embed " + root + ": " + e.getMessage(), e);
        }
        System.out.printf("%d images: %d faces embedded, %d left out%n", listing.images().size(), faces.size(),
                faces.skipped().size());
        List<String> files = new ArrayList<>();
        for (String origin : faces.origins()) {
            files.add(Path.of(origin).getFileName().toString());
        }
        EmbeddingCache c = new EmbeddingCache(faces.faces(), faces.labels(), faces.names(), files);
        c.write(file);
        return c;
    }
}
