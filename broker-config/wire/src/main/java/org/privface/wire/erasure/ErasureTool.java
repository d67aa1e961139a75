package org.privface.wire.erasure;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.privface.wire.control.SignedControl;

/**
 * The operator's erasure command line (docs/operations.md, "Forgetting a person"):
 * {@code ErasureTool --bootstrap HOST:PORT [--command-config FILE] --site SITE --label LABEL
 * --secret-file FILE --key-file FILE --key-id ID --operator NAME}. It computes the person's
 * pseudonym here, with the site's secret, so the label never leaves this machine, signs one
 * erasure command with the operator's Ed25519 key and writes it to the site's erasure topic; it
 * prints the pseudonym and the request id, by which the components' completion reports are found.
 */
public final class ErasureTool {
    private ErasureTool() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                usage("unexpected " + args[i]);
            }
            a.put(args[i].substring(2), args[i + 1]);
        }
        for (String k : new String[] {"bootstrap", "site", "label", "secret-file", "key-file", "key-id", "operator"}) {
            if (!a.containsKey(k)) {
                usage("--" + k + " is required");
            }
        }
        Properties p = new Properties();
        if (a.containsKey("command-config")) {
            try (InputStream in = Files.newInputStream(Path.of(a.get("command-config")))) {
                p.load(in);
            }
        }
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"));
        String site = a.get("site");
        Sent sent = send(p, site, a.get("label"), PersonKeys.load(Path.of(a.get("secret-file"))),
                SignedControl.privateKey(Files.readString(Path.of(a.get("key-file")))), a.get("key-id"), a.get("operator"));
        System.out.println("person " + sent.person() + " at " + site + ": erasure request " + sent.request()
                + " written; completion reports follow on privface." + site + ".erasure");
    }

    /** What was asked: the person's pseudonym and the request id. */
    public record Sent(String person, String request) {
    }

    /** Signs and writes one erasure command for {@code label} at {@code site}; waits for the broker's acknowledgement. */
    public static Sent send(Properties client, String site, String label, PersonKeys keys, java.security.PrivateKey key,
                            String keyId, String operator) throws Exception {
        String person = keys.pseudonym(site, label);
        String request = Erasures.newRequestId();
        Properties p = new Properties();
        p.putAll(client);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
            producer.send(Erasures.command(key, keyId, site, operator, System.currentTimeMillis(), person, request))
                    .get(30, TimeUnit.SECONDS);
        }
        return new Sent(person, request);
    }

    private static void usage(String why) throws IOException {
        System.err.println(why + "\nusage: ErasureTool --bootstrap HOST:PORT [--command-config FILE] --site SITE --label LABEL"
                + " --secret-file FILE --key-file FILE --key-id ID --operator NAME");
        System.exit(2);
    }
}
