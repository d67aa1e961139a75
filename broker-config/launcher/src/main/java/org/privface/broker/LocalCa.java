package org.privface.broker;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A certificate authority made at start-up for a broker on 127.0.0.1: the CA's certificate as PEM
 * (what clients trust) and the broker's key and certificate chain as PEM, its certificate signed
 * by the CA for IP 127.0.0.1. Signing uses the JDK's keytool, since the JDK has no public API to
 * sign a certificate and no X.509 builder library is on the classpath; what the KeyStore API can
 * do (reading the keys and certificates out) is done in-process, to keep keytool runs, each a JVM
 * start, to three rounds. Store passwords reach keytool through its environment, never its
 * command line. Everything stays in a directory only the owner can read.
 *
 * @param brokerKeyPem   the broker's private key, PKCS#8 PEM (Kafka's {@code ssl.keystore.key})
 * @param brokerChainPem the broker's certificate and the CA's (Kafka's {@code ssl.keystore.certificate.chain})
 */
public record LocalCa(Path caPem, String brokerKeyPem, String brokerChainPem) {

    public static LocalCa create(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        try {
            Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        } catch (UnsupportedOperationException e) {
            // not POSIX: the temporary directory is the only protection
        }
        byte[] b = new byte[24];
        new SecureRandom().nextBytes(b);
        String password = Base64.getUrlEncoder().withoutPadding().encodeToString(b);
        Path ca = dir.resolve("ca.p12");
        Path broker = dir.resolve("broker.p12");
        Path csr = dir.resolve("broker.csr");
        Path brokerPem = dir.resolve("broker.pem");
        List<String> store = List.of("-storetype", "PKCS12", "-storepass:env", "PRIVFACE_CA_PASS");
        run(dir, List.of(
                keytool(store, "-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1",
                        "-dname", "CN=privface local CA", "-ext", "bc:c", "-validity", "7", "-keystore", ca.toString()),
                keytool(store, "-genkeypair", "-alias", "broker", "-keyalg", "EC", "-groupname", "secp256r1",
                        "-dname", "CN=127.0.0.1", "-validity", "7", "-keystore", broker.toString())), password);
        run(dir, List.of(keytool(store, "-certreq", "-alias", "broker", "-keystore", broker.toString(),
                "-file", csr.toString())), password);
        run(dir, List.of(keytool(store, "-gencert", "-rfc", "-alias", "ca", "-keystore", ca.toString(), "-infile",
                csr.toString(), "-outfile", brokerPem.toString(), "-ext", "SAN=ip:127.0.0.1", "-validity", "7")), password);
        try {
            String caCert = pem("CERTIFICATE", load(ca, password).getCertificate("ca").getEncoded());
            Path caPem = dir.resolve("ca.pem");
            Files.writeString(caPem, caCert);
            String key = pem("PRIVATE KEY", load(broker, password).getKey("broker", password.toCharArray()).getEncoded());
            return new LocalCa(caPem, key, Files.readString(brokerPem).trim() + "\n" + caCert);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("reading the keys keytool made: " + e.getMessage(), e);
        }
    }

    private static KeyStore load(Path file, String password) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(file)) {
            ks.load(in, password.toCharArray());
        }
        return ks;
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    private static List<String> keytool(List<String> store, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        cmd.addAll(List.of(args));
        cmd.addAll(store);
        return cmd;
    }

    /** Runs the commands side by side; fails with keytool's own message if one fails. */
    private static void run(Path dir, List<List<String>> commands, String password) throws IOException, InterruptedException {
        List<Process> ps = new ArrayList<>();
        for (List<String> cmd : commands) {
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true);
            pb.environment().put("PRIVFACE_CA_PASS", password);
            ps.add(pb.start());
        }
        for (int i = 0; i < ps.size(); i++) {
            Process p = ps.get(i);
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("keytool " + commands.get(i).get(1) + " failed: " + out.trim());
            }
        }
    }

    @Override
    public String toString() {
        return "LocalCa[" + caPem + "]"; // never the key
    }
}
