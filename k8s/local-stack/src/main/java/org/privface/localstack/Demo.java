package org.privface.localstack;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.HashSet;
import java.util.stream.Stream;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.privface.agent.image.ImageDecoder;
import org.privface.agent.dataset.BadDataset;
import org.privface.agent.dataset.DatasetFolder;
import org.privface.broker.KafkaServerProcess;
import org.privface.broker.ManagedProcess;
import org.privface.wire.FaceRecords;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.detect.YuNetDetector;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.embed.FaceEmbedders;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.recognizer.answer.PublicStrangers;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.Topics;

/**
 * The end-to-end demo: a real Kafka 4 broker process, the recognizer and the agent as separate
 * JVMs, on a folder of faces. Prints what was detected, published and recognized, and the
 * accuracy against the folder labels. The broker runs SASL_SSL with the ACLs of security.yml and
 * each process logs in as its own principal ({@link DemoSecurity}); {@code --plaintext} runs it
 * unauthenticated instead. Everything it starts is stopped, and its temporary directory removed,
 * when it exits.
 */
public final class Demo {
    private static final String SITE = "demo-site";
    /** Public strangers the demo's gallery threshold is calibrated on, by default: the recognizer's shipped Wilson rule needs about 400 to name anyone at a 1 % target. */
    static final int STRANGERS = 500;

    private Demo() {
    }

    /**
     * What is running after {@link #execute}: where the broker and the recognizer listen, the
     * console's operator and password, the faces the run used, and who is who on the broker.
     */
    public record Stack(String bootstrap, int recognizerPort, String operator, String password, Path enroll, Path query,
                        Path basisFile, String site, Path operatorKeysFile, DemoSecurity security) {
        @Override
        public String toString() {
            return "Stack[" + bootstrap + ", console " + consoleUrl() + "]"; // never the password
        }

        public String consoleUrl() {
            return "http://127.0.0.1:" + recognizerPort + "/console";
        }
    }

    /** Options and their defaults; every one can be given on the command line. */
    public static Map<String, String> defaults() {
        Map<String, String> m = new HashMap<>(Map.of(
                "--root", ".", "--faces", "test-data/synthetic", "--epsilon", "20", "--mechanism", "embedding", "--mode", "sign-cap",
                "--components", "8"));
        // Releases of each enrolled image. 1: an enrolled face spends the per-face ε, as every other face
        // does; n > 1 composes to n times it (printed), for about a point of accuracy (issue 28).
        m.put("--enroll-releases", "1");
        // After the run, keep everything up this long (e.g. 30m) with a live camera, for the console.
        m.put("--hold", "0");
        m.put("--operator", "operator");
        // Empty: the console password comes from PRIVFACE_CONSOLE_PASSWORD, or a random one (in a 0600 file).
        m.put("--password", "");
        // "true" (the flag --plaintext alone): the broker without authentication or ACLs, as before issue 24.
        m.put("--plaintext", "false");
        // The agent's face detector: haar, yunet (falls back to ultraface without its model) or ultraface (docs/face-stack.md).
        m.put("--detector", "yunet");
        // What a query face releases (issue 29). compare: two passes of the gateway over the same query images,
        // answers (agent.answer.release answer) then vectors, each at the whole ε, so both accuracies are
        // measured on the same faces, each face spending 2ε in all (printed); both (agent.answer.release both:
        // one pass, an answer and a vector at half the ε each), answer, or vector.
        m.put("--release", "compare");
        // The public strangers the gallery's open-set threshold is calibrated on: auto (the first image of
        // each of the first 100 people of lfw-public, under FACE_DATASETS or ../shared/datasets, when present),
        // none (a closed-set gallery), or a PublicStrangers file. Never the site's faces.
        m.put("--strangers", "auto");
        return m;
    }

    /**
     * What one run produced, keyed by event id; enough to check it and to print it. Accuracy counts
     * only {@code labelled} faces: {@value org.privface.agent.detect.LabelledFace#RULE}
     * ({@link org.privface.agent.detect.LabelledFace}). The other faces of query images were released
     * too and are reported apart, as unlabelled.
     */
    public record Outcome(Map<String, String> originOfQuery, Set<String> labelled, int queryImages,
                          Map<String, PerturbedFace> published, Map<String, FaceAnswer> answers,
                          Map<String, RecognitionResult> results, Score vectors, Score answerScore,
                          int people, int enrollReleases, Path basisFile, Stack stack, List<String> faceStack,
                          String release, FaceGallery gallery, String openSet) {
        /** Correct among the labelled faces, of the vectors where any were released, else of the answers. */
        public double accuracy() {
            return (vectors.scored() > 0 ? vectors : answerScore).accuracy();
        }

        /** Query faces that are not their image's labelled face. */
        public List<String> unlabelled() {
            return originOfQuery.keySet().stream().filter(id -> !labelled.contains(id)).toList();
        }

        public long enrollmentReleases() {
            return published.values().stream().filter(f -> f.getEnrollmentLabel() != null).count();
        }

        /** Query records of either form: one per face per form released. */
        public int queryRecords() {
            return originOfQuery.size();
        }
    }

    /**
     * One release form's score on the labelled query faces: correct, scored, the most common
     * person's count (the majority-class baseline) and the faces scored (their query images:
     * one labelled face per image).
     */
    public record Score(int correct, int scored, int majority, Set<String> faces) {
        public double accuracy() {
            return correct / (double) Math.max(1, scored);
        }
    }

    public static void main(String[] args) throws Exception {
        org.privface.agent.dataset.BadDataset.exitOnError(() -> run(args));
    }

    /** The command; a bad data-set folder ends it with a message naming the file (exit status 2), not a stack trace. */
    static void run(String[] args) throws Exception {
        Map<String, String> opt = defaults();
        // Maven passes -Ddemo.args="--epsilon 50 --mode l1-clip" as one argument.
        args = java.util.Arrays.stream(args).flatMap(a -> java.util.Arrays.stream(a.trim().split("\\s+")))
                .filter(a -> !a.isEmpty()).toArray(String[]::new);
        for (int i = 0; i < args.length; i++) {
            if (args[i].isBlank()) {
                continue;
            }
            if (args[i].equals("--plaintext")) {
                opt.put("--plaintext", "true");
                continue;
            }
            if (!opt.containsKey(args[i]) || i + 1 >= args.length) {
                throw new IllegalArgumentException("unknown or incomplete option " + args[i] + "; options: " + opt.keySet());
            }
            opt.put(args[i], args[++i]);
        }
        Path root = Path.of(opt.get("--root")).toAbsolutePath().normalize();
        Path faces = root.resolve(opt.get("--faces")).normalize();
        Path work = Files.createTempDirectory("privface-demo-");
        List<AutoCloseable> running = new ArrayList<>();
        Path keptLogs = root.resolve("k8s/local-stack/target/demo-logs");
        // Ctrl-C or SIGTERM is how a user ends the demo: stop everything, keep the logs, exit 0
        // (halt: the exit status would otherwise be the signal's, which Maven reports as a failure).
        Thread cleanup = new Thread(() -> {
            stopAll(running, work, keptLogs);
            System.out.println("demo stopped by a signal; logs in " + root.relativize(keptLogs));
            System.out.flush();
            Runtime.getRuntime().halt(0);
        }, "demo-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        long t0 = System.nanoTime();
        int exit;
        try {
            Outcome o = execute(root, faces, opt, work, running);
            print(o, root);
            exit = o.results().size() == o.originOfQuery().size() && !o.originOfQuery().isEmpty() ? 0 : 1;
            if (o.answerScore().scored() > 0 && o.vectors().scored() > 0
                    && !o.answerScore().faces().equals(o.vectors().faces())) {
                exit = 1; // both forms must be scored on the same faces
            }
            String h = opt.get("--hold").toUpperCase(java.util.Locale.ROOT);
            Duration hold = h.matches("0+") ? Duration.ZERO : Duration.parse("PT" + h);
            if (!hold.isZero()) {
                startLiveGateway(root, o.stack(), opt, work, running, 5);
                System.out.printf("%nconsole:              %s  (operator %s, password in %s)%n", o.stack().consoleUrl(),
                        o.stack().operator(), o.stack().security().operatorPasswordFile());
                System.out.printf("holding for %s with a live camera looping the query frames; Ctrl-C stops%n", hold);
                Thread.sleep(hold.toMillis());
            }
        } finally {
            stopAll(running, work, keptLogs);
            Runtime.getRuntime().removeShutdownHook(cleanup);
        }
        System.out.printf("demo finished in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        System.exit(exit);
    }

    /**
     * Runs broker, recognizer and agent in {@code work}; every process started is added to
     * {@code running}, which the caller closes.
     */
    public static Outcome execute(Path root, Path faces, Map<String, String> opt, Path work,
                                  List<AutoCloseable> running) throws Exception {
        Split split = split(faces, work);
        System.out.printf("faces: %s (%d people; %d enrollment images, %d query frames)%n", faces,
                split.people(), split.enrollImages(), split.queryImages());

        long t0 = System.nanoTime();
        String password = opt.get("--password");
        if (password == null || password.isEmpty()) {
            password = System.getenv().getOrDefault("PRIVFACE_CONSOLE_PASSWORD", "");
        }
        OperatorLogin login = OperatorLogin.create(work, opt.get("--operator"), password);
        DemoSecurity security = DemoSecurity.start(root, work, SITE, Boolean.parseBoolean(opt.get("--plaintext")),
                login.password());
        LocalBroker broker = security.broker();
        running.add(broker);
        String bootstrap = broker.bootstrap();
        System.out.printf("broker: Apache Kafka 4 (KRaft) process on %s, %s (%.1f s)%n", bootstrap,
                broker.secured() ? "SASL_SSL with ACLs" : "PLAINTEXT", (System.nanoTime() - t0) / 1e9);

        Map<String, String> env = broker.serviceEnvironment(DemoSecurity.agent(SITE));
        Map<String, String> recognizerEnv = new HashMap<>(broker.serviceEnvironment(DemoSecurity.RECOGNIZER));
        if (broker.secured()) {
            // The console's control producer logs in as the operator (ControlProposals: recognizer.console.kafka.*).
            recognizerEnv.putAll(LocalBroker.environment("RECOGNIZER_CONSOLE_KAFKA_", broker.client(DemoSecurity.OPERATOR)));
        }
        recognizerEnv.put("OMP_WAIT_POLICY", "PASSIVE");
        // The console's operator signing key, made as an operator would (SignedControl's key tool):
        // the private half to the recognizer, the public half to every gateway's keys file.
        Path signingKey = work.resolve("console-signing.key");
        Path operatorKeys = work.resolve("operator-keys");
        Files.writeString(operatorKeys, SignedControl.writeNewKey("console", signingKey) + "\n");
        String release = opt.get("--release");
        if (!List.of("compare", "answer", "both", "vector").contains(release)) {
            throw new IllegalArgumentException("--release must be compare, answer, both or vector, not " + release);
        }
        if (!release.equals("vector") && !opt.get("--mechanism").equals("embedding")) {
            // Answers decode an embedding's public projection: the seed mechanisms release vectors only.
            System.out.printf("release: vector (--release %s needs --mechanism embedding, not %s)%n", release,
                    opt.get("--mechanism"));
            release = "vector";
        }
        boolean answering = !release.equals("vector");
        double epsilon = Double.parseDouble(opt.get("--epsilon"));
        // The gateway's passes over the query images and the release (agent.answer.release) each makes.
        List<String> passes = switch (release) {
            case "compare" -> List.of("answer", "vector");
            default -> List.of(release);
        };
        // Each image is its own track, granted the per-face ε once; with both forms each spends half of it.
        double answerEpsilon = release.equals("both") ? epsilon / 2 : epsilon;
        List<String> galleryOptions = new ArrayList<>();
        PublicStrangers heldOut = null;
        String galleryKey = null;
        String openSet = "";
        if (answering) {
            // The recognizer's gallery signing key, made as for the console's: the public half to the gateway.
            Path galleryKeyFile = work.resolve("gallery-signing.key");
            galleryKey = SignedControl.writeNewKey("recognizer", galleryKeyFile).substring("recognizer: ".length());
            if (release.equals("both")) {
                // The vector model's distance rule (recognizer.open-set-margin) is fitted to enrollment releases
                // at the full ε; a query vector at half of it falls outside it most of the time (measured: 44 of
                // 48 synthetic faces "unknown"), so the vectors are scored closed-set, and the summary says so.
                // (The vector at half ε also keeps the full ε's preset shape, so it is near chance: see README.)
                galleryOptions.add("-Drecognizer.open-set-margin=0");
            }
            galleryOptions.addAll(List.of("-Drecognizer.answer.signing-key-file=" + galleryKeyFile,
                    "-Drecognizer.answer.key-id=recognizer",
                    "-Drecognizer.answer.epsilon=" + answerEpsilon,
                    "-Drecognizer.answer.quiet-period=3s"));
            Optional<Strangers> strangers = strangers(root, opt.get("--strangers"), work);
            heldOut = strangers.flatMap(Strangers::heldOut).orElse(null);
            if (strangers.isPresent()) {
                galleryOptions.add("-Drecognizer.answer.strangers-file=" + strangers.get().file());
                galleryOptions.add("-Drecognizer.answer.strangers-sha256=" + StrangersFile.sha256(strangers.get().file()));
            } else {
                openSet = opt.get("--strangers").equals("none")
                        ? "off (--strangers none): closed-set gallery, every answer names an enrolled person"
                        : "off: no public strangers (lfw-public under FACE_DATASETS or ../shared/datasets, YuNet or the"
                                + " dlib weights not found), so the gallery is closed-set and every answer names an enrolled person";
            }
        }
        int recognizerPort = KafkaServerProcess.freePort();
        List<String> recognizerOptions = new ArrayList<>(List.of("-Xmx1g", "-Dai.djl.offline=true",
                "-Dmicronaut.server.port=" + recognizerPort,
                login.recognizerOption(),
                "-Drecognizer.console.signing-key-file=" + signingKey,
                "-Drecognizer.console.signing-key-id=console",
                "-Drecognizer.console.sample-interval=2s",
                "-Drecognizer.console.audit-file=" + work.resolve("console-audit.jsonl"),
                // PyTorch's spinning OpenMP pool slows training 5-10x when it shares cores.
                "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1"));
        recognizerOptions.addAll(galleryOptions);
        ManagedProcess recognizer = ManagedProcess.java("recognizer", classpath(root, "recognizer"),
                "org.privface.recognizer.Application", recognizerOptions, List.of(), recognizerEnv, work);
        running.add(recognizer);
        awaitHealthy(recognizer, recognizerPort);
        System.out.printf("recognizer: up on 127.0.0.1:%d (%.1f s)%n", recognizerPort, (System.nanoTime() - t0) / 1e9);

        Path ledger = work.resolve("ledger.csv");
        Path basisFile = work.resolve("basis.bin");
        List<String> agentOptions = List.of("-Xmx1g",
                "-Dagent.site-id=" + SITE,
                "-Dagent.gateway-id=demo-gateway",
                "-Dagent.control.report-interval=2s",
                "-Dagent.control.keys-file=" + operatorKeys,
                "-Dagent.enroll-folder=" + split.enroll(),
                "-Dagent.basis-file=" + basisFile,
                "-Dagent.exit-when-done=true",
                "-Dagent.data-dir=" + work.resolve("agent-data"),
                "-Dagent.epsilon=" + opt.get("--epsilon"),
                // The demo's own configuration is the gateway's: its floor admits the ε asked for.
                "-Dagent.floor.epsilon-max=" + Math.max(100, epsilon),
                "-Dagent.mechanism=" + opt.get("--mechanism"),
                "-Dagent.sensitivity-mode=" + opt.get("--mode"),
                "-Dagent.components=" + opt.get("--components"),
                "-Dagent.detector=" + opt.get("--detector"),
                // YuNet, when asked for, from FACE_MODELS or else the shared models beside the checkout.
                "-Dprivface.models=" + root.resolve("../shared/models").normalize(),
                "-Dagent.enroll-releases=" + opt.get("--enroll-releases"));
        // A bound for a hung agent, not a speed target: a real folder set (lfw5: 1,140 images, each embedded
        // by dlib) takes minutes on a shared 2-core machine, and a JVM's start alone a minute when it is busy.
        Duration agentBound = Duration.ofSeconds(180 + 2L * (split.enrollImages() + split.queryImages()));
        FaceGallery gallery = null;
        List<String> queryOptions = new ArrayList<>(agentOptions);
        if (answering) {
            // The gateway enrolls first, alone: the recognizer builds the gallery from those releases, and the
            // query faces are released only once it is signed on the site's gallery topic.
            List<String> enrolOptions = new ArrayList<>(agentOptions);
            enrolOptions.add("-Dmicronaut.server.port=" + KafkaServerProcess.freePort());
            enrolOptions.add("-Dagent.ledger=" + work.resolve("ledger-enrol.csv"));
            // The enrollment a site answering needs: the templates' form, and with vectors too the vector's
            // (compare scores both, so it enrols as both would): each enrolled image is charged each form.
            // It answers no query itself: it reports no answer ε, so the gallery is calibrated for the passes'.
            enrolOptions.add("-Dagent.answer.enrollment-forms=" + switch (release) {
                case "compare", "both" -> "both";
                default -> "templates";
            });
            ManagedProcess enrol = ManagedProcess.java("agent-enrol", classpath(root, "agent"), "org.privface.agent.Application",
                    enrolOptions, List.of(), env, work);
            running.add(enrol);
            awaitExit(enrol, agentBound);
            System.out.printf("agent: enrollment released (%.1f s)%n", (System.nanoTime() - t0) / 1e9);
            gallery = awaitGallery(broker, Duration.ofSeconds(120));
            System.out.printf("gallery: version %d signed on %s, %d people (%.1f s)%n", gallery.getVersion(),
                    Topics.gallery(SITE), gallery.getLabels().size(), (System.nanoTime() - t0) / 1e9);
            if (openSet.isEmpty()) {
                openSet = gallery.getCalibration() == null
                        ? "off: the public strangers were not in the enrollments' space, so the gallery is closed-set"
                        : String.format("threshold %.3f, calibrated for answers at epsilon %s by the %s rule on %d public"
                                + " strangers of %s (%d above it; decoder target %.2f%% of strangers named, for 1%% of"
                                + " answers), never on site faces", gallery.getThreshold(),
                                gallery.getCalibration().getEpsilon(), gallery.getCalibration().getRule(),
                                gallery.getCalibration().getStrangers(), gallery.getCalibration().getStrangerSet(),
                                gallery.getCalibration().getAccepted(), 100 * gallery.getCalibration().getTargetRate());
                Optional<PublicStrangers> unseen = heldOut == null ? Optional.empty() : heldOut.inSpace(gallery.getBasisId());
                if (unseen.isPresent()) {
                    openSet += "\nunseen strangers:     " + unseenFpir(gallery, unseen.get(), answerEpsilon);
                }
            }
            queryOptions.addAll(List.of("-Dagent.publish-enrollments=false",
                    "-Dagent.answer.gallery-keys.recognizer=" + galleryKey));
        }
        // eventId,origin,labelled|other (the agent's OriginLog): which face of its image the label belongs to.
        Map<String, String> originOf = new LinkedHashMap<>();
        Set<String> labelled = new HashSet<>();
        ManagedProcess agent = null;
        for (String pass : passes) {
            Path passLedger = passes.size() == 1 ? ledger : work.resolve("ledger-" + pass + ".csv");
            List<String> options = new ArrayList<>(queryOptions);
            options.addAll(List.of("-Dmicronaut.server.port=" + KafkaServerProcess.freePort(),
                    "-Dagent.source=" + split.query(), "-Dagent.ledger=" + passLedger,
                    "-Dagent.answer.release=" + pass));
            agent = ManagedProcess.java(passes.size() == 1 ? "agent" : "agent-" + pass, classpath(root, "agent"),
                    "org.privface.agent.Application", options, List.of(), env, work);
            running.add(agent);
            awaitExit(agent, agentBound);
            if (passes.size() > 1) {
                System.out.printf("agent: query faces released as %ss (%.1f s)%n", pass, (System.nanoTime() - t0) / 1e9);
            }
            for (String line : Files.readAllLines(passLedger)) {
                int comma = line.indexOf(',');
                int last = line.lastIndexOf(',');
                originOf.put(line.substring(0, comma), line.substring(comma + 1, last));
                if (line.substring(last + 1).equals("labelled")) {
                    labelled.add(line.substring(0, comma));
                }
            }
        }
        // Read as the vendor would: its grants are enough for every face the gateway published.
        Map<String, PerturbedFace> published = readAll(broker.client(DemoSecurity.VENDOR),
                List.of(Topics.enrollment(SITE), Topics.query(SITE)),
                -1, Duration.ofSeconds(10), FaceRecords::decodeFace, PerturbedFace::getEventId);
        Map<String, FaceAnswer> answers = answering ? readAll(broker.client(DemoSecurity.VENDOR),
                List.of(Topics.answer(SITE)), -1, Duration.ofSeconds(10),
                b -> FaceRecords.decodeAnswerFromTopic(Topics.answer(SITE), b), FaceAnswer::getEventId) : Map.of();
        // Nobody but the super user reads the product's own results.
        Map<String, RecognitionResult> results = readAll(broker.client(LocalBroker.ADMIN), List.of(Topics.RESULTS), originOf.size(),
                Duration.ofSeconds(Math.max(90, originOf.size())), FaceRecords::decodeResult, RecognitionResult::getEventId);

        Set<String> vectorIds = new HashSet<>();
        published.values().stream().filter(f -> f.getEnrollmentLabel() == null).forEach(f -> vectorIds.add(f.getEventId()));
        Score vectors = score(originOf, labelled, results, vectorIds);
        Score answerScore = score(originOf, labelled, results, answers.keySet());
        Set<String> people = new HashSet<>();
        originOf.values().forEach(o -> people.add(Path.of(o).getName(0).toString()));
        // Under agent.basis-fit=private (the default) the agent keeps the basis it fitted privately in its data dir.
        basisFile = keptPrivateBasis(work.resolve("agent-data")).orElse(basisFile);
        return new Outcome(originOf, labelled, split.queryImages(), published, answers, results, vectors, answerScore,
                split.people(), Integer.parseInt(opt.get("--enroll-releases")), basisFile,
                new Stack(bootstrap, recognizerPort, login.operator(), login.password(), split.enroll(), split.query(), basisFile,
                        SITE, operatorKeys, security), faceStack(agent.log()), release, gallery, openSet);
    }

    /**
     * Scores one form: its records among the labelled faces, right when the recognizer's result
     * names the image's person (an image folder's first path element).
     */
    static Score score(Map<String, String> originOf, Set<String> labelled, Map<String, RecognitionResult> results,
                       Set<String> records) {
        int correct = 0;
        int scored = 0;
        Map<String, Integer> perPerson = new HashMap<>();
        Set<String> faces = new HashSet<>();
        for (String id : records) {
            if (!labelled.contains(id)) {
                continue; // someone else in the photo: not the folder's person
            }
            String truth = Path.of(originOf.get(id)).getName(0).toString();
            perPerson.merge(truth, 1, Integer::sum);
            scored++;
            faces.add(originOf.get(id));
            RecognitionResult r = results.get(id);
            if (r != null && truth.equals(r.getPredictedLabel())) {
                correct++;
            }
        }
        return new Score(correct, scored, perPerson.values().stream().max(Integer::compare).orElse(0), faces);
    }

    private static void awaitExit(ManagedProcess agent, Duration bound) throws Exception {
        int exit = agent.await(bound);
        if (exit != 0) {
            throw new IllegalStateException(agent.name() + " failed with exit code " + exit + "; its log:\n"
                    + Files.readString(agent.log()));
        }
    }

    /** The site's gallery, as the super user reads it, once the recognizer has signed one on its topic. */
    private static FaceGallery awaitGallery(LocalBroker broker, Duration timeout) {
        String topic = Topics.gallery(SITE);
        Map<String, FaceGallery> g = readAll(broker.client(LocalBroker.ADMIN), List.of(topic), 1, timeout,
                b -> FaceRecords.decodeGalleryFromTopic(topic, b), x -> Long.toString(x.getVersion()));
        return g.values().stream().max(Comparator.comparingLong(FaceGallery::getVersion)).orElseThrow(() ->
                new IllegalStateException("no gallery on " + topic + " within " + timeout + "; see recognizer.log"));
    }

    /** The calibration file and, where built here, the other half of the public people: strangers calibration never saw. */
    record Strangers(Path file, Optional<PublicStrangers> heldOut) {
    }

    /**
     * The public strangers' file for the gallery's threshold: the one named, none, or (auto) built
     * by {@link StrangersFile} from {@code lfw-public} (under FACE_DATASETS or ../shared/datasets):
     * every image of every other person (about 2,400 faces, at least {@value StrangersFile#MIN_FACES}
     * needed), raw embeddings the recognizer projects into the gallery's space; the other half of the people is kept for measuring the false-positive rate on strangers the
     * calibration never saw. Public faces only, never the site's. The raw embeddings are cached in
     * {@code k8s/local-stack/target/strangers-cache}, since embedding 4,840 faces takes minutes.
     */
    static Optional<Strangers> strangers(Path root, String option, Path work)
            throws IOException {
        if (option.equals("none")) {
            return Optional.empty();
        }
        if (!option.equals("auto")) {
            Path file = root.resolve(option);
            PublicStrangers.read(file); // a bad file stops the demo here, naming it
            return Optional.of(new Strangers(file, Optional.empty()));
        }
        Optional<Path> pub = FaceDatasets.root().or(() -> Optional.of(root.resolve("../shared/datasets").normalize()))
                .map(r -> r.resolve("lfw-public")).filter(Files::isDirectory);
        Optional<Path> yunet = FaceModels.findYunet(null).or(() -> Optional.of(root.resolve("../shared/models")
                .resolve(FaceModels.YUNET_FILE).normalize()).filter(Files::isRegularFile));
        String network = FaceEmbedders.DLIB; // the agent's default agent.embedder.network, which the demo keeps
        if (pub.isEmpty() || yunet.isEmpty() || !FaceEmbedders.missing(network).isEmpty()) {
            return Optional.empty();
        }
        long t0 = System.nanoTime();
        Path cache = Files.createDirectories(root.resolve("k8s/local-stack/target/strangers-cache"));
        Path[] files = new Path[2];
        for (int offset = 0; offset < 2; offset++) {
            files[offset] = cache.resolve("lfw-public-" + network + "-" + (offset == 0 ? "calibration" : "unseen") + ".txt");
            if (!Files.isRegularFile(files[offset])) {
                double[][] e = StrangersFile.embed(pub.get(), network, offset, work.resolve("strangers-links-" + offset),
                        yunet.get());
                Path tmp = work.resolve("strangers-" + offset + ".txt");
                StrangersFile.write(tmp, "lfw-public", network, e);
                Files.move(tmp, files[offset], java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
        PublicStrangers calibration = PublicStrangers.read(files[0]);
        PublicStrangers unseen = PublicStrangers.read(files[1]);
        System.out.printf("public strangers: %d faces of every other lfw-public person (%s embeddings, sha256 %s) for the"
                + " gallery's threshold; %d faces of the other people kept unseen (%.1f s)%n", calibration.directions().length,
                network, StrangersFile.sha256(files[0]).substring(0, 16), unseen.directions().length,
                (System.nanoTime() - t0) / 1e9);
        return Optional.of(new Strangers(files[0], Optional.of(unseen)));
    }

    /**
     * The false-positive rate on public strangers the calibration never saw: the decoder's (their
     * best cosine above the gallery's threshold) with its 95 % Wilson interval, and the answers'
     * (the exact k-RR channel on top: a stranger decoded as someone is released as someone with
     * probability κ + (1 − κ)(C − 1)/C, one decoded as unknown with 1 − κ).
     */
    static String unseenFpir(FaceGallery g, PublicStrangers unseen, double answerEpsilon) {
        org.privface.privacy.answer.Gallery model = new org.privface.privacy.answer.Gallery(g.getVersion(), g.getBasisId(),
                g.getLabels(), FaceRecords.templates(g), g.getThreshold());
        long named = java.util.Arrays.stream(unseen.directions()).filter(d -> model.decode(d) < model.identities()).count();
        int n = unseen.directions().length;
        double d = named / (double) n;
        double[] w = org.privface.privacy.answer.Gallery.wilson(named, n);
        org.privface.privacy.answer.RandomizedResponse rr =
                org.privface.privacy.answer.RandomizedResponse.forEpsilon(model.identities(), answerEpsilon);
        double kappa = rr.keepProbability();
        int c = model.identities();
        double fpir = d * (kappa + (1 - kappa) * (c - 1) / c) + (1 - d) * (1 - kappa);
        return String.format("decoder FPIR %.2f%% (%d of %d faces of lfw-public people outside the calibration half,"
                + " 95%% [%.2f%%, %.2f%%]); answer FPIR %.2f%% at epsilon %s (the exact k-RR channel on top)",
                100 * d, named, n, 100 * w[0], 100 * w[1], 100 * fpir, answerEpsilon);
    }

    /** The eigenbasis the agent fitted privately and kept (private-basis-*.eigf), if it fitted one. */
    static java.util.Optional<Path> keptPrivateBasis(Path dataDir) throws java.io.IOException {
        if (!Files.isDirectory(dataDir)) {
            return java.util.Optional.empty();
        }
        try (java.util.stream.Stream<Path> s = Files.list(dataDir)) {
            return s.filter(f -> f.getFileName().toString().matches("private-basis-.*\\.eigf")).sorted().findFirst();
        }
    }

    /** What the agent says it ran: the detector that loaded (YuNet falls back to UltraFace) and the embedding's file. */
    private static List<String> faceStack(Path agentLog) throws java.io.IOException {
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(agentLog)) {
            for (String what : new String[] {"face detector: ", "face embedding: "}) {
                int at = line.indexOf(what);
                if (at >= 0) {
                    out.add(String.format("%-22s%s", what.trim(), line.substring(at + what.length())));
                }
            }
        }
        if (out.stream().anyMatch(l -> l.startsWith("face embedding:"))) {
            out.add("models' provenance:   docs/face-stack.md (sources, licenses, what is known of training data)");
        }
        return out;
    }

    /**
     * A second gateway of the demo's site on a live camera: an MJPEG feed looping the query
     * frames at {@code fps}. It runs until closed, reports every 2 s and follows the control topic.
     */
    public static ManagedProcess startLiveGateway(Path root, Stack stack, Map<String, String> opt, Path work,
                                                  List<AutoCloseable> running, int fps) throws Exception {
        MjpegFeed feed = new MjpegFeed(stack.query(), fps);
        running.add(feed);
        int port = KafkaServerProcess.freePort();
        Path liveData = Files.createDirectories(work.resolve("agent-live-data"));
        if (stack.basisFile().getFileName().toString().startsWith("private-basis-") && Files.exists(stack.basisFile())) {
            // The live gateway reuses the batch gateway's private fit, so its queries land in the same model's space.
            Files.copy(stack.basisFile(), liveData.resolve(stack.basisFile().getFileName()));
        }
        ManagedProcess agent = ManagedProcess.java("agent-live", classpath(root, "agent"), "org.privface.agent.Application",
                List.of("-Xmx512m", "-Dmicronaut.server.port=" + port,
                        "-Dagent.site-id=" + stack.site(),
                        "-Dagent.gateway-id=demo-gateway-live",
                        "-Dagent.control.report-interval=2s",
                        "-Dagent.control.keys-file=" + stack.operatorKeysFile(),
                        "-Dagent.enroll-folder=" + stack.enroll(),
                        "-Dagent.publish-enrollments=false",
                        "-Dagent.basis-file=" + stack.basisFile(),
                        "-Dagent.cameras.door.url=" + feed.url(),
                        "-Dagent.data-dir=" + liveData,
                        "-Dagent.epsilon=" + opt.get("--epsilon"),
                        "-Dagent.floor.epsilon-max=" + Math.max(100, Double.parseDouble(opt.get("--epsilon"))),
                        "-Dagent.mechanism=" + opt.get("--mechanism"),
                        "-Dagent.sensitivity-mode=" + opt.get("--mode"),
                        "-Dagent.detector=" + opt.get("--detector"),
                        // YuNet, when asked for, from FACE_MODELS or else the shared models beside the checkout.
                        "-Dprivface.models=" + root.resolve("../shared/models").normalize(),
                        "-Dagent.components=" + opt.get("--components")),
                List.of(), stack.security().broker().serviceEnvironment(DemoSecurity.agent(stack.site())), work);
        running.add(agent);
        awaitHealthy(agent, port);
        System.out.println("live gateway: demo-gateway-live on " + feed.url());
        return agent;
    }

    static void print(Outcome o, Path root) {
        double epsFace = o.published().values().stream().filter(f -> f.getEnrollmentLabel() != null)
                .mapToDouble(f -> f.getMechanism().getEpsilonPerFace()).max().orElse(0);
        PerturbedFace any = o.published().values().iterator().next();
        int records = o.queryRecords();
        System.out.println();
        System.out.println("=== privface demo summary ===");
        System.out.printf("site id:              %s (topics %s, %s, %s)%n", o.stack().site(),
                Topics.enrollment(o.stack().site()), Topics.query(o.stack().site()), Topics.answer(o.stack().site()));
        o.stack().security().summary(o.stack().site()).forEach(System.out::println);
        for (String line : o.faceStack()) {
            System.out.println(line);
        }
        System.out.printf("mechanism:            %s, mode %s, %d components, basis %s%n",
                any.getMechanism().getName(), any.getMechanism().getSensitivityMode(), any.getDimension(), any.getMechanism().getBasisId());
        System.out.printf("epsilon per face:     %.3f (at most %.4f for one coordinate) on every enrollment record%n", epsFace,
                any.getMechanism().getEpsilonPerCoordinate());
        List<PerturbedFace> enrolled = o.published().values().stream().filter(f -> f.getEnrollmentLabel() != null).toList();
        long templateReleases = enrolled.stream()
                .filter(f -> f.getTrackId().startsWith(org.privface.recognizer.answer.GalleryBuilder.TEMPLATE_TRACK_PREFIX))
                .count();
        // Forms released per image: the vector's, the templates', or both (each charged).
        int forms = templateReleases > 0 && templateReleases < enrolled.size() ? 2 : 1;
        long enrolledImages = enrolled.stream().map(f -> f.getTrackId()).distinct().count() / forms;
        // The ledger's composed ε of an image after its last release, as each record states it.
        double perImage = enrolled.stream().filter(f -> f.getTrack() != null)
                .mapToDouble(f -> f.getTrack().getEpsilonSpentInWindow()).max().orElse(0);
        Map<String, Double> perPerson = new java.util.TreeMap<>();
        enrolled.forEach(f -> perPerson.merge(f.getEnrollmentLabel(), f.getMechanism().getEpsilonPerFace(), Double::sum));
        System.out.printf("enrollment:           %d release(s) of %d enrolled images, %d each%s%n", o.enrollmentReleases(),
                enrolledImages, o.enrollmentReleases() / Math.max(1, enrolledImages), forms == 2 ? String.format(
                        " (%d in the vector's form, %d in the templates': the two need different releases, so each"
                                + " image is charged both)", enrolled.size() - templateReleases, templateReleases) : "");
        System.out.printf("epsilon per enrolled image: %.3f%s%n", perImage, forms == 2 ? " (vector + templates, composed)"
                : o.enrollReleases() == 1 ? " (one release: the per-face epsilon)"
                : String.format(" (%d releases composed; --enroll-releases 1 gives %.3f)", o.enrollReleases(), epsFace));
        System.out.printf("epsilon per enrolled person: %.1f at most (%s), over all of a person's images%n",
                perPerson.values().stream().mapToDouble(Double::doubleValue).max().orElse(0),
                perPerson.entrySet().stream().map(e -> e.getKey() + " " + String.format("%.0f", e.getValue()))
                        .collect(java.util.stream.Collectors.joining(", ")));
        System.out.printf("release:              %s%s%n", o.release(), switch (o.release()) {
            case "compare" -> " (two passes of the gateway over the same query images: k-RR answers, then sign-cap"
                    + " vectors, each at the whole per-face epsilon; a site runs one of them)";
            case "both" -> " (each query face: a k-RR answer and a sign-cap vector, each at half the face's grant;"
                    + " the vector keeps the whole epsilon's preset shape, so at half of it it is near chance)";
            case "answer" -> " (each query face: a k-RR answer only; no vector leaves the gateway)";
            default -> " (each query face: a vector)";
        });
        FaceGallery g = o.gallery();
        if (g != null) {
            System.out.printf("gallery:              version %d, C = %d people, class templates of %d enrollment releases,"
                    + " basis %s, signed by the recognizer%n", g.getVersion(), g.getLabels().size(), g.getEnrollmentReleases(),
                    g.getBasisId());
            System.out.printf("open set:             %s%n", o.openSet());
        }
        PerturbedFace query = o.published().values().stream().filter(f -> f.getEnrollmentLabel() == null)
                .findFirst().orElse(null);
        FaceAnswer answer = o.answers().values().stream().findFirst().orElse(null);
        double budget = query != null && query.getTrack() != null ? query.getTrack().getEpsilonBudget()
                : answer != null ? answer.getTrack().getEpsilonBudget() : 0;
        System.out.printf("per-track budget:     %s, epsilon %.3f per track (each query image is its own track)%n",
                query != null && query.getTrack() != null ? query.getTrack().getBudgetPolicy()
                        : answer != null ? answer.getTrack().getBudgetPolicy() : "none", budget);
        System.out.printf("query records:        %d from %d query images (%d vectors, %d answers); %d of them the labelled"
                + " face of their image%n", records, o.queryImages(), records - o.answers().size(), o.answers().size(),
                o.labelled().size());
        long unknown = o.results().values().stream().filter(r -> r.getPredictedLabel() == null).count();
        System.out.printf("records recognized:   %d of %d query records (%d answered \"unknown\")%n", o.results().size(),
                records, unknown);
        double answerEps = o.answers().values().stream().mapToDouble(a -> a.getMechanism().getEpsilonPerFace()).max().orElse(0);
        double vectorEps = o.published().values().stream().filter(f -> f.getEnrollmentLabel() == null)
                .mapToDouble(f -> f.getMechanism().getEpsilonPerFace()).max().orElse(0);
        double chance = 100.0 / Math.max(1, o.people());
        if (o.answerScore().scored() > 0) {
            System.out.printf("answer accuracy:      %.1f%% (%d/%d labelled faces), k-RR over C+1 = %d outputs, epsilon %.4f"
                    + " per face; chance %.1f%%, majority class %.1f%%%n", 100 * o.answerScore().accuracy(),
                    o.answerScore().correct(), o.answerScore().scored(), g == null ? 0 : g.getLabels().size() + 1, answerEps,
                    chance, 100.0 * o.answerScore().majority() / o.answerScore().scored());
        }
        if (o.vectors().scored() > 0) {
            System.out.printf("%s %.1f%% (%d/%d labelled faces), %s, epsilon %.4f per face; chance %.1f%%, majority"
                    + " class %.1f%%%n", o.answerScore().scored() > 0 ? "vector accuracy:     " : "accuracy:            ",
                    100 * o.vectors().accuracy(), o.vectors().correct(), o.vectors().scored(),
                    any.getMechanism().getSensitivityMode(), vectorEps, chance,
                    100.0 * o.vectors().majority() / o.vectors().scored());
        }
        if (o.release().equals("both")) {
            System.out.printf("vector open set:      off (recognizer.open-set-margin 0): its distance rule is fitted to"
                    + " enrollment releases at epsilon %.0f, which query vectors at half of it mostly fall outside%n", epsFace);
        }
        if (o.answerScore().scored() > 0 && o.vectors().scored() > 0) {
            boolean same = o.answerScore().faces().equals(o.vectors().faces());
            System.out.printf("same faces:           %s; each query face spent epsilon %.4f in all (answer %.4f + vector %.4f%s)%n",
                    same ? "yes, the " + o.vectors().scored() + " labelled faces each gave one answer and one vector"
                            : "NO: the two forms were scored on different faces", answerEps + vectorEps, answerEps, vectorEps,
                    o.release().equals("compare") ? ", one release in each pass" : ", halves of one grant");
        }
        System.out.printf("labelled face:        %s%n", org.privface.agent.detect.LabelledFace.RULE);
        List<String> others = o.unlabelled();
        long othersUnknown = others.stream().map(o.results()::get)
                .filter(r -> r != null && r.getPredictedLabel() == null).count();
        System.out.printf("unlabelled records:   %d (other people in query images, not scored): %d answered \"unknown\", %d given"
                + " an enrolled name%n", others.size(), othersUnknown, others.stream().map(o.results()::get)
                .filter(r -> r != null && r.getPredictedLabel() != null).count());
        System.out.println("console password:     in " + o.stack().security().operatorPasswordFile() + " (mode 0600)");
        System.out.println("logs:                 " + root.relativize(root.resolve("k8s/local-stack/target/demo-logs")));
    }

    /** Reads records of one type from the start of topics until {@code expected} are in, or quiet/timeout. */
    static <T> Map<String, T> readAll(Properties client, List<String> topics, int expected, Duration timeout,
                                              java.util.function.Function<byte[], T> decode,
                                              java.util.function.Function<T, String> eventId) {
        Properties p = new Properties();
        p.putAll(client);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        Map<String, T> out = new LinkedHashMap<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (String t : topics) {
                c.partitionsFor(t).forEach(pi -> tps.add(new TopicPartition(t, pi.partition())));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            // The timeout is idle time: a loaded machine that is still delivering records is not cut off
            // (at load 29 a fixed 10 s returned 6 of 48 answers, silently).
            long deadline = System.nanoTime() + timeout.toNanos();
            boolean caughtUp = false;
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    T record = decode.apply(r.value());
                    out.put(eventId.apply(record), record);
                    deadline = System.nanoTime() + timeout.toNanos();
                }
                caughtUp = tps.stream().allMatch(tp -> c.position(tp) >= end.get(tp));
                if (expected < 0 ? caughtUp : out.size() >= expected) {
                    break;
                }
            }
            if (expected < 0 && !caughtUp) {
                throw new IllegalStateException("read " + out.size() + " records of " + topics + " but not to their end offsets "
                        + end + " within " + timeout + " without a record");
            }
        }
        return out;
    }

    public static String classpath(Path root, String module) throws IOException {
        Path target = root.resolve(module).resolve("target");
        Path cp = target.resolve("runtime.classpath");
        if (!Files.exists(cp)) {
            throw new IllegalStateException(cp + " is missing: build the project first (mvn install)");
        }
        return target.resolve("classes") + java.io.File.pathSeparator + Files.readString(cp).trim();
    }

    public static void awaitHealthy(ManagedProcess p, int port) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            if (!p.alive()) {
                throw new IllegalStateException(p.name() + " exited during start-up; see " + p.log());
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException(p.name() + " not healthy within 60 s; see " + p.log());
    }

    record Split(Path enroll, Path query, int people, int enrollImages, int queryImages) {
    }

    /**
     * Uses faces/enroll and faces/query when present. Otherwise, for a plain folder-per-person
     * dataset such as lfw5, links the first 70% of each person's images (in name order) as
     * enrollment and the rest as queries, without copying any image. The folders are listed by
     * {@link DatasetFolder} (its rules: links, nested and empty folders, non-image files), and every
     * listed image must decode before anything starts: a bad one stops the demo naming it. A person
     * with one image cannot be split into enrollment and query, so is left out, and the demo says so.
     */
    static Split split(Path faces, Path work) throws IOException {
        if (Files.isDirectory(faces.resolve("enroll")) && Files.isDirectory(faces.resolve("query"))) {
            DatasetFolder enroll = DatasetFolder.people(faces.resolve("enroll"));
            DatasetFolder query = DatasetFolder.imagesUnder(faces.resolve("query"));
            for (DatasetFolder d : List.of(enroll, query)) {
                requireDecodable(d);
            }
            return new Split(faces.resolve("enroll"), faces.resolve("query"), enroll.people().size(),
                    enroll.images().size(), query.images().size());
        }
        DatasetFolder listing = DatasetFolder.people(faces);
        requireDecodable(listing);
        List<String> single = listing.singleImagePeople();
        if (single.size() == listing.people().size()) {
            throw new BadDataset(faces + ": every person has one image; the demo enrolls some of each person's images"
                    + " and queries the rest, so it needs people with two or more");
        }
        if (!single.isEmpty()) {
            System.out.printf("left out %d people with one image (it cannot be split into enrollment and query): %s%n",
                    single.size(), String.join(", ", single));
        }
        Path enroll = Files.createDirectories(work.resolve("enroll"));
        Path query = Files.createDirectories(work.resolve("query"));
        int people = 0;
        int ne = 0;
        int nq = 0;
        for (DatasetFolder.Person person : listing.people()) {
            List<Path> imgs = person.images();
            if (imgs.size() < 2) {
                continue;
            }
            people++;
            int cut = (int) Math.round(imgs.size() * 0.7);
            for (int i = 0; i < imgs.size(); i++) {
                Path dir = Files.createDirectories((i < cut ? enroll : query).resolve(person.name()));
                Files.createSymbolicLink(dir.resolve(imgs.get(i).getFileName()), imgs.get(i).toAbsolutePath());
            }
            ne += cut;
            nq += imgs.size() - cut;
        }
        return new Split(enroll, query, people, ne, nq);
    }

    /** Says what the listing left out, and stops at the first image that does not decode, naming it. */
    private static void requireDecodable(DatasetFolder d) throws BadDataset {
        if (!d.skipped().isEmpty()) {
            System.out.printf("%s: %s%n", d.root(), DatasetFolder.summary(d.skipped()));
        }
        for (Path image : d.images()) {
            try {
                ImageDecoder.read(image).release();
            } catch (IOException e) {
                throw BadDataset.unusable(image, e);
            }
        }
    }

    /** Synchronized: a signal's shutdown hook may run it while the main thread does. */
    private static synchronized void stopAll(List<AutoCloseable> running, Path work, Path keepLogsIn) {
        for (int i = running.size() - 1; i >= 0; i--) {
            try {
                running.get(i).close();
            } catch (Exception e) {
                // best effort at shutdown
            }
        }
        running.clear();
        if (keepLogsIn != null) {
            try (Stream<Path> logs = Files.list(work)) {
                Files.createDirectories(keepLogsIn);
                for (Path log : logs.filter(p -> p.toString().endsWith(".log")).toList()) {
                    Files.copy(log, keepLogsIn.resolve(log.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            } catch (IOException e) {
                // logs are a convenience
            }
        }
        try (Stream<Path> s = Files.walk(work)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }
}
