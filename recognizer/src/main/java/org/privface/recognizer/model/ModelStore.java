package org.privface.recognizer.model;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Trained models on disk, one folder per version: {@code <root>/<site>/<basis>/<mechanism>/<version>/}
 * holding the network and {@code model.properties} (labels, training size and accuracy, time).
 * A version is written to a temporary folder and renamed into place, so a crash mid-write never
 * leaves a half model that a restart would load.
 */
public final class ModelStore {
    private static final Logger LOG = LoggerFactory.getLogger(ModelStore.class);
    private static final String META = "model.properties";

    private final Path root;
    private final String instanceId;

    public ModelStore(Path root) throws IOException {
        this(root, "unnamed");
    }

    /** @param instanceId recorded as {@code trainedBy} in every version this replica writes */
    public ModelStore(Path root, String instanceId) throws IOException {
        this.root = Files.createDirectories(root);
        this.instanceId = instanceId;
    }

    public void save(TrainedModel m) throws IOException {
        Path dir = keyDir(m.key());
        Files.createDirectories(dir);
        Path tmp = Files.createTempDirectory(dir, ".incoming-");
        m.mlp().save(tmp);
        Properties p = new Properties();
        p.setProperty("version", m.version());
        p.setProperty("labels", String.join(",", m.labels()));
        p.setProperty("trainingSize", Integer.toString(m.trainingSize()));
        p.setProperty("trainedAt", m.trainedAt().toString());
        p.setProperty("trainingAccuracy", Double.toString(m.trainingAccuracy()));
        p.setProperty("validationAccuracy", Double.toString(m.validationAccuracy()));
        m.choice().store(p);
        if (m.calibration() != null) {
            m.calibration().store(p);
        }
        p.setProperty("trainedBy", instanceId);
        if (m.openSet() != null) {
            for (int k = 0; k < m.labels().size(); k++) {
                p.setProperty("openSet." + k, m.openSet().encode(k));
            }
        }
        try (OutputStream out = Files.newOutputStream(tmp.resolve(META))) {
            p.store(out, "privface recognizer model");
        }
        Files.move(tmp, dir.resolve(m.version()), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    /** The newest readable version of every key; unreadable versions are skipped with a warning. */
    public List<TrainedModel> loadLatest() throws IOException {
        List<TrainedModel> out = new ArrayList<>();
        for (Path keyDir : keyDirs()) {
            List<Path> versions;
            try (Stream<Path> s = Files.list(keyDir)) {
                versions = s.filter(p -> Files.isRegularFile(p.resolve(META)))
                        .sorted(Comparator.comparing((Path p) -> p.getFileName().toString()).reversed()).toList();
            }
            for (Path v : versions) {
                try {
                    out.add(read(keyOf(keyDir), v));
                    break;
                } catch (IOException | RuntimeException e) {
                    LOG.warn("skipping unreadable model {}: {}", v, e.toString());
                }
            }
        }
        return out;
    }

    /** The newest stored version name of every key, without loading anything. */
    public java.util.Map<ModelKey, String> latestVersions() throws IOException {
        java.util.Map<ModelKey, String> out = new java.util.HashMap<>();
        for (Path keyDir : keyDirs()) {
            try (Stream<Path> s = Files.list(keyDir)) {
                s.filter(p -> Files.isRegularFile(p.resolve(META))).map(p -> p.getFileName().toString())
                        .max(Comparator.naturalOrder()).ifPresent(v -> out.put(keyOf(keyDir), v));
            }
        }
        return out;
    }

    /**
     * Deletes every stored version of a key whose labels include any of {@code labels} (an erased
     * person's; docs/operations.md, "Forgetting a person"); returns the versions deleted.
     */
    public List<String> deleteVersionsWith(ModelKey key, java.util.Collection<String> labels) throws IOException {
        List<String> deleted = new ArrayList<>();
        for (Path v : versionDirs(key)) {
            Properties p = meta(v);
            if (Arrays.stream(p.getProperty("labels", "").split(",")).anyMatch(labels::contains)) {
                deleteTree(v);
                deleted.add(v.getFileName().toString());
            }
        }
        return deleted;
    }

    /** Keeps the newest {@code keep} versions of a key and deletes the older ones; returns those deleted. */
    public List<String> prune(ModelKey key, int keep) throws IOException {
        if (keep < 1) {
            throw new IllegalArgumentException("recognizer.model-versions-kept must be at least 1, was " + keep);
        }
        List<Path> all = versionDirs(key);
        List<String> deleted = new ArrayList<>();
        for (Path v : all.subList(Math.min(keep, all.size()), all.size())) {
            deleteTree(v);
            deleted.add(v.getFileName().toString());
        }
        return deleted;
    }

    /** Every version folder of a key, newest first. */
    private List<Path> versionDirs(ModelKey key) throws IOException {
        Path dir = keyDir(key);
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> Files.isRegularFile(p.resolve(META))).sorted(Comparator.reverseOrder()).toList();
        }
    }

    /** Renames the version out of the way first, so no reader loads a half-deleted one, then deletes it. */
    private static void deleteTree(Path v) throws IOException {
        Path gone = v.resolveSibling(".deleting-" + v.getFileName());
        Files.move(v, gone, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        try (Stream<Path> s = Files.walk(gone)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    /** One stored version. */
    public TrainedModel load(ModelKey key, String version) throws IOException {
        return read(key, keyDir(key).resolve(version));
    }

    /** Every stored version's metadata for one key, newest first, without loading networks. */
    public List<Properties> history(ModelKey key) throws IOException {
        Path dir = keyDir(key);
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<Properties> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path v : s.filter(p -> Files.isRegularFile(p.resolve(META))).sorted(Comparator.reverseOrder()).toList()) {
                out.add(meta(v));
            }
        }
        return out;
    }

    private TrainedModel read(ModelKey key, Path dir) throws IOException {
        Properties p = meta(dir);
        MlpModel mlp = MlpModel.load(dir);
        List<String> labels = Arrays.asList(p.getProperty("labels").split(","));
        OpenSet openSet = null;
        if (p.getProperty("openSet.0") != null) { // openSet.<class index>: radius;centroid
            String[] lines = new String[labels.size()];
            for (int k = 0; k < lines.length; k++) {
                lines[k] = p.getProperty("openSet." + k);
            }
            openSet = OpenSet.decode(lines);
        }
        return new TrainedModel(key, p.getProperty("version"), mlp, labels,
                Integer.parseInt(p.getProperty("trainingSize")), Instant.parse(p.getProperty("trainedAt")),
                Double.parseDouble(p.getProperty("trainingAccuracy")),
                ModelChoice.load(p), openSet, OpenSetCalibration.load(p));
    }

    private static Properties meta(Path dir) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(dir.resolve(META))) {
            p.load(in);
        }
        return p;
    }

    private Path keyDir(ModelKey key) {
        return root.resolve(key.site()).resolve(key.basisId()).resolve(key.mechanism());
    }

    private ModelKey keyOf(Path keyDir) {
        Path rel = root.relativize(keyDir);
        return new ModelKey(rel.getName(0).toString(), rel.getName(1).toString(), rel.getName(2).toString());
    }

    private List<Path> keyDirs() throws IOException {
        try (Stream<Path> s = Files.walk(root, 3)) {
            return s.filter(p -> root.relativize(p).getNameCount() == 3 && Files.isDirectory(p)).toList();
        }
    }
}
