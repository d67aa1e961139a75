package org.privface.recognizer.console;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A site's appearance linking as its gateways last reported it (their status reports' {@code linking}
 * section): appearances linked summed, and the most ε any one person spent on any one gateway in
 * its window. A person's budget is per gateway, so the maximum, not a sum, is what a person spent.
 */
final class PersonBudgets {
    private PersonBudgets() {
    }

    /** Null when no gateway reports a linking section (gateways from before issue 18). */
    static Map<String, Object> site(List<Map<String, Object>> gateways) {
        Map<String, Object> out = null;
        for (Map<String, Object> g : gateways) {
            if (!(g.get("linking") instanceof Map<?, ?> l)) {
                continue;
            }
            if (out == null) {
                out = new LinkedHashMap<>();
                out.put("gatewaysLinking", 0L);
                out.put("gatewaysPerTrack", 0L);
                out.put("appearances", 0L);
                out.put("linkedAppearances", 0L);
                out.put("maxPersonEpsilon", 0.0);
            }
            if (Boolean.TRUE.equals(l.get("enabled"))) {
                out.put("gatewaysLinking", (Long) out.get("gatewaysLinking") + 1);
                out.put("appearances", (Long) out.get("appearances") + number(l.get("appearances")).longValue());
                out.put("linkedAppearances", (Long) out.get("linkedAppearances") + number(l.get("linkedAppearances")).longValue());
                out.put("maxPersonEpsilon", Math.max((Double) out.get("maxPersonEpsilon"),
                        number(l.get("maxPersonEpsilon")).doubleValue()));
            } else {
                out.put("gatewaysPerTrack", (Long) out.get("gatewaysPerTrack") + 1);
            }
        }
        if (out != null) {
            long linking = (Long) out.get("gatewaysLinking");
            long perTrack = (Long) out.get("gatewaysPerTrack");
            out.put("budgetScope", perTrack == 0 ? "person per gateway" : linking == 0 ? "track" : "mixed");
        }
        return out;
    }

    private static Number number(Object o) {
        return o instanceof Number n ? n : 0;
    }
}
