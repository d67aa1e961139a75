package org.privface.recognizer.model;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import org.privface.recognizer.RecognizerSettings;
import org.privface.wire.avro.PerturbedFace;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Enrollments per model key, and the models trained on them. Training runs on one background
 * thread, so exactly one trainer exists per model in this process; a model is retrained once
 * enrollments stop arriving for the quiet period.
 */
@Singleton
public class ModelRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(ModelRegistry.class);

    private final RecognizerSettings settings;
    private final MeterRegistry metrics;
    private final Map<ModelKey, Enrollments> enrollments = new ConcurrentHashMap<>();
    private final Map<ModelKey, TrainedModel> models = new ConcurrentHashMap<>();
    private final ScheduledExecutorService trainer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "model-trainer");
        t.setDaemon(true);
        return t;
    });
    private final MlpOptions options;
    private final ModelStore store;
    private final StrangerReleases strangers;
    private volatile TrainingStatus training;

    /** A training run in progress: which model, how far, and its latest mean loss. */
    public record TrainingStatus(String model, int enrollments, int epoch, int epochs, float loss, Instant startedAt) {
    }

    private final java.util.function.Predicate<String> trainsSite;

    /**
     * @param ownership which sites this replica trains for. Without a shared model directory every
     *                  replica trains for itself.
     */
    @jakarta.inject.Inject
    public ModelRegistry(RecognizerSettings settings, MeterRegistry metrics,
                         org.privface.recognizer.ingest.PartitionOwnership ownership) throws java.io.IOException {
        this(settings, metrics, settings.getModelDir() == null ? site -> true : ownership::trains);
    }

    ModelRegistry(RecognizerSettings settings, MeterRegistry metrics, java.util.function.Predicate<String> trainsSite)
            throws java.io.IOException {
        this.trainsSite = trainsSite;
        this.settings = settings;
        this.metrics = metrics;
        this.options = switch (settings.getArchitecture()) {
            case "small" -> MlpOptions.small();
            case "peep-paper" -> MlpOptions.peepPaper();
            default -> throw new IllegalArgumentException("recognizer.architecture must be small or peep-paper, was "
                    + settings.getArchitecture());
        };
        this.strangers = settings.getStrangersFile() == null ? StrangerReleases.none()
                : StrangerReleases.load(settings.getStrangersFile());
        if (settings.getStrangersFile() != null) {
            LOG.info("{} public stranger releases from {}", strangers.size(), settings.getStrangersFile());
        }
        this.store = settings.getModelDir() == null ? null : new ModelStore(settings.getModelDir(), settings.getInstanceId());
        if (store != null) {
            for (TrainedModel m : store.loadLatest()) {
                models.put(m.key(), m);
                // Enrollments replay from the topics; retrain only if they differ from what this model saw.
                enrollments.computeIfAbsent(m.key(), k -> new Enrollments()).markTrained(m.trainingSize());
                LOG.info("loaded model {} for {} ({} enrollments, {} people)", m.version(), m.key(), m.trainingSize(),
                        m.labels().size());
            }
        }
        metrics.gauge("privface.recognizer.models", models, Map::size);
        trainer.scheduleWithFixedDelay(this::trainDue, 200, 200, TimeUnit.MILLISECONDS);
        if (store != null) {
            // Replicas that do not train pick up what the trainer stored.
            trainer.scheduleWithFixedDelay(this::refreshFromStore, 1, 1, TimeUnit.SECONDS);
        }
    }

    /** Adds one validated enrollment; a repeated event id is ignored. Returns false for duplicates. */
    public boolean addEnrollment(PerturbedFace f) {
        return addEnrollment(f, null, Instant.now());
    }

    /**
     * Adds one validated enrollment read under its record key (wire/erasure/PersonKeys) at the
     * broker's timestamp. Returns false for duplicates and for records of a person erased after
     * they were written (a gateway that has not tombstoned them yet).
     */
    public boolean addEnrollment(PerturbedFace f, String key, Instant written) {
        // Only person keys name one release; older records' keys (a camera id) are shared by many.
        key = org.privface.wire.erasure.PersonKeys.pseudonymOf(key).isPresent() ? key : null;
        if (erasures.erased(f.getSiteId(), key, written)) {
            return false;
        }
        Enrollments e = enrollments.computeIfAbsent(ModelKey.of(f), k -> new Enrollments());
        return e.add(f, key, written);
    }

    /** A tombstone on the enrollment topic: the record of that key is gone. Returns how many records went. */
    public int removeKey(String site, String key) {
        int n = 0;
        for (Map.Entry<ModelKey, Enrollments> e : enrollments.entrySet()) {
            if (e.getKey().site().equals(site)) {
                n += e.getValue().remove(k -> key.equals(k), Instant.MAX).size();
            }
        }
        return n;
    }

    /** What an erasure did here, for its completion report. */
    public record Erased(int records, java.util.Set<String> labels, int modelsWithdrawn, int versionsDeleted) {
    }

    /**
     * Forgets a person (docs/operations.md, "Forgetting a person"): drops the site's enrollments
     * keyed by the pseudonym and written before {@code before} (and keeps refusing them), withdraws
     * every served model that names a label no enrollment holds any more, deletes every stored
     * version of the site's models that names it, and asks for retraining without it.
     */
    public synchronized Erased erase(String site, String pseudonym, Instant before) throws java.io.IOException {
        erasures.add(site, pseudonym, before);
        int records = 0;
        java.util.Set<String> labels = new java.util.TreeSet<>();
        for (Map.Entry<ModelKey, Enrollments> e : enrollments.entrySet()) {
            if (!e.getKey().site().equals(site)) {
                continue;
            }
            List<PerturbedFace> gone = e.getValue().remove(k -> k != null && k.startsWith(pseudonym + "."), before);
            records += gone.size();
            gone.forEach(f -> labels.add(f.getEnrollmentLabel()));
        }
        // A label still held by a later enrollment (a new consent) stays.
        for (Map.Entry<ModelKey, Enrollments> e : enrollments.entrySet()) {
            if (e.getKey().site().equals(site)) {
                labels.removeAll(e.getValue().labels());
            }
        }
        int withdrawn = 0;
        int deleted = 0;
        java.util.Set<ModelKey> keys = new java.util.HashSet<>(enrollments.keySet());
        keys.addAll(models.keySet());
        if (store != null) {
            keys.addAll(store.latestVersions().keySet());
        }
        for (ModelKey key : keys) {
            if (!key.site().equals(site) || labels.isEmpty()) {
                continue;
            }
            TrainedModel m = models.get(key);
            if (m != null && m.labels().stream().anyMatch(labels::contains)) {
                models.remove(key, m);
                trainer.schedule(m.mlp()::close, 30, TimeUnit.SECONDS);
                withdrawn++;
            }
            if (store != null) {
                deleted += store.deleteVersionsWith(key, labels).size();
            }
            Enrollments e = enrollments.get(key);
            if (e != null && trainsSite.test(site)) {
                e.request();
            }
        }
        LOG.info("erasure at {}: {} enrollment(s) of one person dropped, {} model(s) withdrawn, {} stored version(s)"
                + " deleted, retraining without them", site, records, withdrawn, deleted);
        return new Erased(records, labels, withdrawn, deleted);
    }

    /** Pseudonyms erased per site and when: records written before that are refused on replay. */
    private final ErasedPeople erasures = new ErasedPeople();

    static final class ErasedPeople {
        private final Map<String, Instant> before = new ConcurrentHashMap<>();

        void add(String site, String pseudonym, Instant at) {
            before.merge(site + "/" + pseudonym, at, (a, b) -> a.isAfter(b) ? a : b);
        }

        boolean erased(String site, String key, Instant written) {
            if (key == null) {
                return false;
            }
            int dot = key.indexOf('.');
            Instant at = dot < 0 ? null : before.get(site + "/" + key.substring(0, dot));
            return at != null && !written.isAfter(at);
        }
    }

    public Optional<TrainedModel> model(ModelKey key) {
        return Optional.ofNullable(models.get(key));
    }

    public Map<ModelKey, TrainedModel> models() {
        return Map.copyOf(models);
    }

    /**
     * Asks for a retraining of a model at the next check, even without new enrollments. Returns
     * false when this replica does not train that model or knows no enrollments for it.
     */
    public boolean requestRetrain(ModelKey key) {
        Enrollments e = enrollments.get(key);
        if (e == null || !trainsSite.test(key.site())) {
            return false;
        }
        e.request();
        return true;
    }

    /** The training run in progress, if any. */
    public Optional<TrainingStatus> training() {
        return Optional.ofNullable(training);
    }

    /** Stored versions of a model, newest first (empty without a model directory). */
    public List<java.util.Properties> history(ModelKey key) throws java.io.IOException {
        return store == null ? List.of() : store.history(key);
    }

    public int enrollmentCount(ModelKey key) {
        Enrollments e = enrollments.get(key);
        return e == null ? 0 : e.size();
    }

    private void refreshFromStore() {
        try {
            for (Map.Entry<ModelKey, String> latest : store.latestVersions().entrySet()) {
                ModelKey key = latest.getKey();
                TrainedModel have = models.get(key);
                if (trainsSite.test(key.site()) || (have != null && have.version().compareTo(latest.getValue()) >= 0)) {
                    continue;
                }
                TrainedModel m = store.load(key, latest.getValue());
                models.put(key, m);
                enrollments.computeIfAbsent(key, k -> new Enrollments()).markTrained(m.trainingSize());
                LOG.info("serving {} of {} trained by another replica", m.version(), key);
                if (have != null) {
                    trainer.schedule(have.mlp()::close, 30, TimeUnit.SECONDS);
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            LOG.warn("could not refresh models from {}: {}", settings.getModelDir(), e.toString());
        }
    }

    private void trainDue() {
        Instant now = Instant.now();
        for (Map.Entry<ModelKey, Enrollments> entry : enrollments.entrySet()) {
            if (!trainsSite.test(entry.getKey().site())) {
                continue;
            }
            Enrollments e = entry.getValue();
            if (e.due(now, settings.getQuietPeriod(), settings.getMinEnrollments(), settings.getRetrainAfter(),
                    settings.getRetrainInterval())) {
                try {
                    train(entry.getKey(), e);
                } catch (RuntimeException ex) {
                    LOG.error("training {} failed: {}", entry.getKey(), ex.toString());
                }
            }
        }
    }

    private void train(ModelKey key, Enrollments e) {
        Enrollments.Snapshot snap = e.snapshot();
        if (snap.labels().size() < 2) {
            return;
        }
        Timer.Sample t = Timer.start(metrics);
        training = new TrainingStatus(key.toString(), snap.x().length, 0, options.epochs(), Float.NaN, Instant.now());
        MlpModel mlp;
        try {
            mlp = new MlpTrainer().train(snap.x(), snap.y(), snap.labels().size(), options,
                    (epoch, loss) -> training = new TrainingStatus(key.toString(), snap.x().length, epoch,
                            options.epochs(), loss, training.startedAt()));
        } finally {
            training = null;
        }
        int[] fitted = mlp.predict(snap.x());
        int correct = 0;
        for (int i = 0; i < fitted.length; i++) {
            correct += fitted[i] == snap.y()[i] ? 1 : 0;
        }
        ModelChoice choice = ModelChoice.measure(snap.x(), snap.y(), snap.labels().size(), options,
                settings.getValidationEvery(), settings.getServe());
        OpenSet openSet = OpenSet.fit(snap.x(), snap.y(), snap.labels().size());
        // Sortable and unique across restarts.
        String version = "v" + java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmssSSS")
                .withZone(java.time.ZoneOffset.UTC).format(Instant.now());
        TrainedModel uncalibrated = new TrainedModel(key, version, mlp, snap.labels(), snap.x().length, Instant.now(),
                correct / (double) fitted.length, choice, openSet, null);
        TrainedModel m = new TrainedModel(key, version, mlp, snap.labels(), snap.x().length, uncalibrated.trainedAt(),
                uncalibrated.trainingAccuracy(), choice, openSet, calibrate(uncalibrated, snap));
        if (!e.labels().containsAll(snap.labels())) {
            // A person was erased while this version trained on them: it is never stored or served.
            LOG.info("{}: version {} discarded, a person it was trained on was erased meanwhile", key, version);
            trainer.schedule(mlp::close, 30, TimeUnit.SECONDS);
            return;
        }
        t.stop(Timer.builder("privface.recognizer.training").tag("site", key.site()).register(metrics));
        if (store != null) {
            try {
                store.save(m);
                List<String> pruned = store.prune(key, settings.getModelVersionsKept());
                if (!pruned.isEmpty()) {
                    LOG.info("{}: pruned {} stored version(s) older than the newest {}", key, pruned.size(),
                            settings.getModelVersionsKept());
                }
            } catch (java.io.IOException ex) {
                LOG.error("could not persist model {} of {}: {}", version, key, ex.toString());
            }
        }
        TrainedModel old = models.put(key, m);
        LOG.info("trained {} as {} on {} enrollments of {} people, serving {} (held-out accuracy MLP {}, nearest mean {},"
                + " {} held out); open set: {}", key, version, m.trainingSize(), m.labels().size(),
                choice.served().wireName(), String.format("%.3f", choice.mlpAccuracy()),
                String.format("%.3f", choice.ncmAccuracy()), choice.heldOut(), m.calibration() == null
                        ? "margin " + settings.getOpenSetMargin() + " radii (no calibration)"
                        : String.format("threshold %.4f, held-out FPIR %d/%d = %.4f (95%% CI %.4f-%.4f)",
                        m.calibration().threshold(), m.calibration().heldOut().accepted(),
                        m.calibration().heldOut().total(), m.calibration().heldOut().rate(),
                        m.calibration().heldOut().low(), m.calibration().heldOut().high()));
        if (old != null) {
            // In-flight predictions hold their own reference; give them time before freeing natives.
            trainer.schedule(old.mlp()::close, 30, TimeUnit.SECONDS);
        }
    }

    /**
     * The open-set threshold of a new version, from the public strangers released like this
     * model's faces: people at even positions of the sorted names calibrate, the others measure.
     * Null, with a warning, when there are fewer than 20/FPIR calibration faces.
     */
    private OpenSetCalibration calibrate(TrainedModel m, Enrollments.Snapshot snap) {
        if (settings.getStrangersFile() == null) {
            return null;
        }
        List<PerturbedFace> match = strangers.matching(m.key(), snap.sensitivityMode(), snap.epsilonPerFace());
        List<String> people = match.stream().map(PerturbedFace::getEnrollmentLabel).distinct().sorted().toList();
        java.util.Set<String> calibrationPeople = new java.util.HashSet<>();
        for (int i = 0; i < people.size(); i += 2) {
            calibrationPeople.add(people.get(i));
        }
        List<float[]> calib = new ArrayList<>();
        List<float[]> held = new ArrayList<>();
        for (PerturbedFace f : match) {
            (calibrationPeople.contains(f.getEnrollmentLabel()) ? calib : held)
                    .add(org.privface.wire.FaceRecords.vector(f));
        }
        double fpir = settings.getOpenSetFpir();
        if (calib.size() < OpenSetCalibration.required(fpir) || held.isEmpty()) {
            LOG.warn("{}: {} public strangers released like its faces ({} {} ε {}) in {}, {} of them for calibration;"
                    + " FPIR {} needs {}: the open set keeps the fixed margin", m.key(), match.size(), m.key().mechanism(),
                    snap.sensitivityMode(), snap.epsilonPerFace(), settings.getStrangersFile(), calib.size(), fpir,
                    OpenSetCalibration.required(fpir));
            return null;
        }
        double[] calibScores = m.scores(calib.toArray(float[][]::new)).openScore();
        double[] heldScores = m.scores(held.toArray(float[][]::new)).openScore();
        return OpenSetCalibration.of(fpir, calibScores, calibrationPeople.size(), heldScores,
                people.size() - calibrationPeople.size());
    }

    @PreDestroy
    void close() {
        trainer.shutdownNow();
        models.values().forEach(m -> m.mlp().close());
    }

    /** The training set of one model key. */
    static final class Enrollments {
        private final Map<String, PerturbedFace> byEvent = new LinkedHashMap<>();
        /** Each event's record key and write time, where known (events read without a key have none). */
        private final Map<String, Keyed> keyOf = new java.util.HashMap<>();
        private final Map<String, String> eventOfKey = new java.util.HashMap<>();

        record Keyed(String key, Instant written) {
        }

        private Instant lastChange = Instant.EPOCH;
        private Instant lastTrained = Instant.now();
        private boolean requested;
        private int trainedSize;

        synchronized boolean add(PerturbedFace f) {
            return add(f, null, Instant.now());
        }

        synchronized boolean add(PerturbedFace f, String key, Instant written) {
            if (byEvent.putIfAbsent(f.getEventId(), f) != null) {
                return false;
            }
            if (key != null) {
                // A key names one release of one image: a newer record under it (a new form) replaces the old.
                String old = eventOfKey.put(key, f.getEventId());
                if (old != null) {
                    byEvent.remove(old);
                    keyOf.remove(old);
                }
                keyOf.put(f.getEventId(), new Keyed(key, written));
            }
            lastChange = Instant.now();
            return true;
        }

        /** Removes the enrollments whose key matches, written no later than {@code before}; returns them. */
        synchronized List<PerturbedFace> remove(java.util.function.Predicate<String> key, Instant before) {
            List<PerturbedFace> gone = new ArrayList<>();
            var it = byEvent.entrySet().iterator();
            while (it.hasNext()) {
                var e = it.next();
                Keyed k = keyOf.get(e.getKey());
                if (k != null && key.test(k.key()) && !k.written().isAfter(before)) {
                    it.remove();
                    keyOf.remove(e.getKey());
                    eventOfKey.remove(k.key(), e.getKey());
                    gone.add(e.getValue());
                }
            }
            if (!gone.isEmpty()) {
                lastChange = Instant.now();
            }
            return gone;
        }

        synchronized java.util.Set<String> labels() {
            java.util.Set<String> out = new java.util.HashSet<>();
            byEvent.values().forEach(f -> out.add(f.getEnrollmentLabel()));
            return out;
        }

        synchronized int size() {
            return byEvent.size();
        }

        synchronized void markTrained(int size) {
            trainedSize = size;
        }

        /**
         * Due once at least {@code min} enrollments exist and either {@code after} new ones arrived
         * and then none for {@code quiet}, or any new ones wait longer than {@code interval}.
         */
        synchronized boolean due(Instant now, Duration quiet, int min, int after, Duration interval) {
            if (byEvent.size() < min) {
                return false;
            }
            int fresh = Math.abs(byEvent.size() - trainedSize);
            if (requested) {
                return true;
            }
            if (fresh == 0) {
                return false;
            }
            boolean settled = fresh >= after && Duration.between(lastChange, now).compareTo(quiet) >= 0;
            boolean overdue = interval != null && Duration.between(lastTrained, now).compareTo(interval) >= 0;
            return settled || overdue;
        }

        synchronized void request() {
            requested = true;
        }

        /** The most common sensitivity mode and ε per face of the enrollments, which strangers must match. */
        record Snapshot(float[][] x, int[] y, List<String> labels, String sensitivityMode, double epsilonPerFace) {
        }

        synchronized Snapshot snapshot() {
            TreeSet<String> names = new TreeSet<>();
            byEvent.values().forEach(f -> names.add(f.getEnrollmentLabel()));
            List<String> labels = new ArrayList<>(names);
            float[][] x = new float[byEvent.size()][];
            int[] y = new int[byEvent.size()];
            int i = 0;
            for (PerturbedFace f : byEvent.values()) {
                x[i] = org.privface.wire.FaceRecords.vector(f);
                y[i] = labels.indexOf(f.getEnrollmentLabel());
                i++;
            }
            trainedSize = byEvent.size();
            lastTrained = Instant.now();
            requested = false;
            Map.Entry<String, Long> common = byEvent.values().stream().collect(java.util.stream.Collectors.groupingBy(
                    f -> f.getMechanism().getSensitivityMode() + "@" + f.getMechanism().getEpsilonPerFace(),
                    java.util.stream.Collectors.counting())).entrySet().stream().max(Map.Entry.comparingByValue())
                    .orElseThrow();
            String[] modeAt = common.getKey().split("@");
            return new Snapshot(x, y, List.copyOf(labels), modeAt[0], Double.parseDouble(modeAt[1]));
        }
    }
}
