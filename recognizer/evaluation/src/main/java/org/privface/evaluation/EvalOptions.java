package org.privface.evaluation;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/** "--name value" options over defaults, shared by the evaluation harnesses. */
public final class EvalOptions {
    private EvalOptions() {
    }

    public static Map<String, String> parse(Map<String, String> defaults, String[] args) {
        Map<String, String> opt = new HashMap<>(defaults);
        // Maven passes -Deval.args="--sets lfw5 --seeds 1" as one argument.
        String[] words = Arrays.stream(args).flatMap(a -> Arrays.stream(a.trim().split("\\s+"))).filter(a -> !a.isEmpty())
                .toArray(String[]::new);
        if (words.length % 2 != 0) {
            throw new IllegalArgumentException("option " + words[words.length - 1] + " needs a value");
        }
        for (int i = 0; i < words.length; i += 2) {
            if (!opt.containsKey(words[i])) {
                throw new IllegalArgumentException("unknown option " + words[i] + "; options: " + opt.keySet());
            }
            opt.put(words[i], words[i + 1]);
        }
        return opt;
    }
}
