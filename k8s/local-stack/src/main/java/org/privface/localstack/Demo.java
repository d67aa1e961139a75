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
import java.util.Properties;
import java.util.stream.Stream;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.privface.agent.capture.ImageDecoder;
import org.privface.agent.dataset.BadDataset;
import org.privface.agent.dataset.DatasetFolder;
import org.privface.broker.KafkaServerProcess;
import org.privface.broker.ManagedProcess;
import org.privface.wire.FaceRecords;
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
                "--components", "8", "--enroll-releases", "4"));
        // After the run, keep everything up this long (e.g. 30m) with a live camera, for the console.
        m.put("--hold", "0");
        m.put("--operator", "operator");
        // Empty: the console password comes from PRIVFACE_CONSOLE_PASSWORD, or a random one (in a 0600 file).
        m.put("--password", "");
        // "true" (the flag --plaintext alone): the broker without authentication or ACLs, as before issue 24.
        m.put("--plaintext", "false");
        // The agent's face detector: haar, yunet (falls back to ultraface without its model) or ultraface (docs/face-stack.md).
        m.put("--detector", "yunet");
        return m;
    }

    /** What one run produced, keyed by event id; enough to check it and to print it. */
    public record Outcome(Map<String, String> originOfQuery, Map<String, PerturbedFace> published,
                          Map<String, RecognitionResult> results, int correct, int people, int majority, Path basisFile,
                          Stack stack, List<String> faceStack) {
        public double accuracy() {
            return correct / (double) Math.max(1, originOfQuery.size());
        }

        public long enrollmentReleases() {
            return published.values().stream().filter(f -> f.getEnrollmentLabel() != null).count();
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
        int recognizerPort = KafkaServerProcess.freePort();
        ManagedProcess recognizer = ManagedProcess.java("recognizer", classpath(root, "recognizer"),
                "org.privface.recognizer.Application",
                List.of("-Xmx1g", "-Dai.djl.offline=true", "-Dmicronaut.server.port=" + recognizerPort,
                        login.recognizerOption(),
                        "-Drecognizer.console.signing-key-file=" + signingKey,
                        "-Drecognizer.console.signing-key-id=console",
                        "-Drecognizer.console.sample-interval=2s",
                        "-Drecognizer.console.audit-file=" + work.resolve("console-audit.jsonl"),
                        // PyTorch's spinning OpenMP pool slows training 5-10x when it shares cores.
                        "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1"),
                List.of(), recognizerEnv, work);
        running.add(recognizer);
        awaitHealthy(recognizer, recognizerPort);
        System.out.printf("recognizer: up on 127.0.0.1:%d (%.1f s)%n", recognizerPort, (System.nanoTime() - t0) / 1e9);

        Path ledger = work.resolve("ledger.csv");
        Path basisFile = work.resolve("basis.bin");
        int agentPort = KafkaServerProcess.freePort();
        ManagedProcess agent = ManagedProcess.java("agent", classpath(root, "agent"), "org.privface.agent.Application",
                List.of("-Xmx1g", "-Dmicronaut.server.port=" + agentPort,
                        "-Dagent.site-id=" + SITE,
                        "-Dagent.gateway-id=demo-gateway",
                        "-Dagent.control.report-interval=2s",
                        "-Dagent.control.keys-file=" + operatorKeys,
                        "-Dagent.enroll-folder=" + split.enroll(),
                        "-Dagent.source=" + split.query(),
                        "-Dagent.ledger=" + ledger,
                        "-Dagent.basis-file=" + basisFile,
                        "-Dagent.exit-when-done=true",
                        "-Dagent.data-dir=" + work.resolve("agent-data"),
                        "-Dagent.epsilon=" + opt.get("--epsilon"),
                        // The demo's own configuration is the gateway's: its floor admits the ε asked for.
                        "-Dagent.floor.epsilon-max=" + Math.max(100, Double.parseDouble(opt.get("--epsilon"))),
                        "-Dagent.mechanism=" + opt.get("--mechanism"),
                        "-Dagent.sensitivity-mode=" + opt.get("--mode"),
                        "-Dagent.components=" + opt.get("--components"),
                        "-Dagent.detector=" + opt.get("--detector"),
                        // YuNet, when asked for, from FACE_MODELS or else the shared models beside the checkout.
                        "-Dprivface.models=" + root.resolve("../shared/models").normalize(),
                        "-Dagent.enroll-releases=" + opt.get("--enroll-releases")),
                List.of(), env, work);
        running.add(agent);
        int agentExit = agent.await(Duration.ofMinutes(2));
        if (agentExit != 0) {
            throw new IllegalStateException("agent failed with exit code " + agentExit + "; its log:\n"
                    + Files.readString(agent.log()));
        }

        Map<String, String> originOf = new LinkedHashMap<>();
        for (String line : Files.readAllLines(ledger)) {
            int comma = line.indexOf(',');
            originOf.put(line.substring(0, comma), line.substring(comma + 1));
        }
        // Read as the vendor would: its grants are enough for every face the gateway published.
        Map<String, PerturbedFace> published = readAll(broker.client(DemoSecurity.VENDOR),
                List.of(Topics.enrollment(SITE), Topics.query(SITE)),
                -1, Duration.ofSeconds(10), FaceRecords::decodeFace, PerturbedFace::getEventId);
        // Nobody but the super user reads the product's own results.
        Map<String, RecognitionResult> results = readAll(broker.client(LocalBroker.ADMIN), List.of(Topics.RESULTS), originOf.size(),
                Duration.ofSeconds(90), FaceRecords::decodeResult, RecognitionResult::getEventId);

        int correct = 0;
        Map<String, Integer> perPerson = new HashMap<>();
        for (Map.Entry<String, String> e : originOf.entrySet()) {
            String truth = Path.of(e.getValue()).getName(0).toString();
            perPerson.merge(truth, 1, Integer::sum);
            RecognitionResult r = results.get(e.getKey());
            if (r != null && truth.equals(r.getPredictedLabel())) {
                correct++;
            }
        }
        int majority = perPerson.values().stream().max(Integer::compare).orElse(0);
        // Under agent.basis-fit=private (the default) the agent keeps the basis it fitted privately in its data dir.
        basisFile = keptPrivateBasis(work.resolve("agent-data")).orElse(basisFile);
        return new Outcome(originOf, published, results, correct, perPerson.size(), majority, basisFile,
                new Stack(bootstrap, recognizerPort, login.operator(), login.password(), split.enroll(), split.query(), basisFile,
                        SITE, operatorKeys, security), faceStack(agent.log()));
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
        double epsFace = o.published().values().stream().mapToDouble(f -> f.getMechanism().getEpsilonPerFace())
                .max().orElse(0);
        PerturbedFace any = o.published().values().iterator().next();
        int queries = o.originOfQuery().size();
        System.out.println();
        System.out.println("=== privface demo summary ===");
        System.out.printf("site id:              %s (topics %s, %s)%n", o.stack().site(),
                Topics.enrollment(o.stack().site()), Topics.query(o.stack().site()));
        o.stack().security().summary(o.stack().site()).forEach(System.out::println);
        for (String line : o.faceStack()) {
            System.out.println(line);
        }
        System.out.printf("mechanism:            %s, mode %s, %d components, basis %s%n",
                any.getMechanism().getName(), any.getMechanism().getSensitivityMode(), any.getDimension(), any.getMechanism().getBasisId());
        System.out.printf("epsilon per face:     %.3f (at most %.4f for one coordinate) on every record%n", epsFace,
                any.getMechanism().getEpsilonPerCoordinate());
        System.out.printf("faces detected:       %d in query frames%n", queries);
        PerturbedFace query = o.published().values().stream().filter(f -> f.getEnrollmentLabel() == null)
                .findFirst().orElse(any);
        System.out.printf("per-track budget:     %s, epsilon %.3f per track (each query image is its own track)%n",
                query.getTrack() == null ? "none" : query.getTrack().getBudgetPolicy(),
                query.getTrack() == null ? 0 : query.getTrack().getEpsilonBudget());
        long enrolledImages = o.published().values().stream().filter(f -> f.getEnrollmentLabel() != null)
                .map(f -> f.getTrackId()).distinct().count();
        System.out.printf("enrollment:           %d releases of %d enrolled images (%d each: %.1f epsilon per enrolled image, composed)%n",
                o.enrollmentReleases(), enrolledImages, o.enrollmentReleases() / Math.max(1, enrolledImages),
                epsFace * o.enrollmentReleases() / Math.max(1, enrolledImages));
        System.out.printf("records published:    %d%n", o.published().size());
        long unknown = o.results().values().stream().filter(r -> r.getPredictedLabel() == null).count();
        System.out.printf("records recognized:   %d of %d queries (%d answered \"unknown\")%n", o.results().size(), queries,
                unknown);
        System.out.printf("accuracy:             %.1f%% (%d/%d); chance %.1f%%, majority class %.1f%%%n",
                100.0 * o.accuracy(), o.correct(), queries, 100.0 / Math.max(1, o.people()),
                100.0 * o.majority() / Math.max(1, queries));
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
            long deadline = System.nanoTime() + timeout.toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    T record = decode.apply(r.value());
                    out.put(eventId.apply(record), record);
                }
                boolean caughtUp = tps.stream().allMatch(tp -> c.position(tp) >= end.get(tp));
                if (expected < 0 ? caughtUp : out.size() >= expected) {
                    break;
                }
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
