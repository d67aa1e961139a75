package org.privface.evaluation.deep;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.privface.evaluation.EmbeddingCache;
import org.privface.evaluation.EmbeddingSets;
import org.privface.evaluation.EvalOptions;
import org.privface.privacy.embedding.EmbeddingBasis;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.privacy.embedding.EmbeddingMechanism.Preset;

/**
 * Issue 16's frontier on deep embeddings: every face, enrolled or queried, is released once
 * through an {@link EmbeddingMechanism} at the stated per-face ε, PEEP's protocol (stratified
 * 70/30 split, weighted F1, several seeds), beside the pixel families of {@code frontier.FrontierEvaluation}.
 * Families:
 * <ul>
 *   <li>{@code none}: the raw embedding, no privacy;</li>
 *   <li>{@code public-sign-cap}, {@code public-lap-l1}, {@code public-gauss-l2}: the agent's modes
 *       on the bundled public basis at the agent's own {@link Preset}s (every face gets its ε);</li>
 *   <li>{@code enrollment-sign-cap}, {@code enrollment-lap-l1}: the same on Fisher directions fitted
 *       on the training split (the gateway's enrollment); ε holds for query faces only;</li>
 *   <li>{@code reference-float-cap}: PrivUnit's continuous cap with a floating-point sampler
 *       ({@link FloatCap}), evaluation only: its ε is that of the ideal mechanism.</li>
 * </ul>
 * Recognition is the nearest class mean by cosine on the released vectors (the MLP is compared at
 * {@code --mlp-eps}). The presets are checked against a selection on {@code lfw-public} alone
 * (basis fitted on half its people, scored on the other half), written to deep-selection.csv.
 * Open set ({@link DeepOpenSet}): strangers from {@code lfw-public} (half of the people calibrate the
 * threshold at FPIR 1%, the other half measure it, with its 95% interval), FNIR at that threshold,
 * the MLP and the nearest class mean and which the recognizer would serve, without privacy and at
 * {@code --recommended-eps}.
 *
 * <pre>mvn -B -q -Pdeep-eval install -DskipTests [-Deval.args="--sets lfw5 --seeds 1"]</pre>
 * {@code --frontier false --selection false} runs the open set alone.
 * With {@code --models fr_feature,dlib} it compares the embedding networks instead ({@link ModelComparison});
 * with {@code --answer dlib,fr_feature} it runs the answer release instead ({@link DeepAnswer}); with
 * {@code --large-galleries dlib} its open-set score rules and tracks ({@link LargeGalleries}).
 */
public final class DeepFrontierEvaluation {
    private DeepFrontierEvaluation() {
    }

    public static void main(String[] args) throws Exception {
        org.privface.agent.dataset.BadDataset.exitOnError(() -> run(args));
    }

    /** The command; a bad data-set folder ends it with a message naming the file (exit status 2), not a stack trace. */
    static void run(String[] args) throws Exception {
        Map<String, String> opt = EvalOptions.parse(Map.ofEntries(
                Map.entry("--sets", "lfw5,orl,lfw139"), Map.entry("--public", "lfw-public"),
                Map.entry("--seeds", "3"), Map.entry("--eps", "1,2,5,10,20,50,100"),
                Map.entry("--datasets", System.getProperty("privface.datasets", "../shared/datasets")),
                Map.entry("--cache", "target/embeddings"), Map.entry("--model", EmbeddingBasis.DEFAULT_MODEL),
                Map.entry("--out", "docs/results"), Map.entry("--fit-basis", ""),
                Map.entry("--recommended-eps", "20"), Map.entry("--mlp-eps", "20"), Map.entry("--selection", "true"),
                Map.entry("--models", ""), Map.entry("--frontier", "true"), Map.entry("--answer", ""),
                // DeepAnswer's: the calibration rule shipped and those compared, the preset grid, the decoder comparison
                Map.entry("--calibration", "wilson"), Map.entry("--calibrations", "estimate,wilson,people"),
                Map.entry("--ks", DeepAnswer.KS), Map.entry("--radii", DeepAnswer.RADII),
                Map.entry("--decoder-eps", "5,10,20"), Map.entry("--decoder-sets", "lfw5,orl"),
                Map.entry("--evaluate", "true"), Map.entry("--suffix", ""),
                // LargeGalleries' (issue 45): the open-set score rules compared, faces per track, the presets chosen
                Map.entry("--large-galleries", ""), Map.entry("--scores", "cosine,tnorm,margin,znorm"),
                Map.entry("--track", "2,3,5"), Map.entry("--public-gallery", ""),
                Map.entry("--track-calibration", "faces"), Map.entry("--templates", "releases"), Map.entry("--template-eps", ""), Map.entry("--enroll-releases", "1"), Map.entry("--selection-csv", "docs/results/deep-answer-selection.csv")),
                args);
        Path cache = Path.of(opt.get("--cache"));
        Path datasets = Path.of(opt.get("--datasets"));
        String model = opt.get("--model");
        if (!opt.get("--models").isEmpty()) { // issue 19: the networks side by side (ModelComparison)
            ModelComparison.run(List.of(opt.get("--models").split(",")), opt, datasets, cache, Path.of(opt.get("--out")));
            return;
        }
        if (!opt.get("--large-galleries").isEmpty()) { // issue 45: open-set scores and tracks (LargeGalleries)
            LargeGalleries.run(opt, datasets, cache, Path.of(opt.get("--out")));
            return;
        }
        if (!opt.get("--answer").isEmpty()) { // issue 29: the answer family for the networks listed (DeepAnswer)
            DeepAnswer.run(opt, datasets, cache, Path.of(opt.get("--out")));
            return;
        }
        EmbeddingCache pub = EmbeddingSets.load(datasets, opt.get("--public"), cache, model);
        if (!opt.get("--fit-basis").isEmpty()) {
            EmbeddingBasis b = DeepFrontier.fitPublic(pub, model, opt.get("--public"), DeepFrontier.BASIS_DIRECTIONS);
            Path file = Path.of(opt.get("--fit-basis"));
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.write(file, b.toBytes());
            System.out.printf("wrote %s (%d bytes), id %s%n", file, b.toBytes().length, b.id());
            return;
        }
        Path out = Path.of(opt.get("--out"));
        Files.createDirectories(out);
        double[] eps = Arrays.stream(opt.get("--eps").split(",")).mapToDouble(Double::parseDouble).toArray();
        DeepFrontier e = new DeepFrontier(EmbeddingBasis.bundled(model),
                Integer.parseInt(opt.get("--seeds")), eps, out);
        long t0 = System.nanoTime();
        if (Boolean.parseBoolean(opt.get("--selection"))) {
            e.selection(pub, model);
        }
        Map<String, EmbeddingCache> sets = new LinkedHashMap<>();
        for (String s : opt.get("--sets").split(",")) {
            sets.put(s, EmbeddingSets.load(datasets, s, cache, model));
        }
        if (Boolean.parseBoolean(opt.get("--frontier"))) { // false: the open set alone
            List<DeepFrontier.Row> rows = e.frontier(sets, Double.parseDouble(opt.get("--mlp-eps")));
            e.scaling(rows, Double.parseDouble(opt.get("--recommended-eps")));
        }
        e.openSet(sets, pub, Double.parseDouble(opt.get("--recommended-eps")));
        System.out.printf("deep frontier done in %.0f s; results in %s%n", (System.nanoTime() - t0) / 1e9, out);
    }
}
