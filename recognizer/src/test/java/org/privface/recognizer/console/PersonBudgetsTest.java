package org.privface.recognizer.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class PersonBudgetsTest {
    @Test
    void sumsLinksAndTakesTheMostExposedPersonOverGateways() {
        Map<String, Object> s = PersonBudgets.site(List.of(
                Map.of("gateway", "a", "linking", Map.of("enabled", true, "appearances", 10, "linkedAppearances", 7,
                        "maxPersonEpsilon", 1.5)),
                Map.of("gateway", "b", "linking", Map.of("enabled", true, "appearances", 4, "linkedAppearances", 1,
                        "maxPersonEpsilon", 2.0)),
                Map.of("gateway", "c")));
        assertEquals(14L, s.get("appearances"));
        assertEquals(8L, s.get("linkedAppearances"));
        assertEquals(2.0, s.get("maxPersonEpsilon"));
        assertEquals("person per gateway", s.get("budgetScope"));
    }

    @Test
    void aGatewayWithoutLinkingMakesTheScopeMixed() {
        Map<String, Object> s = PersonBudgets.site(List.of(
                Map.of("linking", Map.of("enabled", true, "appearances", 1, "linkedAppearances", 0, "maxPersonEpsilon", 1.0)),
                Map.of("linking", Map.of("enabled", false, "budgetScope", "track", "reason", "no model"))));
        assertEquals("mixed", s.get("budgetScope"));
        assertEquals(1L, s.get("gatewaysPerTrack"));
        assertNull(PersonBudgets.site(List.of(Map.of("gateway", "old"))));
    }
}
