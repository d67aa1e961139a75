package org.privface.localstack.load;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Follows a JVM's unified GC log ({@code -Xlog:gc:file=PATH}) and turns each pause line, e.g.
 * {@code GC(12) Pause Full (System.gc()) 84M->21M(256M) 61.2ms}, into an event. {@link #drain()}
 * returns the pauses logged since the previous call.
 */
final class GcLog {
    private static final Pattern PAUSE = Pattern.compile(
            "GC\\(\\d+\\) Pause (.+?) (\\d+)([KMG])->(\\d+)([KMG])\\((\\d+)([KMG])\\) ([\\d.]+)ms");

    /** One pause: its kind (e.g. "Young (Normal) (G1 Evacuation Pause)", "Full (System.gc())"), heap before and after. */
    record Pause(String kind, double beforeBytes, double afterBytes, double committedBytes, double millis) {
        boolean full() {
            return kind.startsWith("Full");
        }
    }

    private final Path file;
    private long position;
    private String partial = "";

    GcLog(Path file) {
        this.file = file;
    }

    /** The JVM option that writes this log. */
    static String option(Path file) {
        return "-Xlog:gc:file=" + file + ":uptimemillis";
    }

    List<Pause> drain() {
        List<Pause> out = new ArrayList<>();
        if (!Files.exists(file)) {
            return out;
        }
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            long len = f.length();
            if (len < position) {
                position = 0; // rotated or rewritten
            }
            // Bounded read per call: a GC log grows by a few kB a minute.
            byte[] b = new byte[(int) Math.min(len - position, 4 << 20)];
            f.seek(position);
            f.readFully(b);
            position += b.length;
            String text = partial + new String(b, StandardCharsets.UTF_8);
            int lastNewline = text.lastIndexOf('\n');
            partial = text.substring(lastNewline + 1);
            for (String line : text.substring(0, Math.max(0, lastNewline)).split("\n")) {
                Matcher m = PAUSE.matcher(line);
                if (m.find()) {
                    out.add(new Pause(m.group(1), bytes(m.group(2), m.group(3)), bytes(m.group(4), m.group(5)),
                            bytes(m.group(6), m.group(7)), Double.parseDouble(m.group(8))));
                }
            }
        } catch (IOException e) {
            // the JVM has not created it yet
        }
        return out;
    }

    private static double bytes(String n, String unit) {
        double v = Double.parseDouble(n);
        return switch (unit) {
            case "K" -> v * 1024;
            case "M" -> v * 1024 * 1024;
            default -> v * 1024 * 1024 * 1024;
        };
    }
}
