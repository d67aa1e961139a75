package org.privface.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/** The machine under {@link EdgeBenchmark}: CPU pinning, and readings of /proc and the JVM for its report. */
final class Host {
    private Host() {
    }

    /** Sets the CPU affinity of every thread of a process; false when taskset is missing or refused. */
    static boolean pin(long pid, int cpu) {
        try {
            Process p = new ProcessBuilder("taskset", "-a", "-p", "-c", Integer.toString(cpu), Long.toString(pid))
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            boolean ok = p.waitFor() == 0;
            if (!ok) {
                System.err.println("taskset failed for pid " + pid + ": " + out.strip());
            }
            return ok;
        } catch (IOException e) {
            System.err.println("taskset unavailable: " + e.getMessage());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** A kB field of /proc/PID/status (VmRSS, VmHWM), or -1. */
    static long status(long pid, String field) {
        try {
            for (String l : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (l.startsWith(field + ":")) {
                    return Long.parseLong(l.substring(field.length() + 1).replace("kB", "").strip());
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }

    /** VmRSS split into anonymous memory (heap, native allocations) and mapped files (libraries, shareable). */
    static String memory(long pid) {
        return String.format(Locale.ROOT, "VmRSS %.0f MiB (RssAnon %.0f, RssFile %.0f)", status(pid, "VmRSS") / 1024.0,
                status(pid, "RssAnon") / 1024.0, status(pid, "RssFile") / 1024.0);
    }

    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "?";
        }
    }

    static int onlineCpus() {
        try (Stream<Path> s = Files.list(Path.of("/sys/devices/system/cpu"))) {
            return (int) s.filter(p -> p.getFileName().toString().matches("cpu\\d+")).count();
        } catch (IOException e) {
            return -1;
        }
    }

    static String gcNames() {
        return String.join(", ", ManagementFactory.getGarbageCollectorMXBeans().stream().map(b -> b.getName()).toList());
    }

    /** The process's OS threads (GC, compiler and VM threads included) grouped by name, digits folded. */
    static String threadSummary(long pid) {
        Map<String, Integer> byName = new TreeMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path t : tasks.toList()) {
                try {
                    byName.merge(Files.readString(t.resolve("comm")).strip().replaceAll("\\d+", "#"), 1, Integer::sum);
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
        int total = byName.values().stream().mapToInt(Integer::intValue).sum();
        StringBuilder sb = new StringBuilder(total + " (");
        byName.forEach((k, v) -> sb.append(k).append(v > 1 ? " ×" + v : "").append(", "));
        sb.setLength(sb.length() - 2);
        return sb.append(')').toString();
    }

    /**
     * How much of one CPU went to other processes and to the hypervisor over an interval, from
     * /proc/stat: the CPU's busy time minus this JVM's CPU time (which runs only there when pinned).
     */
    record CpuShare(int cpu, long[] ticks, long selfNanos, long wallNanos) {
        record Result(double others, double steal, double self) {
        }

        static CpuShare start(int cpu) {
            return new CpuShare(cpu, ticks(cpu), processCpuNanos(), System.nanoTime());
        }

        Result stop() {
            long[] now = ticks(cpu);
            double wall = (System.nanoTime() - wallNanos) / 1e9;
            double self = (processCpuNanos() - selfNanos) / 1e9;
            if (now == null || ticks == null) {
                return new Result(Double.NaN, Double.NaN, self / wall);
            }
            double hz = 100.0; // USER_HZ on Linux
            // user nice system idle iowait irq softirq steal
            double busy = (now[0] - ticks[0] + now[1] - ticks[1] + now[2] - ticks[2] + now[5] - ticks[5] + now[6] - ticks[6]) / hz;
            double steal = (now[7] - ticks[7]) / hz;
            return new Result(Math.max(0, busy - self) / wall, steal / wall, self / wall);
        }

        private static long[] ticks(int cpu) {
            try {
                for (String l : Files.readAllLines(Path.of("/proc/stat"))) {
                    if (l.startsWith("cpu" + cpu + " ")) {
                        String[] f = l.trim().split("\\s+");
                        long[] t = new long[8];
                        for (int i = 0; i < 8; i++) {
                            t[i] = Long.parseLong(f[i + 1]);
                        }
                        return t;
                    }
                }
            } catch (IOException | RuntimeException e) {
                return null;
            }
            return null;
        }
    }

    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
