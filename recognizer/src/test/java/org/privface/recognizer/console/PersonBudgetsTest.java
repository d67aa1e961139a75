package org.privface.recognizer.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class PersonBudgetsTest {
    static Map<String, Object> noised(long appearances, long linked) {
        return Map.of("appearances", appearances, "linkedAppearances", linked,
                "noise", Map.of("epsilonPerEvent", 1.0, "window", "PT1M"));
    }

    @Test
    void sumsTheNoisedCountsAndShowsNoPersonSpend() {
        Map<String, Object> s = PersonBudgets.site(List.of(
                Map.of("gateway", "a", "linking", Map.of("enabled", true, "threshold", 0.6, "noised", noised(10, 7))),
                Map.of("gateway", "b", "linking", Map.of("enabled", true, "threshold", 0.6, "noised", noised(4, -1))),
                Map.of("gateway", "c")));
        assertEquals(14L, s.get("appearances"));
        assertEquals(6L, s.get("linkedAppearances"), "noised counts are summed as they are, negative ones too");
        assertEquals(1.0, s.get("epsilonPerAppearance"));
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
