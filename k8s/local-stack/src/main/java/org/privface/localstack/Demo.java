package org.privface.localstack;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.HashSet;

import org.privface.agent.dataset.BadDataset;
import org.privface.broker.KafkaServerProcess;
import org.privface.broker.ManagedProcess;
import org.privface.wire.FaceRecords;
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
    static final String SITE = "demo-site";
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
        // The query images as a camera sees people walking past (issue 45): each person's photos N at a time as the
        // consecutive frames of one track (DemoFaces.clips), so the gateway answers once per track, decoding up to
        // agent.answer.track-faces of its faces together. 1: unrelated stills, each face its own track, as before.
        m.put("--clip-frames", "3");
        // The templates' releases per enrolled image and their ε (agent.answer.template-releases, -epsilon); empty:
        // the agent's defaults (2 at ε 20). "--template-releases 1 --template-epsilon <ε>" is the template enrollment
        // before issue 45.
        // Unseen strangers played as clips too (issue 45): this many lfw-public people of the half the threshold's
        // calibration never saw, one clip of their first --clip-frames photos each; the summary gives the share of
        // their tracks named, the false-positive rate of the shipped path. 0: none.
        m.put("--stranger-clips", "0");
        m.put("--template-releases", "");
        m.put("--template-epsilon", "");
        return m;
    }

    /**
     * What one run produced, keyed by event id; enough to check it and to print it. Accuracy counts
     * only {@code labelled} faces: {@value org.privface.agent.detect.LabelledFace#RULE}
     * ({@link org.privface.agent.detect.LabelledFace}). The other faces of query images were released
     * too and are reported apart, as unlabelled.
     */
    public record Outcome(Map<String, String> originOfQuery, Set<String> labelled, int queryImages, int clips,
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
    public record Score(int correct, int scored, int majority, Set<String> faces, int unknown) {
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
            DemoProcesses.stopAll(running, work, keptLogs);
            System.out.println("demo stopped by a signal; logs in " + root.relativize(keptLogs));
            System.out.flush();
            Runtime.getRuntime().halt(0);
        }, "demo-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        long t0 = System.nanoTime();
        int exit;
        try {
            Outcome o = execute(root, faces, opt, work, running);
            DemoSummary.print(o, root);
            exit = o.results().size() == o.originOfQuery().size() && !o.originOfQuery().isEmpty() ? 0 : 1;
            if (o.answerScore().scored() > 0 && o.vectors().scored() > 0
                    && !o.answerScore().faces().equals(o.vectors().faces())) {
                exit = 1; // both forms must be scored on the same faces
            }
            String h = opt.get("--hold").toUpperCase(java.util.Locale.ROOT);
            Duration hold = h.matches("0+") ? Duration.ZERO : Duration.parse("PT" + h);
            if (!hold.isZero()) {
                DemoProcesses.startLiveGateway(root, o.stack(), opt, work, running, 5);
                System.out.printf("%nconsole:              %s  (operator %s, password in %s)%n", o.stack().consoleUrl(),
                        o.stack().operator(), o.stack().security().operatorPasswordFile());
                System.out.printf("holding for %s with a live camera looping the query frames; Ctrl-C stops%n", hold);
                Thread.sleep(hold.toMillis());
            }
        } finally {
            DemoProcesses.stopAll(running, work, keptLogs);
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
        DemoFaces.Split split = DemoFaces.split(faces, work);
        System.out.printf("faces: %s (%d people; %d enrollment images, %d query frames)%n", faces,
                split.people(), split.enrollImages(), split.queryImages());
        int clipFrames = Integer.parseInt(opt.get("--clip-frames"));
        if (clipFrames < 1) {
            throw new IllegalArgumentException("--clip-frames must be at least 1, not " + clipFrames);
        }
        List<org.privface.agent.dataset.DatasetFolder.Person> strangerClips = clipFrames < 2 ? List.of()
                : DemoFaces.unseenStrangers(root, Integer.parseInt(opt.get("--stranger-clips")), clipFrames);
        if (clipFrames > 1) {
            split = DemoFaces.clips(split, clipFrames, strangerClips, work);
            if (!strangerClips.isEmpty()) {
                System.out.printf("query camera strangers: %d clips of %d photos of lfw-public people the gallery's"
                        + " threshold never saw%n", strangerClips.size(), clipFrames);
            }
            System.out.printf("query camera: %d clips of up to %d photos of one person, played as one camera's frames"
                    + " (a track each; %d empty frames between clips end it)%n", split.clips(), clipFrames,
                    DemoFaces.GAP_FRAMES);
        }

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
            Optional<DemoFaces.Strangers> strangers = DemoFaces.strangers(root, opt.get("--strangers"), work);
            heldOut = strangers.flatMap(DemoFaces.Strangers::heldOut).orElse(null);
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
        ManagedProcess recognizer = ManagedProcess.java("recognizer", DemoProcesses.classpath(root, "recognizer"),
                "org.privface.recognizer.Application", recognizerOptions, List.of(), recognizerEnv, work);
        running.add(recognizer);
        DemoProcesses.awaitHealthy(recognizer, recognizerPort);
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
                "-Dagent.enroll-releases=" + opt.get("--enroll-releases"),
                // Clips are one camera's frames, tracked; stills are each their own appearance.
                "-Dagent.folder-frames=" + (split.clips() > 0 ? "sequence" : "stills"),
                // Each clip is a different appearance, scored on its own, as each still was (a still is never
                // linked): linking would charge a person's later clips to their first within the window and
                // release them nothing (docs/privacy.md), which is the site's guarantee, not an accuracy.
                "-Dagent.link.enabled=false");
        agentOptions = new ArrayList<>(agentOptions);
        for (String o : List.of("--template-releases", "--template-epsilon")) {
            if (!opt.get(o).isEmpty()) {
                agentOptions.add("-Dagent.answer." + o.substring(2) + "=" + opt.get(o));
            }
        }
        // A bound for a hung agent, not a speed target: a real folder set (lfw5: 1,140 images, each embedded
        // by dlib) takes minutes on a shared 2-core machine, and a JVM's start alone a minute when it is busy.
        Duration agentBound = Duration.ofSeconds(180 + 2L * (split.enrollImages() + split.queryImages())
                + (long) split.clips() * DemoFaces.GAP_FRAMES / 10);
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
            ManagedProcess enrol = ManagedProcess.java("agent-enrol", DemoProcesses.classpath(root, "agent"), "org.privface.agent.Application",
                    enrolOptions, List.of(), env, work);
            running.add(enrol);
            DemoProcesses.awaitExit(enrol, agentBound);
            System.out.printf("agent: enrollment released (%.1f s)%n", (System.nanoTime() - t0) / 1e9);
            gallery = DemoTopics.awaitGallery(broker, Duration.ofSeconds(120));
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
                    openSet += "\nunseen strangers:     " + DemoSummary.unseenFpir(gallery, unseen.get(), answerEpsilon);
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
            agent = ManagedProcess.java(passes.size() == 1 ? "agent" : "agent-" + pass, DemoProcesses.classpath(root, "agent"),
                    "org.privface.agent.Application", options, List.of(), env, work);
            running.add(agent);
            DemoProcesses.awaitExit(agent, agentBound);
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
        Map<String, PerturbedFace> published = DemoTopics.readAll(broker.client(DemoSecurity.VENDOR),
                List.of(Topics.enrollment(SITE), Topics.query(SITE)),
                -1, Duration.ofSeconds(10), FaceRecords::decodeFace, PerturbedFace::getEventId);
        Map<String, FaceAnswer> answers = answering ? DemoTopics.readAll(broker.client(DemoSecurity.VENDOR),
                List.of(Topics.answer(SITE)), -1, Duration.ofSeconds(10),
                b -> FaceRecords.decodeAnswerFromTopic(Topics.answer(SITE), b), FaceAnswer::getEventId) : Map.of();
        // Nobody but the super user reads the product's own results.
        Map<String, RecognitionResult> results = DemoTopics.readAll(broker.client(LocalBroker.ADMIN), List.of(Topics.RESULTS), originOf.size(),
                Duration.ofSeconds(Math.max(90, originOf.size())), FaceRecords::decodeResult, RecognitionResult::getEventId);

        Set<String> vectorIds = new HashSet<>();
        published.values().stream().filter(f -> f.getEnrollmentLabel() == null).forEach(f -> vectorIds.add(f.getEventId()));
        Score vectors = DemoSummary.score(originOf, labelled, results, vectorIds);
        Score answerScore = DemoSummary.score(originOf, labelled, results, answers.keySet());
        Set<String> people = new HashSet<>();
        originOf.values().forEach(o -> people.add(Path.of(o).getName(0).toString()));
        // Under agent.basis-fit=private (the default) the agent keeps the basis it fitted privately in its data dir.
        basisFile = DemoProcesses.keptPrivateBasis(work.resolve("agent-data")).orElse(basisFile);
        return new Outcome(originOf, labelled, split.queryImages(), split.clips(), published, answers, results, vectors, answerScore,
                split.people(), Integer.parseInt(opt.get("--enroll-releases")), basisFile,
                new Stack(bootstrap, recognizerPort, login.operator(), login.password(), split.enroll(), split.query(), basisFile,
                        SITE, operatorKeys, security), DemoProcesses.faceStack(agent.log()), release, gallery, openSet);
    }

}
