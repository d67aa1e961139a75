package org.privface.recognizer.console;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.micronaut.http.HttpRequest;
import io.micronaut.security.authentication.AuthenticationFailureReason;
import io.micronaut.security.authentication.AuthenticationRequest;
import io.micronaut.security.authentication.AuthenticationResponse;
import io.micronaut.security.authentication.provider.HttpRequestAuthenticationProvider;
import jakarta.inject.Singleton;

/**
 * The operators who may log in, with PBKDF2 password hashes from configuration or a mounted
 * file. Every operator has the role {@code operator}. A wrong name costs the same hashing as a
 * wrong password, so timing does not tell which names exist.
 */
@Singleton
public class Operators implements HttpRequestAuthenticationProvider<Object> {
    static final String ROLE = "operator";
    /** A well-formed hash of a random password, checked when the name is unknown; made on first use, not at start. */
    private static final class Decoy {
        static final String HASH = PasswordHash.hash(java.util.UUID.randomUUID().toString().toCharArray());
    }

    private final Map<String, String> hashes = new LinkedHashMap<>();

    public Operators(ConsoleSettings settings) {
        settings.getOperators().forEach(this::add);
        if (settings.getOperatorsFile() != null) {
            try {
                for (String line : Files.readAllLines(settings.getOperatorsFile(), StandardCharsets.UTF_8)) {
                    String l = line.strip();
                    if (l.isEmpty() || l.startsWith("#")) {
                        continue;
                    }
                    int colon = l.indexOf(':');
                    if (colon < 1) {
                        throw new IllegalArgumentException("recognizer.console.operators-file " + settings.getOperatorsFile()
                                + ": a line is not name:hash");
                    }
                    add(l.substring(0, colon), l.substring(colon + 1));
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read recognizer.console.operators-file", e);
            }
        }
    }

    private void add(String name, String hash) {
        if (!name.matches("[A-Za-z0-9._@-]{1,64}")) {
            throw new IllegalArgumentException("operator name '" + name + "': use 1-64 of A-Z a-z 0-9 . _ @ -");
        }
        if (!PasswordHash.wellFormed(hash)) {
            throw new IllegalArgumentException("operator " + name + ": the password must be a hash from "
                    + PasswordHash.class.getName() + ", never the password itself");
        }
        hashes.put(name, hash);
    }

    public boolean any() {
        return !hashes.isEmpty();
    }

    @Override
    public AuthenticationResponse authenticate(HttpRequest<Object> request, AuthenticationRequest<String, String> auth) {
        String name = auth.getIdentity();
        String secret = auth.getSecret();
        if (name == null || secret == null || secret.length() > 1024) {
            return AuthenticationResponse.failure(AuthenticationFailureReason.CREDENTIALS_DO_NOT_MATCH);
        }
        String stored = hashes.get(name);
        boolean ok = PasswordHash.verify(secret.toCharArray(), stored == null ? Decoy.HASH : stored) && stored != null;
        return ok ? AuthenticationResponse.success(name, List.of(ROLE))
                : AuthenticationResponse.failure(AuthenticationFailureReason.CREDENTIALS_DO_NOT_MATCH);
    }
}
