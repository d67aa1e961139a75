package org.privface.broker;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A child JVM whose output goes to a log file, stopped with SIGTERM and then SIGKILL, or killed outright. */
public final class ManagedProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path log;
    /** Copies a filtered output into the log; null when the output goes to the log directly. */
    private final Thread copier;

    private ManagedProcess(String name, Process process, Path log, Thread copier) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.copier = copier;
    }

    public static ManagedProcess java(String name, String classpath, String mainClass, List<String> jvmArgs,
                               List<String> args, Map<String, String> env, Path logDir) throws IOException {
        return java(name, classpath, mainClass, jvmArgs, args, env, logDir, null);
    }

    /**
     * As above, but every output line that {@code withhold} matches is replaced in the log by a
     * note: for tools that print secrets (kafka-storage format prints the SCRAM salt and keys).
     */
    public static ManagedProcess java(String name, String classpath, String mainClass, List<String> jvmArgs,
                               List<String> args, Map<String, String> env, Path logDir,
                               java.util.function.Predicate<String> withhold) throws IOException {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new java.util.ArrayList<>();
        cmd.add(javaBin);
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(classpath);
        cmd.add(mainClass);
        cmd.addAll(args);
        Path log = logDir.resolve(name + ".log");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        if (withhold == null) {
            pb.redirectOutput(log.toFile());
        }
        pb.environment().putAll(env);
        Process process = pb.start();
        Thread copier = null;
        if (withhold != null) {
            copier = new Thread(() -> {
                try (var in = new java.io.BufferedReader(new java.io.InputStreamReader(process.getInputStream(),
                        java.nio.charset.StandardCharsets.UTF_8));
                     var out = Files.newBufferedWriter(log)) {
                    for (String line; (line = in.readLine()) != null; ) {
                        out.write(withhold.test(line) ? "[a line withheld from this log: it holds secrets]" : line);
                        out.newLine();
                    }
                } catch (IOException e) {
                    // The process is gone or the log is unwritable; its exit code still reports failure.
                }
            }, name + "-log");
            copier.setDaemon(true);
            copier.start();
        }
        return new ManagedProcess(name, process, log, copier);
    }

    public String name() {
        return name;
    }

    public Path log() {
        return log;
    }

    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** Waits for the process to exit by itself; returns its exit code, or throws on timeout. */
    public int await(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException(name + " did not finish within " + timeout + "; see " + log);
        }
        if (copier != null) {
            copier.join(TimeUnit.SECONDS.toMillis(10));
        }
        return process.exitValue();
    }

    /** Waits until the log contains a line, or fails if the process dies or time runs out. */
    public void awaitLog(String marker, Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (Files.exists(log) && Files.readString(log).contains(marker)) {
                return;
            }
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited with " + process.exitValue() + " before '" + marker
                        + "'; see " + log);
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException(name + " did not log '" + marker + "' within " + timeout + "; see " + log);
    }

    /** SIGKILL (on Linux), as a crash or the OOM killer would: no shutdown hook runs. Waits for the exit. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + " survived SIGKILL for 10 s");
        }
    }

    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        try {
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
