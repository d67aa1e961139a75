package org.privface.recognizer.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class PersonBudgetsTest {
    static Map<String, Object> noised(long persons, long linked) {
        return Map.of("persons", persons, "linkedPersons", linked,
                "noise", Map.of("epsilonPerUnitPerWindow", 4.0, "unit", "person", "window", "PT1M"));
    }

    @Test
    void sumsTheNoisedCountsAndShowsNoPersonSpend() {
        Map<String, Object> s = PersonBudgets.site(List.of(
                Map.of("gateway", "a", "linking", Map.of("enabled", true, "threshold", 0.6, "noised", noised(10, 7))),
                Map.of("gateway", "b", "linking", Map.of("enabled", true, "threshold", 0.6, "noised", noised(4, -1))),
                Map.of("gateway", "c")));
        assertEquals(14L, s.get("persons"));
        assertEquals(6L, s.get("linkedPersons"), "noised counts are summed as they are, negative ones too");
        assertEquals(4.0, s.get("epsilonPerPersonPerWindow"));
        assertEquals("person per gateway", s.get("budgetScope"));
        assertFalse(s.containsKey("maxPersonEpsilon"), "no per-person spend reaches the console from the status topic");
    }

    @Test
    void aGatewayWithoutLinkingMakesTheScopeMixed() {
        Map<String, Object> s = PersonBudgets.site(List.of(
                Map.of("linking", Map.of("enabled", true, "noised", noised(1, 0))),
                Map.of("linking", Map.of("enabled", false, "budgetScope", "track", "reason", "no model"))));
        assertEquals("mixed", s.get("budgetScope"));
        assertEquals(1L, s.get("gatewaysPerTrack"));
        assertNull(PersonBudgets.site(List.of(Map.of("gateway", "old"))));
    }
}
