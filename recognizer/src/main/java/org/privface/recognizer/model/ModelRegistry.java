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
 * Enrollments per model key of the sites this replica owns, and the models trained on them. A
 * scheduler thread finds the models due and hands them to a bounded pool
 * ({@code recognizer.training-threads}), one run per model at a time, so the sites a replica owns
 * train in parallel; a model is retrained once enrollments stop arriving for the quiet period.
 * Only the owner of a site trains it, and only once it has replayed the site
 * ({@link org.privface.recognizer.ownership.SiteOwnership#ready}); a site given up is dropped.
 */
@Singleton
public class ModelRegistry implements org.privface.recognizer.answer.EnrollmentReleases {
    private static final Logger LOG = LoggerFactory.getLogger(ModelRegistry.class);

    private final RecognizerSettings settings;
    private final MeterRegistry metrics;
    private final Map<ModelKey, Enrollments> enrollments = new ConcurrentHashMap<>();
    private final Map<ModelKey, TrainedModel> models = new ConcurrentHashMap<>();
    private final ScheduledExecutorService trainer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "model-scheduler");
        t.setDaemon(true);
        return t;
    });
    private final java.util.concurrent.ExecutorService pool;
    private final java.util.Set<ModelKey> inFlight = ConcurrentHashMap.newKeySet();
    private final MlpOptions options;
    private final ModelStore store;
    private final StrangerReleases strangers;
    private final Map<ModelKey, TrainingStatus> training = new ConcurrentHashMap<>();

    /** A training run in progress: which model, how far, and its latest mean loss. */
    public record TrainingStatus(String model, int enrollments, int epoch, int epochs, float loss, Instant startedAt) {
    }

    private final java.util.function.Predicate<String> trainsSite;

    /**
     * @param ownership which sites this replica owns: it holds, trains and serves those only,
     *                  loading a site's stored versions when it acquires the site.
     */
    @jakarta.inject.Inject
    public ModelRegistry(RecognizerSettings settings, MeterRegistry metrics,
                         org.privface.recognizer.ownership.SiteOwnership ownership) throws java.io.IOException {
        this(settings, metrics, ownership::ready, false);
        ownership.listen(this::loadStored, this::forget);
    }

    /** Trains the sites {@code trainsSite} accepts, and serves every stored version at once. */
    ModelRegistry(RecognizerSettings settings, MeterRegistry metrics, java.util.function.Predicate<String> trainsSite)
            throws java.io.IOException {
        this(settings, metrics, trainsSite, true);
    }

    private ModelRegistry(RecognizerSettings settings, MeterRegistry metrics, java.util.function.Predicate<String> trainsSite,
                          boolean loadAll) throws java.io.IOException {
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
        int threads = Math.max(1, settings.getTrainingThreads());
        java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
        this.pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "model-trainer-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        if (store != null && loadAll) {
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
    }

    /**
     * A site acquired: serve the newest stored version of each of its models at once (queries
     * need not wait for a retraining), retrained only if the replayed enrollments differ.
     */
    private void loadStored(String site) {
        if (store == null) {
            return;
        }
        try {
            for (Map.Entry<ModelKey, String> latest : store.latestVersions().entrySet()) {
                if (!latest.getKey().site().equals(site)) {
                    continue;
                }
                TrainedModel m = store.load(latest.getKey(), latest.getValue());
                TrainedModel old = models.put(m.key(), m);
                enrollments.computeIfAbsent(m.key(), k -> new Enrollments()).markTrained(m.trainingSize());
                LOG.info("site {}: serving stored {} of {}", site, m.version(), m.key());
                if (old != null) {
                    trainer.schedule(old.mlp()::close, 30, TimeUnit.SECONDS);
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            LOG.warn("site {}: could not load stored models from {}: {}", site, settings.getModelDir(), e.toString());
        }
    }

    /** A site given up: its enrollments and models are dropped (its new owner holds them). */
    private void forget(String site) {
        enrollments.keySet().removeIf(k -> k.site().equals(site));
        for (var it = models.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (e.getKey().site().equals(site)) {
                it.remove();
                TrainedModel m = e.getValue();
                try {
                    // Later, so a prediction still running on it finishes first.
                    trainer.schedule(m.mlp()::close, 30, TimeUnit.SECONDS);
                } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
                    // The service is closing (its owners leave the group last): nothing predicts any more.
                    m.mlp().close();
                }
            }
        }
    }

    /** Every enrollment release of a site this replica holds, over its model keys. */
    @Override
    public List<PerturbedFace> enrollments(String site) {
        List<PerturbedFace> out = new ArrayList<>();
        enrollments.forEach((k, e) -> {
            if (k.site().equals(site)) {
                out.addAll(e.all());
            }
        });
        return out;
    }

    /** The sites this replica holds enrollments or models of. */
    public java.util.Set<String> sitesHeld() {
        java.util.Set<String> out = new java.util.TreeSet<>();
        enrollments.keySet().forEach(k -> out.add(k.site()));
        models.keySet().forEach(k -> out.add(k.site()));
        return out;
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
                try {
                    // Later, so a prediction still running on it finishes first.
                    trainer.schedule(m.mlp()::close, 30, TimeUnit.SECONDS);
                } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
                    // The service is closing (its owners leave the group last): nothing predicts any more.
                    m.mlp().close();
                }
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

    /** A training run in progress, if any (the oldest). */
    public Optional<TrainingStatus> training() {
        return training.values().stream().min(java.util.Comparator.comparing(TrainingStatus::startedAt));
    }

    /** Every training run in progress. */
    public List<TrainingStatus> trainings() {
        return List.copyOf(training.values());
    }

    /** Stored versions of a model, newest first (empty without a model directory). */
    public List<java.util.Properties> history(ModelKey key) throws java.io.IOException {
        return store == null ? List.of() : store.history(key);
    }

    public int enrollmentCount(ModelKey key) {
        Enrollments e = enrollments.get(key);
        return e == null ? 0 : e.size();
    }

    private void trainDue() {
        Instant now = Instant.now();
        for (Map.Entry<ModelKey, Enrollments> entry : enrollments.entrySet()) {
            if (!trainsSite.test(entry.getKey().site())) {
                continue;
            }
            Enrollments e = entry.getValue();
            ModelKey key = entry.getKey();
            if (!inFlight.contains(key) && e.due(now, settings.getQuietPeriod(), settings.getMinEnrollments(),
                    settings.getRetrainAfter(), settings.getRetrainInterval()) && inFlight.add(key)) {
                pool.execute(() -> {
                    try {
                        // Still this replica's, and still the same training set.
                        if (trainsSite.test(key.site()) && enrollments.get(key) == e) {
                            train(key, e);
                        }
                    } catch (RuntimeException ex) {
                        LOG.error("training {} failed: {}", key, ex.toString());
                    } finally {
                        inFlight.remove(key);
                    }
                });
            }
        }
    }

    private void train(ModelKey key, Enrollments e) {
        Enrollments.Snapshot snap = e.snapshot();
        if (snap.labels().size() < 2) {
            return;
        }
        Timer.Sample t = Timer.start(metrics);
        Instant started = Instant.now();
        training.put(key, new TrainingStatus(key.toString(), snap.x().length, 0, options.epochs(), Float.NaN, started));
        MlpModel mlp;
        try {
            mlp = new MlpTrainer().train(snap.x(), snap.y(), snap.labels().size(), options,
                    (epoch, loss) -> training.put(key, new TrainingStatus(key.toString(), snap.x().length, epoch,
                            options.epochs(), loss, started)));
        } finally {
            training.remove(key);
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
        if (!trainsSite.test(key.site()) || enrollments.get(key) != e) {
            // Given up while training: the new owner trains it; this version is not served here.
            trainer.schedule(m.mlp()::close, 30, TimeUnit.SECONDS);
            return;
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
        pool.shutdownNow();
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

        synchronized List<PerturbedFace> all() {
            return List.copyOf(byEvent.values());
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
