package org.privface.localstack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A container image tar in Docker format (what {@code jib:buildTar} writes) unpacked into a root
 * filesystem, and started the way a container runtime with the manifests' settings would start it,
 * without one: in its own mount and PID namespaces ({@code unshare}), the root bind-mounted
 * read-only, a fresh /proc, the host's /dev, tmpfs or bind mounts where the manifests put volumes,
 * then {@code chroot} to the image's user (numeric uid:gid, no capabilities left, no_new_privs) and
 * {@code env -i} with the image's environment, working directory and entrypoint. The network is
 * the host's, so the service reaches a broker on loopback and the test reaches the service.
 * Needs root; the caller checks.
 */
final class ImageRoot {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A volume: a tmpfs (an emptyDir) when {@code source} is null, else a bind mount. */
    record Mount(String target, Path source, boolean readOnly) {
        static Mount tmpfs(String target) {
            return new Mount(target, null, false);
        }

        static Mount bind(Path source, String target) {
            return new Mount(target, source, true);
        }

        /** A writable bind mount: a hostPath volume, such as the agent's data directory. */
        static Mount hostPath(Path source, String target) {
            return new Mount(target, source, false);
        }
    }

    final Path rootfs;
    final String user;
    final Map<String, String> env;
    final String workingDir;
    final List<String> entrypoint;

    private ImageRoot(Path rootfs, String user, Map<String, String> env, String workingDir, List<String> entrypoint) {
        this.rootfs = rootfs;
        this.user = user;
        this.env = env;
        this.workingDir = workingDir;
        this.entrypoint = entrypoint;
    }

    /** Unpacks the image's layers in order into {@code dir}/rootfs and reads its configuration. */
    static ImageRoot unpack(Path imageTar, Path dir) throws IOException, InterruptedException {
        Path image = Files.createDirectories(dir.resolve("image"));
        Path rootfs = Files.createDirectories(dir.resolve("rootfs"));
        run(List.of("tar", "-xf", imageTar.toString(), "-C", image.toString()));
        JsonNode manifest = JSON.readTree(image.resolve("manifest.json").toFile()).get(0);
        JsonNode config = JSON.readTree(image.resolve(manifest.get("Config").asText()).toFile()).get("config");
        for (JsonNode layer : manifest.get("Layers")) {
            // As root, tar keeps the layers' owners and modes (the base's root-owned /usr, the app's files).
            run(List.of("tar", "--numeric-owner", "-xpf", image.resolve(layer.asText()).toString(), "-C", rootfs.toString()));
        }
        try (Stream<Path> s = Files.walk(rootfs)) {
            // Neither Jib nor the one-layer base writes whiteouts; applying them is not implemented here.
            s.filter(p -> p.getFileName() != null && p.getFileName().toString().startsWith(".wh."))
                    .findAny().ifPresent(p -> {
                        throw new IllegalStateException("layer whiteout " + p + ": not supported by this unpacker");
                    });
        }
        run(List.of("rm", "-rf", image.toString()));
        Map<String, String> env = new LinkedHashMap<>();
        for (JsonNode e : config.path("Env")) {
            String kv = e.asText();
            env.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        List<String> entry = new ArrayList<>();
        config.path("Entrypoint").forEach(n -> entry.add(n.asText()));
        config.path("Cmd").forEach(n -> entry.add(n.asText()));
        String wd = config.path("WorkingDir").asText("");
        return new ImageRoot(rootfs, config.path("User").asText(""), env, wd.isEmpty() ? "/" : wd, entry);
    }

    /** Starts the image's entrypoint; its output goes to {@code log}. */
    Process start(List<Mount> mounts, Map<String, String> extraEnv, Path log) throws IOException {
        return start(mounts, extraEnv, entrypoint, log);
    }

    /** Starts {@code command} instead of the entrypoint, with everything else the same. */
    Process start(List<Mount> mounts, Map<String, String> extraEnv, List<String> command, Path log) throws IOException {
        if (!user.matches("\\d+:\\d+")) {
            throw new IllegalStateException("the image's user is '" + user + "', not a numeric uid:gid");
        }
        String gid = user.substring(user.indexOf(':') + 1);
        StringBuilder sh = new StringBuilder("set -eu\nR=" + q(rootfs.toString()) + "\n");
        // Mount points are made before the root turns read-only, as a runtime does.
        for (String dir : Stream.concat(Stream.of("/proc", "/dev"), mounts.stream().map(Mount::target)).toList()) {
            Files.createDirectories(rootfs.resolve(dir.substring(1)));
        }
        sh.append("mount --bind \"$R\" \"$R\"\nmount -o remount,bind,ro \"$R\"\n");
        sh.append("mount -t proc proc \"$R/proc\"\nmount --rbind /dev \"$R/dev\"\n");
        for (Mount m : mounts) {
            String at = "\"$R\"" + q(m.target());
            if (m.source() == null) {
                sh.append("mount -t tmpfs -o mode=1777,size=2g tmpfs ").append(at).append('\n');
            } else {
                sh.append("mount --bind ").append(q(m.source().toAbsolutePath().toString())).append(' ').append(at).append('\n');
                if (m.readOnly()) {
                    sh.append("mount -o remount,bind,ro ").append(at).append('\n');
                }
            }
        }
        Map<String, String> environment = new LinkedHashMap<>(env);
        environment.putAll(extraEnv);
        sh.append("exec setpriv --no-new-privs chroot --userspec=").append(user).append(" --groups=").append(gid)
                .append(" \"$R\" /usr/bin/env -i -C ").append(q(workingDir));
        environment.forEach((k, v) -> sh.append(' ').append(q(k + "=" + v)));
        command.forEach(c -> sh.append(' ').append(q(c)));
        sh.append('\n');
        Path script = Files.writeString(log.resolveSibling(log.getFileName() + ".sh"), sh);
        // --kill-child: when the test stops unshare, the image's process (PID 1 of its namespace) gets SIGTERM.
        return new ProcessBuilder("unshare", "--mount", "--propagation", "private", "--pid", "--fork",
                "--kill-child=SIGTERM", "bash", script.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    /**
     * Stops a started image as a runtime does: SIGTERM to its process (unshare --fork ignores
     * SIGTERM itself while it waits), then SIGKILL to unshare after 30 s, which --kill-child passes on.
     */
    static void stop(Process p) throws InterruptedException {
        p.children().forEach(ProcessHandle::destroy);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Runs {@code command} in the image to its end and returns its exit code and output. */
    Map.Entry<Integer, String> exec(List<Mount> mounts, List<String> command, Path log, Duration timeout)
            throws IOException, InterruptedException {
        Process p = start(mounts, Map.of(), command, log);
        if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
            stop(p);
            throw new IllegalStateException(command + " did not finish within " + timeout);
        }
        return Map.entry(p.exitValue(), Files.readString(log).trim());
    }

    private static String q(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    private static void run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out);
        }
    }
}
