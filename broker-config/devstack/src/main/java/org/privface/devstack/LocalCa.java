package org.privface.devstack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A certificate authority made at start-up for a broker on 127.0.0.1: the CA's certificate as PEM
 * (what clients trust) and the broker's PKCS12 key store, signed by it for IP 127.0.0.1. Made
 * with the JDK's keytool, since the JDK has no public API to sign a certificate and no X.509
 * builder library is on the classpath. Store passwords reach keytool through its environment,
 * never its command line. The CA's key stays in the directory, which only the owner can read.
 */
public record LocalCa(Path caPem, Path brokerKeyStore, String keyStorePassword) {

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
        Path caPem = dir.resolve("ca.pem");
        Path csr = dir.resolve("broker.csr");
        Path brokerPem = dir.resolve("broker.pem");
        List<String> store = List.of("-storetype", "PKCS12", "-storepass:env", "PRIVFACE_CA_PASS");
        // The two key pairs are independent, and so are the CA's export and the request.
        run(dir, List.of(
                keytool(store, "-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1",
                        "-dname", "CN=privface local CA", "-ext", "bc:c", "-validity", "7", "-keystore", ca.toString()),
                keytool(store, "-genkeypair", "-alias", "broker", "-keyalg", "EC", "-groupname", "secp256r1",
                        "-dname", "CN=127.0.0.1", "-validity", "7", "-keystore", broker.toString())), password);
        run(dir, List.of(
                keytool(store, "-exportcert", "-rfc", "-alias", "ca", "-keystore", ca.toString(), "-file", caPem.toString()),
                keytool(store, "-certreq", "-alias", "broker", "-keystore", broker.toString(), "-file", csr.toString())),
                password);
        run(dir, List.of(keytool(store, "-gencert", "-rfc", "-alias", "ca", "-keystore", ca.toString(), "-infile",
                csr.toString(), "-outfile", brokerPem.toString(), "-ext", "SAN=ip:127.0.0.1", "-validity", "7")), password);
        run(dir, List.of(keytool(store, "-importcert", "-noprompt", "-alias", "ca", "-keystore", broker.toString(),
                "-file", caPem.toString())), password);
        run(dir, List.of(keytool(store, "-importcert", "-alias", "broker", "-keystore", broker.toString(),
                "-file", brokerPem.toString())), password);
        return new LocalCa(caPem, broker, password);
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
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("keytool " + commands.get(i).get(1) + " failed: " + out.trim());
            }
        }
    }

    @Override
    public String toString() {
        return "LocalCa[" + caPem + "]"; // never the password
    }
}
