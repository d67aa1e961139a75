package org.privface.devstack;

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

    private ManagedProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    public static ManagedProcess java(String name, String classpath, String mainClass, List<String> jvmArgs,
                               List<String> args, Map<String, String> env, Path logDir) throws IOException {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new java.util.ArrayList<>();
        cmd.add(javaBin);
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(classpath);
        cmd.add(mainClass);
        cmd.addAll(args);
        Path log = logDir.resolve(name + ".log");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(env);
        return new ManagedProcess(name, pb.start(), log);
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
    void kill() throws InterruptedException {
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
