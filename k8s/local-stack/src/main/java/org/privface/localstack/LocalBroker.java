package org.privface.localstack;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.privface.broker.LocalCa;
import org.privface.broker.KafkaServerProcess;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.privface.wire.security.PrincipalSpec;
import org.privface.wire.security.SecurityApplier;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.TopicSpec;

/**
 * A Kafka broker process on loopback with its topics, and the client settings of each principal.
 * {@link #secured} runs it as production does (SASL_SSL with SCRAM-SHA-512, a {@link LocalCa} made
 * at start-up, StandardAuthorizer denying whatever no ACL allows) with every principal's user and
 * ACLs applied by {@link SecurityApplier}, each with a fresh random password that stays in this
 * JVM and in the files {@link #writeClientFile} writes for the owner alone. {@link #plaintext} is
 * the unauthenticated broker: any local process may read and write every topic.
 */
public final class LocalBroker implements AutoCloseable {
    /** The super user; the only one not declared in security.yml. */
    public static final String ADMIN = "admin";

    private final KafkaServerProcess kafka;
    /** Empty on a plaintext broker. Never printed or logged. */
    private final Map<String, String> passwords;
    private final SecurityApplier.Report applied;

    private LocalBroker(KafkaServerProcess kafka, Map<String, String> passwords, SecurityApplier.Report applied) {
        this.kafka = kafka;
        this.passwords = passwords;
        this.applied = applied;
    }

    /** PLAINTEXT, no authentication, no ACLs; the topics created. */
    public static LocalBroker plaintext(Path root, Path work, List<TopicSpec> topics) throws Exception {
        KafkaServerProcess kafka = KafkaServerProcess.start(root, work);
        try {
            Properties p = new Properties();
            p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            try (Admin admin = Admin.create(p)) {
                new TopicApplier(admin).apply(topics);
            }
            return new LocalBroker(kafka, Map.of(), null);
        } catch (Exception e) {
            kafka.close();
            throw e;
        }
    }

    /**
     * SASL_SSL with the principals' users and ACLs and the topics applied, as {@link SecurityApplier}'s
     * command does on a real cluster (topics, then users, then ACLs).
     */
    public static LocalBroker secured(Path root, Path work, List<TopicSpec> topics, List<PrincipalSpec> principals)
            throws Exception {
        Map<String, String> passwords = new LinkedHashMap<>();
        passwords.put(ADMIN, secret());
        principals.stream().filter(p -> !p.retired()).forEach(p -> passwords.put(p.name(), secret()));
        KafkaServerProcess kafka = KafkaServerProcess.start(root, work, new KafkaServerProcess.Sasl(ADMIN, passwords.get(ADMIN), true));
        try {
            SecurityApplier.Report applied;
            try (Admin admin = Admin.create(KafkaServerProcess.scramClient(kafka.bootstrapServers(), ADMIN, passwords.get(ADMIN)))) {
                applied = new SecurityApplier(admin).apply(topics, principals, u -> Optional.ofNullable(passwords.get(u)),
                        false, false);
            }
            return new LocalBroker(kafka, Map.copyOf(passwords), applied);
        } catch (Exception e) {
            kafka.close();
            throw e;
        }
    }

    /** A random password of URL-safe characters that never starts with '-' (kafka-storage's arguments). */
    public static String secret() {
        byte[] b = new byte[18];
        new SecureRandom().nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b).replace('-', 'x');
    }

    public boolean secured() {
        return !passwords.isEmpty();
    }

    public String bootstrap() {
        return kafka.bootstrapServers();
    }

    /** The CA certificate (PEM) clients trust; null on a plaintext broker. */
    public Path caFile() {
        return kafka.caFile();
    }

    /** What the applier did when the broker started; null on a plaintext broker. */
    public SecurityApplier.Report applied() {
        return applied;
    }

    /** Every principal's password by user name, for tests that log in with a wrong one. */
    Map<String, String> passwords() {
        return passwords;
    }

    public KafkaServerProcess process() {
        return kafka;
    }

    /** Kafka client settings as {@code user}: bootstrap, SASL_SSL, SCRAM login, the CA. Plaintext: the bootstrap only. */
    public Properties client(String user) {
        if (!secured()) {
            Properties p = new Properties();
            p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
            return p;
        }
        String password = passwords.get(user);
        if (password == null) {
            throw new IllegalArgumentException("no such principal on this broker: " + user);
        }
        return KafkaServerProcess.scramClient(bootstrap(), user, password);
    }

    /**
     * {@link #client} as the environment variables the services read ({@code kafka.*} from
     * {@code KAFKA_*}): keeps the password off their command lines and out of their logs.
     */
    public Map<String, String> serviceEnvironment(String user) {
        return environment("KAFKA_", client(user));
    }

    /** Client settings as environment variables under a prefix: {@code sasl.jaas.config} is {@code <prefix>SASL_JAAS_CONFIG}. */
    public static Map<String, String> environment(String prefix, Properties client) {
        Map<String, String> env = new LinkedHashMap<>();
        client.stringPropertyNames().stream().sorted().forEach(k -> env.put(
                prefix + k.toUpperCase(Locale.ROOT).replace('.', '_'), client.getProperty(k)));
        return env;
    }

    /**
     * {@code user}'s client settings as a Java properties file that only its owner may read or
     * write (created so: there is no moment it is readable by others), usable as is by Kafka's
     * Java clients and tools ({@code --command-config}, {@code --consumer.config}).
     */
    public Path writeClientFile(String user, Path file) throws IOException {
        Properties p = client(user);
        StringBuilder text = new StringBuilder("# Kafka client settings for ").append(user)
                .append(" on the demo broker; its password is in sasl.jaas.config. Readable by its owner only.\n");
        for (String k : new java.util.TreeSet<>(p.stringPropertyNames())) {
            text.append(k).append('=').append(p.getProperty(k).replace("\\", "\\\\")).append('\n');
        }
        return writeOwnerOnly(file, text.toString());
    }

    /** Writes a file created with mode 0600 (where the file system has POSIX modes). */
    public static Path writeOwnerOnly(Path file, String text) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.deleteIfExists(file);
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            Files.createFile(file); // not POSIX: the directory is the only protection
        }
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write(text);
        }
        return file;
    }

    /**
     * Every secret of this broker: the passwords and the broker's private key (its PEM body), for
     * tests that check none of them reaches a log or the terminal.
     */
    public List<String> secrets() {
        List<String> out = new ArrayList<>(passwords.values());
        if (kafka.tls() != null) {
            // The key's second PEM line: the first starts with the same header bytes in every P-256 key.
            out.add(kafka.tls().brokerKeyPem().split("\n")[2]);
        }
        return out;
    }

    /** Waits until {@code user} can log in (a describe-cluster call); fails after {@code timeout}. */
    public void awaitAuthenticates(String user, Duration timeout) throws InterruptedException {
        awaitAuthenticates(client(user), timeout);
    }

    /** Waits until these client settings can log in (a describe-cluster call); fails after {@code timeout}. */
    public static void awaitAuthenticates(Properties client, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Properties p = new Properties();
            p.putAll(client);
            p.put("default.api.timeout.ms", 5_000);
            p.put("request.timeout.ms", 5_000);
            try (Admin a = Admin.create(p)) {
                a.describeCluster().nodes().get(10, TimeUnit.SECONDS);
                return;
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("cannot log in within " + timeout + ": " + e, e);
                }
                Thread.sleep(250);
            }
        }
    }

    @Override
    public void close() {
        kafka.close();
    }
}
