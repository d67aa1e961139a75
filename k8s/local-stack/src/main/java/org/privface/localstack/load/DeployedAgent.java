package org.privface.localstack.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The gateway bundle's process settings, read from the shipped systemd unit so that a load run
 * measures the agent as it is deployed (issue 44): the JVM flags of its {@code JAVA_TOOL_OPTIONS}
 * and its other plain {@code --env} settings (the allocator's arenas). Paths inside the container
 * ({@code FACE_MODEL_CACHE}, {@code /tmp}) are the run's to choose and are left out.
 */
final class DeployedAgent {
    /** The bundle's unit file, relative to the repository root. */
    static final Path UNIT = Path.of("k8s/gateway/privface-agent.service");

    record Settings(List<String> jvm, Map<String, String> env) {
    }

    private static final Pattern ENV = Pattern.compile("--env\\s+'?([A-Z_]+)=([^'\\\\]*?)'?\\s*\\\\?$");

    private DeployedAgent() {
    }

    static Settings read(Path unit) throws IOException {
        List<String> jvm = new ArrayList<>();
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : Files.readAllLines(unit)) {
            Matcher m = ENV.matcher(line.strip());
            if (!m.find()) {
                continue;
            }
            String name = m.group(1);
            String value = m.group(2).strip();
            if (name.equals("JAVA_TOOL_OPTIONS")) {
                Arrays.stream(value.split("\\s+"))
                        .filter(f -> !f.startsWith("-Djava.io.tmpdir=") && !f.startsWith("-Dorg.bytedeco.javacpp.cachedir="))
                        .forEach(jvm::add);
            } else if (!name.equals("FACE_MODEL_CACHE")) {
                env.put(name, value);
            }
        }
        if (jvm.stream().noneMatch(f -> f.startsWith("-Xmx"))) {
            throw new IllegalStateException(unit + " sets no -Xmx in JAVA_TOOL_OPTIONS: not the bundle this run measures");
        }
        return new Settings(List.copyOf(jvm), Map.copyOf(env));
    }
}
