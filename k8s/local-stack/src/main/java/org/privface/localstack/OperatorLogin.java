package org.privface.localstack;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.privface.recognizer.console.PasswordHash;

/**
 * An operator of a recognizer the stack starts: the operators file it is started with
 * ({@code -Drecognizer.console.operators-file=}) and the login that gives the bearer token its
 * API needs.
 */
public record OperatorLogin(String operator, String password, Path file) {

    /** A new operator with a random password, unless one is given; the hash goes to {@code dir/operators}. */
    public static OperatorLogin create(Path dir, String operator, String password) throws IOException {
        String pw = password;
        if (pw == null || pw.isEmpty()) {
            pw = LocalBroker.secret();
        }
        Path file = dir.resolve("operators");
        Files.writeString(file, operator + ":" + PasswordHash.hash(pw.toCharArray()) + "\n");
        return new OperatorLogin(operator, pw, file);
    }

    public static OperatorLogin create(Path dir) throws IOException {
        return create(dir, "operator", null);
    }

    /** The JVM option that makes a recognizer accept this operator. */
    public String recognizerOption() {
        return "-Drecognizer.console.operators-file=" + file;
    }

    /** Logs in at the recognizer on {@code port}; the token goes in {@code Authorization: Bearer}. */
    public String token(int port) throws IOException, InterruptedException {
        String body = "{\"username\":\"" + operator + "\",\"password\":\"" + password + "\"}";
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/login")).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("login as " + operator + " refused: " + r.statusCode());
        }
        for (String cookie : r.headers().allValues("Set-Cookie")) {
            if (cookie.startsWith("JWT=")) {
                return cookie.substring(4, cookie.indexOf(';') < 0 ? cookie.length() : cookie.indexOf(';'));
            }
        }
        throw new IOException("login as " + operator + " gave no token");
    }
}
