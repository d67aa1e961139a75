package org.privface.localstack;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.privface.wire.security.PrincipalSpec;
import org.privface.wire.security.Security;
import org.privface.wire.topics.TopicSpec;
import org.privface.wire.topics.Topics;

/**
 * Who is who on the demo's broker: the principals broker-config/security.yml declares for the
 * demo's site, and one third-party recognizer declared in demo-security.yml the way a vendor is
 * declared in security.yml. Each service runs as its own principal; the demo itself reads the
 * published faces as the vendor and the results as the super user.
 *
 * @param broker              the running broker (plaintext or secured)
 * @param vendorCredentials   the vendor's Kafka client settings, mode 0600; null on a plaintext broker
 * @param operatorPasswordFile the console operator's password, mode 0600
 */
public record DemoSecurity(LocalBroker broker, Path vendorCredentials, Path operatorPasswordFile) {
    public static final String VENDOR = "demo-vendor";
    /** The console writes control records as this principal, never as the recognizer. */
    public static final String OPERATOR = "operator";
    public static final String RECOGNIZER = "recognizer";

    public static String agent(String site) {
        return "agent-" + site; // security.yml's agent-{site}
    }

    /** security.yml's principals for {@code site}, and the demo vendor. */
    public static List<PrincipalSpec> principals(String site) {
        List<PrincipalSpec> out = new ArrayList<>(Security.definitions(List.of(site)));
        try (InputStream in = DemoSecurity.class.getResourceAsStream("demo-security.yml")) {
            out.addAll(Security.parse(in, List.of(site)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** The site's topics and the vendor's results topic. */
    public static List<TopicSpec> topics(String site, List<PrincipalSpec> principals) {
        List<TopicSpec> out = new ArrayList<>(Topics.definitions(List.of(site)));
        out.addAll(Security.vendorTopics(principals));
        return out;
    }

    /**
     * Starts the demo's broker, secured unless {@code plaintext}, and writes the vendor's client
     * settings and the console operator's password to files only their owner can read, under
     * {@code work/credentials}.
     */
    public static DemoSecurity start(Path root, Path work, String site, boolean plaintext, String operatorPassword)
            throws Exception {
        List<PrincipalSpec> principals = principals(site);
        List<TopicSpec> topics = topics(site, principals);
        LocalBroker broker = plaintext ? LocalBroker.plaintext(root, work, topics)
                : LocalBroker.secured(root, work, topics, principals);
        try {
            Path dir = work.resolve("credentials");
            Path vendor = broker.secured() ? broker.writeClientFile(VENDOR, dir.resolve(VENDOR + ".properties")) : null;
            Path operator = LocalBroker.writeOwnerOnly(dir.resolve("console-operator.password"), operatorPassword + "\n");
            return new DemoSecurity(broker, vendor, operator);
        } catch (IOException | RuntimeException e) {
            broker.close();
            throw e;
        }
    }

    /** The summary's lines on how the broker is secured and how a vendor connects. */
    public List<String> summary(String site) {
        List<String> out = new ArrayList<>();
        if (!broker.secured()) {
            out.add(line("broker:", broker.bootstrap() + " PLAINTEXT (--plaintext): UNAUTHENTICATED, no ACLs;"
                    + " any local process may read and write every topic"));
            return out;
        }
        out.add(line("broker:", broker.bootstrap() + " SASL_SSL, SCRAM-SHA-512, ACLs from broker-config/security.yml"));
        out.add(line("principals:", agent(site) + " (agent), " + RECOGNIZER + ", " + OPERATOR + " (console's control writes), "
                + VENDOR + " (third-party recognizer)"));
        out.add(line("vendor " + VENDOR + ":", "reads " + Topics.enrollment(site) + ", " + Topics.query(site)
                + " and " + Topics.answer(site)
                + " in groups " + Security.vendorGroupPrefix(VENDOR) + "*, writes " + Security.vendorResultsTopic(VENDOR)));
        out.add(line("vendor credentials:", vendorCredentials + " (mode 0600; Kafka client properties)"));
        out.add(line("CA certificate:", broker.caFile().toString()));
        return out;
    }

    private static String line(String label, String text) {
        return String.format("%-22s%s", label, text);
    }
}
