package org.privface.evaluation.deep;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.privface.agent.detect.FaceModels;
import org.privface.agent.embed.FaceEmbedders;
import org.privface.evaluation.EmbeddingCache;
import org.privface.evaluation.EmbeddingSets;
import org.privface.evaluation.Figures;
import org.privface.privacy.embedding.EmbeddingBasis;

/**
 * Issue 19's side-by-side of the embedding networks, in one run of the deep frontier
 * ({@code -Pdeep-eval -Deval.args="--models fr_feature,dlib ..."}): for each network, the same
 * sets, seeds and 70/30 folds as {@link DeepFrontier}, with that network's own bundled
 * public basis ({@code embedding/<network>-lfwpublic.bin}):
 * <ul>
 *   <li>weighted F1 of the nearest class mean without privacy, and with the agent's
 *       {@code sign-cap} release of every face at the recommended ε;</li>
 *   <li>open-set FNIR at the threshold that lets 1 % of calibration strangers through, without
 *       privacy and at the recommended ε, with the FPIR measured on other strangers;</li>
 *   <li>the network's files' size and license.</li>
 * </ul>
 * Each network's full frontier and open-set CSVs go to {@code <out>/compare-<network>/}; the table to
 * {@code <out>/model-comparison.csv}. Speed per face is the edge benchmark's (one pinned core).
 */
final class ModelComparison {
    private ModelComparison() {
    }

    /** Files, size and license of a packaged network (the files the agent loads). */
    static String[] provenance(String network) {
        return switch (network) {
            case FaceEmbedders.DLIB -> new String[] {
                    size(FaceModels.faceapiDir(), FaceModels.DLIB_WEIGHTS, FaceModels.DLIB_MANIFEST),
                    "weights public domain (dlib; trained on about 3 million faces: FaceScrub, VGG, web images); "
                            + FaceModels.FACEAPI_PACKAGE + " MIT"};
            case FaceEmbedders.FR_FEATURE -> new String[] {
                    size(FaceModels.facepluginDir(), FaceModels.FEATURE),
                    FaceModels.FACEPLUGIN_PACKAGE + " MIT; weights' origin and training data undocumented"};
            default -> new String[] {"?", "?"};
        };
    }

    private static String size(Path dir, String... files) {
        long bytes = 0;
        for (String f : files) {
            try {
                bytes += Files.size(dir.resolve(f));
            } catch (IOException e) {
                return "absent";
            }
        }
        return String.format(Locale.ROOT, "%.2f MB", bytes / 1e6);
    }

    static void run(List<String> networks, Map<String, String> opt, Path datasets, Path cache, Path out) throws IOException {
        int seeds = Integer.parseInt(opt.get("--seeds"));
        double eps = Double.parseDouble(opt.get("--recommended-eps"));
        List<String> lines = new ArrayList<>();
        lines.add("network,set,people,f1_none,f1_none_sd,f1_sign_cap,f1_sign_cap_sd,epsilon_per_face,fnir_none,fpir_none,"
                + "fnir_sign_cap,fpir_sign_cap,seeds,size,license");
        for (String network : networks) {
            long t0 = System.nanoTime();
            EmbeddingCache pub = EmbeddingSets.load(datasets, opt.get("--public"), cache, network);
            Map<String, EmbeddingCache> sets = new LinkedHashMap<>();
            for (String s : opt.get("--sets").split(",")) {
                sets.put(s, EmbeddingSets.load(datasets, s, cache, network));
            }
            Path dir = out.resolve("compare-" + network);
            Files.createDirectories(dir);
            DeepFrontier e = new DeepFrontier(EmbeddingBasis.bundled(network), seeds, new double[] {eps},
                    dir);
            List<DeepFrontier.Row> rows = e.frontier(sets, Double.NaN);
            List<DeepOpenSet.Row> open = e.openSet(sets, pub, eps);
            String[] prov = provenance(network);
            for (var entry : sets.entrySet()) {
                String set = entry.getKey();
                DeepFrontier.Row none = row(rows, set, "none", 0);
                DeepFrontier.Row cap = row(rows, set, "public-sign-cap", eps);
                double[] openNone = meanOpen(open, set, "none");
                double[] openCap = meanOpen(open, set, "public-sign-cap");
                lines.add(String.format(Locale.ROOT, "%s,%s,%d,%.4f,%.4f,%.4f,%.4f,%s,%.4f,%.4f,%.4f,%.4f,%d,%s,%s", network, set,
                        entry.getValue().classes(), none.mean(), none.sd(), cap.mean(), cap.sd(),
                        Figures.fmt(eps), openNone[0], openNone[1], openCap[0], openCap[1], seeds, prov[0],
                        prov[1].replace(',', ';')));
                System.out.println(lines.get(lines.size() - 1));
            }
            System.out.printf(Locale.ROOT, "%s compared in %.0f s%n", network, (System.nanoTime() - t0) / 1e9);
        }
        Files.write(out.resolve("model-comparison.csv"), lines);
    }

    private static DeepFrontier.Row row(List<DeepFrontier.Row> rows, String set, String family, double eps) {
        return rows.stream().filter(r -> r.set().equals(set) && r.family().equals(family) && r.epsilon() == eps).findFirst()
                .orElseThrow(() -> new IllegalStateException("no " + family + " row for " + set));
    }

    /** Mean FNIR and measured FPIR over the seeds of one family's nearest-class-mean open-set rows. */
    private static double[] meanOpen(List<DeepOpenSet.Row> rows, String set, String family) {
        List<DeepOpenSet.Row> rs = rows.stream().filter(r -> r.set().equals(set) && r.family().equals(family)
                && r.model() == org.privface.recognizer.model.ModelChoice.Served.NCM).toList();
        return new double[] {rs.stream().mapToDouble(DeepOpenSet.Row::fnir).average().orElse(Double.NaN),
                rs.stream().mapToDouble(r -> r.calibration().heldOut().rate()).average().orElse(Double.NaN)};
    }
}
