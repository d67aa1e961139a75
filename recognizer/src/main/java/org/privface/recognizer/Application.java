package org.privface.recognizer;

import io.micronaut.runtime.Micronaut;

/** The untrusted cloud recognizer: it only ever sees perturbed vectors. */
public final class Application {
    private Application() {
    }

    public static void main(String[] args) {
        Micronaut.run(Application.class, args);
    }
}
