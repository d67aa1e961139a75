package org.privface.broker;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * A real Apache Kafka 4.x broker in its own JVM, from the jars that broker-config/server resolves,
 * configured from broker-config/kraft/dev-single-node.properties with free loopback ports and a
 * temporary data directory. {@link #stop()} and {@link #restart()} take it down and bring it back
 * on the same ports and data directory, so topics and records survive (fault tests).
 *
 * <p>With {@link Sasl} the broker authenticates and authorizes like production, on loopback:
 * one SASL_PLAINTEXT listener with SCRAM-SHA-512 for clients and inter-broker traffic, the
 * controller listener with SASL PLAIN (a static JAAS user: SCRAM credentials live in the metadata
 * log, which the controller quorum cannot depend on to authenticate itself), StandardAuthorizer
 * with {@code allow.everyone.if.no.acl.found=false} and the admin as the only super user. The
 * admin's SCRAM credential is written into the metadata log when the storage is formatted
 * ({@code kafka-storage format --add-scram}), so the broker can authenticate its own
 * inter-broker connection and the admin before any Admin API call has been made. With
 * {@code tls}, the client listener is SASL_SSL instead, with a {@link LocalCa} made at start-up.
 */
public final class KafkaServerProcess implements AutoCloseable {
    private static final List<String> JVM = List.of("-Xms256m", "-Xmx512m");

    private final String classpath;
    private final Path config;
    private final Path workDir;
    private final String bootstrapServers;
    private ManagedProcess process;
    private int starts;
    private LocalCa ca;
    /** The CA of each running TLS broker by its bootstrap address, so client settings can trust it. */
    private static final Map<String, Path> CA_BY_BOOTSTRAP = new java.util.concurrent.ConcurrentHashMap<>();

    private KafkaServerProcess(String classpath, Path config, Path workDir, String bootstrapServers) {
        this.classpath = classpath;
        this.config = config;
        this.workDir = workDir;
        this.bootstrapServers = bootstrapServers;
    }

    /** The file that lists the broker's jars; present once broker-config/server has been built. */
    public static Path classpathFile(Path root) {
        return root.resolve("broker-config/server/target/kafka-server.classpath");
    }

    /**
     * SASL with the given super user: see the class comment. Name and password are limited to
     * characters that need no quoting in a JAAS line or in {@code --add-scram}'s argument.
     */
    public record Sasl(String adminUser, String adminPassword, boolean tls) {
        public Sasl(String adminUser, String adminPassword) {
            this(adminUser, adminPassword, false);
        }

        public Sasl {
            if (!adminUser.matches("[A-Za-z0-9_.-]+") || !adminPassword.matches("[A-Za-z0-9_.-]+")) {
                throw new IllegalArgumentException("admin user or password unusable in a JAAS line or --add-scram");
            }
        }

        @Override
        public String toString() {
            return "Sasl[" + adminUser + "]"; // never the password
        }
    }

    public static KafkaServerProcess start(Path root, Path workDir) throws IOException, InterruptedException {
        return start(root, workDir, null);
    }

    /** The client settings for a SCRAM-SHA-512 user on a broker started with {@link Sasl}. */
    public static java.util.Properties scramClient(String bootstrap, String user, String password) {
        java.util.Properties p = new java.util.Properties();
        p.put("bootstrap.servers", bootstrap);
        Path ca = CA_BY_BOOTSTRAP.get(bootstrap);
        p.put("security.protocol", ca == null ? "SASL_PLAINTEXT" : "SASL_SSL");
        if (ca != null) {
            p.put("ssl.truststore.type", "PEM");
            p.put("ssl.truststore.location", ca.toString());
        }
        p.put("sasl.mechanism", "SCRAM-SHA-512");
        p.put("sasl.jaas.config", scramJaas(user, password));
        return p;
    }

    public static String scramJaas(String user, String password) {
        return "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user
                + "\" password=\"" + password + "\";";
    }

    /** Starts a broker; with {@code sasl} non-null, secured as in the class comment. */
    public static KafkaServerProcess start(Path root, Path workDir, Sasl sasl) throws IOException, InterruptedException {
        Path cpFile = classpathFile(root);
        if (!Files.exists(cpFile)) {
            throw new IllegalStateException(cpFile + " is missing: build broker-config/server first (mvn install)");
        }
        String classpath = Files.readString(cpFile).trim();
        int port = freePort();
        int controllerPort = freePort();
        Properties props = new Properties();
        try (var in = Files.newInputStream(root.resolve("broker-config/kraft/dev-single-node.properties"))) {
            props.load(in);
        }
        props.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
        props.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
        props.setProperty("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
        LocalCa ca = sasl != null && sasl.tls() ? LocalCa.create(workDir.resolve("tls")) : null;
        if (sasl != null) {
            secure(props, sasl, port, controllerPort, ca);
        }
        Path data = Files.createDirectories(workDir.resolve("kafka-data"));
        props.setProperty("log.dirs", data.toString());
        Path config = workDir.resolve("server.properties");
        try (var out = Files.newOutputStream(config)) {
            props.store(out, "generated by the demo from broker-config/kraft/dev-single-node.properties");
        }
        if (sasl != null) {
            restrictToOwner(config); // it holds the admin's password
        }
        // Kafka's own generator: its ids never start with '-', which kafka-storage would read as an option
        // (a plain URL-safe Base64 UUID does 1 time in 64, and the format fails).
        String clusterId = org.apache.kafka.common.Uuid.randomUuid().toString();
        // kafka-storage prints the bootstrap records, the admin's SCRAM salt and keys among them.
        try (ManagedProcess format = ManagedProcess.java("kafka-format", classpath, "kafka.tools.StorageTool", JVM,
                formatArgs(clusterId, config, sasl), Map.of(), workDir, KafkaServerProcess::holdsScramSecrets)) {
            if (format.await(Duration.ofSeconds(60)) != 0) {
                throw new IllegalStateException("formatting the KRaft log failed; see " + format.log());
            }
        }
        KafkaServerProcess k = new KafkaServerProcess(classpath, config, workDir, "127.0.0.1:" + port);
        k.ca = ca;
        if (ca != null) {
            CA_BY_BOOTSTRAP.put(k.bootstrapServers, ca.caPem());
        }
        k.launch();
        return k;
    }

    /** A kafka-storage output line that holds a SCRAM credential (salt, stored key, server key). */
    public static boolean holdsScramSecrets(String line) {
        return line.contains("UserScramCredentialRecord") || line.contains("storedKey") || line.contains("serverKey")
                || line.contains("salt=");
    }

    private static List<String> formatArgs(String clusterId, Path config, Sasl sasl) {
        List<String> args = new java.util.ArrayList<>(List.of("format", "-t", clusterId, "-c", config.toString()));
        if (sasl != null) {
            // KIP-900: the admin's SCRAM credential goes into the bootstrap metadata.
            args.addAll(List.of("--add-scram",
                    "SCRAM-SHA-512=[name=" + sasl.adminUser() + ",password=" + sasl.adminPassword() + "]"));
        }
        return args;
    }

    /**
     * Replaces the PLAINTEXT listener with SASL_PLAINTEXT, or SASL_SSL with {@code ca}'s broker
     * certificate (SCRAM-SHA-512 either way), and turns the authorizer on.
     */
    private static void secure(Properties props, Sasl sasl, int port, int controllerPort, LocalCa ca) {
        String listener = ca == null ? "SASL_PLAINTEXT" : "SASL_SSL";
        props.setProperty("listeners", listener + "://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
        props.setProperty("advertised.listeners", listener + "://127.0.0.1:" + port);
        props.setProperty("inter.broker.listener.name", listener);
        props.setProperty("listener.security.protocol.map", "CONTROLLER:SASL_PLAINTEXT," + listener + ":" + listener);
        props.setProperty("sasl.enabled.mechanisms", "SCRAM-SHA-512");
        props.setProperty("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-512");
        props.setProperty("listener.name." + listener.toLowerCase(java.util.Locale.ROOT) + ".scram-sha-512.sasl.jaas.config",
                scramJaas(sasl.adminUser(), sasl.adminPassword()));
        if (ca != null) {
            // PEM values, not files: server.properties is the owner's alone, as for the JAAS lines.
            props.setProperty("ssl.keystore.type", "PEM");
            props.setProperty("ssl.keystore.key", ca.brokerKeyPem());
            props.setProperty("ssl.keystore.certificate.chain", ca.brokerChainPem());
            // The broker connects to itself (inter-broker) and must trust its own CA.
            props.setProperty("ssl.truststore.type", "PEM");
            props.setProperty("ssl.truststore.location", ca.caPem().toString());
        }
        props.setProperty("sasl.mechanism.controller.protocol", "PLAIN");
        props.setProperty("listener.name.controller.sasl.enabled.mechanisms", "PLAIN");
        props.setProperty("listener.name.controller.plain.sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + sasl.adminUser()
                        + "\" password=\"" + sasl.adminPassword() + "\" user_" + sasl.adminUser() + "=\""
                        + sasl.adminPassword() + "\";");
        props.setProperty("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        props.setProperty("allow.everyone.if.no.acl.found", "false");
        props.setProperty("super.users", "User:" + sasl.adminUser());
    }

    private static void restrictToOwner(Path file) throws IOException {
        try {
            Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: the temporary directory is the only protection
        }
    }

    /** Starts the broker JVM on the formatted data directory and waits until it serves. */
    private void launch() throws IOException, InterruptedException {
        starts++;
        // A log file per start: the wait below looks for the start-up line in it.
        ManagedProcess broker = ManagedProcess.java(starts == 1 ? "kafka" : "kafka-" + starts, classpath, "kafka.Kafka",
                JVM, List.of(config.toString()), Map.of(), workDir);
        try {
            broker.awaitLog("Kafka Server started", Duration.ofSeconds(60));
        } catch (RuntimeException | IOException | InterruptedException e) {
            broker.close();
            throw e;
        }
        process = broker;
    }

    /**
     * Stops the broker (SIGTERM: a controlled shutdown; SIGKILL if it takes longer than 15 s). Its
     * ports and data directory stay this object's, for {@link #restart()}.
     */
    public synchronized void stop() {
        if (process != null) {
            process.close();
            process = null;
        }
    }

    /** Starts the broker again (stopping it first if it runs) on the same ports and data directory. */
    public synchronized void restart() throws IOException, InterruptedException {
        stop();
        launch();
    }

    public synchronized boolean running() {
        return process != null && process.alive();
    }

    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 0, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    /** The CA certificate (PEM) clients must trust, or null on a broker without TLS. */
    public Path caFile() {
        return ca == null ? null : ca.caPem();
    }

    /** The broker's certificate authority and key, or null on a broker without TLS. */
    public LocalCa tls() {
        return ca;
    }

    /** Where the broker's logs go, one file per start (kafka.log, kafka-2.log, ...). */
    public Path workDir() {
        return workDir;
    }

    /** The broker JVM's process id, e.g. to read its resident memory or set its CPU affinity. */
    public long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        CA_BY_BOOTSTRAP.remove(bootstrapServers);
        stop();
    }
}
