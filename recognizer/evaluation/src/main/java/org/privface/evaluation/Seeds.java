package org.privface.evaluation;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;

import org.privface.privacy.SeededRandom;

/** The deep studies' reproducible generators, one per (set, family, ε, seed), so a rerun gives the same CSV. */
public final class Seeds {
    private Seeds() {
    }

    public static SecureRandom seeded(String set, String family, double eps, int seed) {
        return SeededRandom.of((set + "/" + family + "/" + eps + "/" + seed).getBytes(StandardCharsets.UTF_8));
    }
}
