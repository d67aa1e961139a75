package org.privface.agent.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

class BudgetPolicyTest {

    @Test
    void parsesConfigStrings() {
        assertEquals(new BudgetPolicy.Once(), BudgetPolicy.parse("once"));
        assertEquals(new BudgetPolicy.Once(), BudgetPolicy.parse("  ONCE "));
        assertEquals(new BudgetPolicy.MaxK(3, 1), BudgetPolicy.parse("max-k:k=3"));
        assertEquals(new BudgetPolicy.MaxK(3, 5), BudgetPolicy.parse("MAX_K: every = 5, k = 3"));
        assertEquals(new BudgetPolicy.EveryN(10, 0.5), BudgetPolicy.parse("every-n:n=10,epsilon=0.5"));
    }

    @Test
    void specRoundTrips() {
        for (BudgetPolicy p : List.of(BudgetPolicy.once(), BudgetPolicy.maxK(4), BudgetPolicy.maxK(2, 7),
                BudgetPolicy.everyN(3, 0.1), BudgetPolicy.everyN(1, 1e-7))) {
            assertEquals(p, BudgetPolicy.parse(p.spec()), p.spec());
        }
    }

    @Test
    void badStringsAreRejectedWithClearMessages() {
        assertMessage("unknown budget policy", "sometimes");
        assertMessage("unknown budget policy", "");
        assertMessage("missing parameter 'k'", "max-k");
        assertMessage("missing parameter 'n'", "every-n:epsilon=0.1");
        assertMessage("missing parameter 'epsilon'", "every-n:n=3");
        assertMessage("k must be >= 1, was 0", "max-k:k=0");
        assertMessage("every must be >= 1, was -2", "max-k:k=2,every=-2");
        assertMessage("n must be >= 1, was 0", "every-n:n=0,epsilon=0.1");
        assertMessage("epsilon must be positive and finite", "every-n:n=2,epsilon=0");
        assertMessage("epsilon must be positive and finite", "every-n:n=2,epsilon=NaN");
        assertMessage("k must be an integer, was 'three'", "max-k:k=three");
        assertMessage("epsilon must be a number", "every-n:n=2,epsilon=lots");
        assertMessage("takes no parameter 'k'", "once:k=2");
        assertMessage("takes no parameter 'n'", "max-k:k=2,n=3");
        assertMessage("given twice", "max-k:k=2,k=3");
        assertMessage("malformed parameter", "max-k:k");
        assertMessage("malformed parameter", "max-k:");
    }

    private static void assertMessage(String expected, String spec) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BudgetPolicy.parse(spec),
                spec);
        assertTrue(e.getMessage().contains(expected), spec + " -> " + e.getMessage());
    }
}
