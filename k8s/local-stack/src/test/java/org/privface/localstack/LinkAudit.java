package org.privface.localstack;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.generic.IndexedRecord;

/**
 * Compares the records one scene produced under two linking outcomes, field by field: every field of
 * the records' own schema (walked generically, so a field added later is audited too) but the
 * baseline a recognizer always has, the vector and the capture time, must take the same values at
 * the same scene positions in both runs, and must group the same records together. A field that
 * passes depends on the policy, the position and the time, not on which appearances the gateway
 * decided were one person. Times are compared relative to the record's capture time; the random
 * identifiers (eventId, trackId) by the records they group only.
 */
final class LinkAudit {
    /** What a recognizer has anyway: the perturbed vector and when it was captured. */
    static final Set<String> BASELINE = Set.of("vector", "captureTimestamp");
    /** Drawn at random per record or per track: only which records share one is meaningful. */
    static final Set<String> RANDOM_IDS = Set.of("eventId", "trackId");

    private LinkAudit() {
    }

    /**
     * @param linked   records of the run with links, by scene position (camera and frame)
     * @param unlinked records of the same scene's run without links, by the same positions
     * @return every difference found; empty when no field carries the linking decisions
     */
    static List<String> compare(Map<String, ? extends IndexedRecord> linked, Map<String, ? extends IndexedRecord> unlinked) {
        List<String> problems = new ArrayList<>();
        if (!linked.keySet().equals(unlinked.keySet())) {
            problems.add("the runs released at different positions: " + new TreeSet<>(linked.keySet()) + " vs "
                    + new TreeSet<>(unlinked.keySet()));
            return problems;
        }
        List<String> positions = new ArrayList<>(new TreeSet<>(linked.keySet()));
        List<Map<String, Object>> a = positions.stream().map(p -> leaves(linked.get(p))).toList();
        List<Map<String, Object>> b = positions.stream().map(p -> leaves(unlinked.get(p))).toList();
        Set<String> paths = new TreeSet<>();
        a.forEach(m -> paths.addAll(m.keySet()));
        b.forEach(m -> paths.addAll(m.keySet()));
        for (String path : paths) {
            String leaf = path.substring(path.lastIndexOf('.') + 1);
            for (int i = 0; i < positions.size(); i++) {
                Object x = a.get(i).get(path);
                Object y = b.get(i).get(path);
                if (!RANDOM_IDS.contains(leaf) && !Objects.equals(x, y)) {
                    problems.add(path + " at " + positions.get(i) + ": " + x + " with links, " + y + " without");
                }
                for (int j = i + 1; j < positions.size(); j++) {
                    boolean sameA = Objects.equals(x, a.get(j).get(path));
                    boolean sameB = Objects.equals(y, b.get(j).get(path));
                    if (sameA != sameB) {
                        problems.add(path + " groups " + positions.get(i) + " and " + positions.get(j)
                                + (sameA ? " with links only" : " without links only"));
                    }
                }
            }
        }
        return problems;
    }

    /** Every leaf field outside the baseline, by path, times made relative to the capture time. */
    static Map<String, Object> leaves(IndexedRecord r) {
        long capture = millis(r.get(r.getSchema().getField("captureTimestamp").pos()));
        Map<String, Object> out = new TreeMap<>();
        walk(r, "", capture, out);
        return out;
    }

    private static void walk(IndexedRecord r, String prefix, long capture, Map<String, Object> out) {
        for (Schema.Field f : r.getSchema().getFields()) {
            String path = prefix + f.name();
            if (BASELINE.contains(path)) {
                continue;
            }
            Object v = r.get(f.pos());
            if (v instanceof IndexedRecord nested) {
                walk(nested, path + ".", capture, out);
            } else if (isTime(f.schema()) && v != null) {
                out.put(path, "capture" + signed(millis(v) - capture) + "ms");
            } else {
                out.put(path, v == null ? null : String.valueOf(v));
            }
        }
    }

    private static boolean isTime(Schema s) {
        if (s.getType() == Schema.Type.UNION) {
            return s.getTypes().stream().anyMatch(LinkAudit::isTime);
        }
        return s.getLogicalType() instanceof LogicalTypes.TimestampMillis;
    }

    private static long millis(Object v) {
        return v instanceof Instant i ? i.toEpochMilli() : ((Number) v).longValue();
    }

    private static String signed(long d) {
        return d >= 0 ? "+" + d : String.valueOf(d);
    }
}
