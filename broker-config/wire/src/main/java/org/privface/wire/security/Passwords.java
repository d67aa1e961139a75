package org.privface.wire.security;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * Where SCRAM passwords come from: never from security.yml or the code. A password is only read
 * for a user that does not exist yet (or, with {@code --reset-passwords}, for every user).
 */
@FunctionalInterface
public interface Passwords {
    /** Prefix of the environment variable that holds a user's password. */
    String ENV_PREFIX = "PRIVFACE_SCRAM_PASSWORD_";

    Optional<String> of(String user);

    /**
     * {@code PRIVFACE_SCRAM_PASSWORD_<USER>}: the user name upper-cased with every character
     * other than a letter or digit as '_' (agent-north: PRIVFACE_SCRAM_PASSWORD_AGENT_NORTH).
     */
    static Passwords fromEnvironment(Map<String, String> env) {
        return user -> Optional.ofNullable(env.get(envName(user))).filter(s -> !s.isEmpty());
    }

    static String envName(String user) {
        return ENV_PREFIX + user.toUpperCase(Locale.ROOT).replaceAll("[^A-Z0-9]", "_");
    }

    /** A Java properties file {@code <user>=<password>}, readable by its owner only. */
    static Passwords fromFile(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        return user -> Optional.ofNullable(p.getProperty(user)).filter(s -> !s.isEmpty());
    }

    /** This source first, then {@code other}. */
    default Passwords orElse(Passwords other) {
        return user -> of(user).or(() -> other.of(user));
    }
}
