package org.privface.recognizer.console;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A site's appearance linking as its gateways last reported it (their status reports' {@code linking}
 * section): how many gateways link, and the noised counts of persons seen and linked summed (each
 * person at most once a day per gateway; gateways before issue 39 counted appearances, read the same). A status report
 * carries no per-person spend (issue 33): that stays on the gateway, in its authenticated REST status;
 * a person's cap is the policy's ε, which the console shows from the policy.
 */
final class PersonBudgets {
    private PersonBudgets() {
    }

    /** Null when no gateway reports a linking section (gateways from before issue 18). */
    static Map<String, Object> site(List<Map<String, Object>> gateways) {
        Map<String, Object> out = null;
        double epsilon = 0;
        double personsVariance = 0;
        double linkedVariance = 0;
        for (Map<String, Object> g : gateways) {
            if (!(g.get("linking") instanceof Map<?, ?> l)) {
                continue;
            }
            if (out == null) {
                out = new LinkedHashMap<>();
                out.put("gatewaysLinking", 0L);
                out.put("gatewaysPerTrack", 0L);
                out.put("persons", 0L);
                out.put("linkedPersons", 0L);
            }
            if (Boolean.TRUE.equals(l.get("enabled"))) {
                out.put("gatewaysLinking", (Long) out.get("gatewaysLinking") + 1);
                if (l.get("noised") instanceof Map<?, ?> n) {
                    out.put("persons", (Long) out.get("persons")
                            + number(n.containsKey("persons") ? n.get("persons") : n.get("appearances")).longValue());
                    out.put("linkedPersons", (Long) out.get("linkedPersons") + number(n.containsKey("linkedPersons")
                            ? n.get("linkedPersons") : n.get("linkedAppearances")).longValue());
                    double v = NoisyCounts.statusVariance(n.get("noise"), g.get("startedAt"), reportedAt(g));
                    personsVariance += v;
                    linkedVariance += v;
                    // Each gateway's counts are its own release: a person on two gateways is covered by both.
                    if (n.get("noise") instanceof Map<?, ?> noise) {
                        epsilon = Math.max(epsilon, number(noise.containsKey("epsilonPerUnitPerWindow")
                                ? noise.get("epsilonPerUnitPerWindow") : noise.get("epsilonPerEvent")).doubleValue());
                    }
                }
            } else {
                out.put("gatewaysPerTrack", (Long) out.get("gatewaysPerTrack") + 1);
            }
        }
        if (out != null) {
            long linking = (Long) out.get("gatewaysLinking");
            long perTrack = (Long) out.get("gatewaysPerTrack");
            out.put("budgetScope", perTrack == 0 ? "person per gateway" : linking == 0 ? "track" : "mixed");
            out.put("epsilonPerPersonPerWindow", epsilon);
            // Shown instead of the raw noised sums, which may be negative.
            out.put("personsEstimate", NoisyCounts.total((Long) out.get("persons"), personsVariance));
            out.put("linkedPersonsEstimate", NoisyCounts.total((Long) out.get("linkedPersons"), linkedVariance));
        }
        return out;
    }

    private static java.time.Instant reportedAt(Map<String, Object> g) {
        try {
            return g.get("reportedAt") instanceof String s ? java.time.Instant.parse(s) : null;
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
    }

    private static Number number(Object o) {
        return o instanceof Number n ? n : 0;
    }
}
