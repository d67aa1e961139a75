package org.privface.recognizer.console;

import java.security.SecureRandom;
import java.util.Base64;

import io.micronaut.context.annotation.Factory;
import io.micronaut.security.token.jwt.signature.SignatureGeneratorConfiguration;
import io.micronaut.security.token.jwt.signature.secret.SecretSignature;
import io.micronaut.security.token.jwt.signature.secret.SecretSignatureConfiguration;
import jakarta.inject.Named;
import jakarta.inject.Singleton;

/**
 * Signs and checks login tokens (HS256) with {@code recognizer.console.token-secret}, or with a
 * random secret drawn at start when none is set: a missing secret must never mean a known one.
 */
@Factory
class TokenSigning {
    @Singleton
    @Named("generator")
    SignatureGeneratorConfiguration signature(ConsoleSettings settings) {
        String secret = settings.getTokenSecret();
        if (secret == null || secret.isBlank()) {
            byte[] b = new byte[48];
            new SecureRandom().nextBytes(b);
            secret = Base64.getEncoder().encodeToString(b);
        } else if (secret.length() < 32) {
            throw new IllegalArgumentException("recognizer.console.token-secret needs at least 32 characters");
        }
        SecretSignatureConfiguration c = new SecretSignatureConfiguration("generator");
        c.setSecret(secret);
        return new SecretSignature(c);
    }
}
