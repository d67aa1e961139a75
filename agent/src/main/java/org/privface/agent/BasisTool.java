package org.privface.agent;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceDetector;
import org.privface.privacy.EigenBasis;
import org.privface.privacy.EigenStats;

/**
 * Builds eigenbases on gateways. Faces are read from folder-per-person images and found with the
 * default cascade; nothing but statistics or the basis is written. A basis a gateway loads with
 * {@code agent.basis-fit: public-file} must come from faces it does not enroll: its clamp ranges
 * and clip radii are read off {@code --faces} ({@code fit}) or {@code --bounds-faces}
 * ({@code merge}), so both must be such a set (docs/privacy.md, "Who a stated ε covers").
 *
 * <pre>
 *   fit           --faces DIR --nc N --out basis.bin
 *   fit-partition --faces DIR --out part.stats
 *   merge         --nc N --bounds-faces DIR --out basis.bin part.stats [part.stats ...]
 * </pre>
 */
public final class BasisTool {
    private BasisTool() {
    }

    public static void main(String[] args) throws Exception {
        org.privface.agent.dataset.BadDataset.exitOnError(() -> run(args));
    }

    /** The command; a bad data-set folder ends it with a message naming the file (exit status 2), not a stack trace. */
    static void run(String[] args) throws Exception {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: fit | fit-partition | merge (see class doc)");
        }
        String cmd = args[0];
        Path faces = null;
        Path boundsFaces = null;
        Path out = null;
        int nc = 128;
        List<Path> parts = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "--faces" -> faces = Path.of(args[++i]);
                case "--bounds-faces" -> boundsFaces = Path.of(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                case "--nc" -> nc = Integer.parseInt(args[++i]);
                default -> parts.add(Path.of(args[i]));
            }
        }
        if (out == null) {
            throw new IllegalArgumentException("--out is required");
        }
        FaceDetector detector = FaceDetector.defaults();
        switch (cmd) {
            case "fit" -> {
                LabelledFaces f = FaceDatasets.detected(required(faces, "--faces"), detector);
                EigenBasis b = EigenBasis.fit(f.faces(), nc, FaceCrops.WIDTH, FaceCrops.HEIGHT);
                b.save(out);
                System.out.printf("basis %s: %d components from %d faces -> %s%n", b.id(), nc, f.size(), out);
            }
            case "fit-partition" -> {
                LabelledFaces f = FaceDatasets.detected(required(faces, "--faces"), detector);
                EigenStats.of(f.faces(), FaceCrops.WIDTH, FaceCrops.HEIGHT).save(out);
                System.out.printf("partition statistics of %d faces -> %s%n", f.size(), out);
            }
            case "merge" -> {
                if (parts.isEmpty()) {
                    throw new IllegalArgumentException("merge needs at least one partition file");
                }
                EigenStats merged = EigenStats.load(parts.get(0));
                for (Path p : parts.subList(1, parts.size())) {
                    merged = merged.merge(EigenStats.load(p));
                }
                LabelledFaces bounds = FaceDatasets.detected(required(boundsFaces, "--bounds-faces"), detector);
                EigenBasis b = merged.basis(nc, bounds.faces());
                b.save(out);
                System.out.printf("basis %s: %d components from %d faces in %d partitions -> %s%n", b.id(), nc,
                        merged.count(), parts.size(), out);
            }
            default -> throw new IllegalArgumentException("unknown command " + cmd + "; use fit, fit-partition or merge");
        }
    }

    private static Path required(Path p, String flag) {
        if (p == null) {
            throw new IllegalArgumentException(flag + " is required");
        }
        return p;
    }
}
