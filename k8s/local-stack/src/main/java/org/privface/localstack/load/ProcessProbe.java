package org.privface.localstack.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What Linux says about a process: resident memory and CPU time from /proc, and the machine's busy share from /proc/stat. */
final class ProcessProbe {
    /** USER_HZ: the unit of the CPU times in /proc/PID/stat and /proc/stat on Linux. */
    private static final double TICKS_PER_SECOND = 100.0;

    private ProcessProbe() {
    }

    /** VmRSS in bytes, or NaN when the process is gone. */
    static double rssBytes(long pid) {
        return status(pid, "VmRSS:");
    }

    /** VmHWM, the peak resident memory since the process started, in bytes; NaN when gone. */
    static double peakRssBytes(long pid) {
        return status(pid, "VmHWM:");
    }

    private static double status(long pid, String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith(field)) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024.0;
                }
            }
        } catch (IOException | RuntimeException e) {
            // gone, or not Linux
        }
        return Double.NaN;
    }

    /** User plus system CPU time of the process (all threads), in seconds; NaN when gone. */
    static double cpuSeconds(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            // The command name may contain spaces: fields are counted after its closing parenthesis.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS_PER_SECOND;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** The machine's CPU times: {busy, total}, in seconds summed over CPUs. */
    static double[] machineSeconds() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long total = 0;
            long idle = 0;
            for (int i = 1; i < f.length && i <= 8; i++) {
                long v = Long.parseLong(f[i]);
                total += v;
                if (i == 4 || i == 5) {
                    idle += v; // idle, iowait
                }
            }
            return new double[] {(total - idle) / TICKS_PER_SECOND, total / TICKS_PER_SECOND};
        } catch (IOException | RuntimeException e) {
            return new double[] {Double.NaN, Double.NaN};
        }
    }
}
