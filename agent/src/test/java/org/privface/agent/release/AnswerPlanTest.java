package org.privface.agent.release;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.privface.agent.AgentSettings;
import org.privface.agent.answer.AnswerSampler;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.policy.SitePolicy;
import org.privface.agent.track.TrackBudget;

/**
 * The split of one query face's charge between the vector and the answer in {@code both}: where no
 * cap of the policy's shape exists at half the charge (ε in [35, 36.03) at k 64, r 1) it is refused
 * up front, and where the cap's ε saturates (ε ≥ 124.7) the vector asks half the charge, not half
 * the nominal ε, so the answer still gets the rest. Never more than the charge in all.
 */
class AnswerPlanTest {
    @Test
    void bothSplitsTheChargeOrIsRefusedBeforeAnyCharge() {
        AgentSettings s = new AgentSettings(); // embedder dlib: the bundled public basis, no detector needed
        Mechanisms mechanisms = new Mechanisms(s, null, null);
        AnswerSampler rr = new AnswerSampler("plan-site");
        for (double eps : new double[] {5, 10, 20, 34, 35, 35.5, 36, 36.1, 50, 100, 124.7, 125, 200}) {
            SitePolicy p = new SitePolicy(Mechanism.EMBEDDING, "sign-cap", eps, "once", Duration.ofMinutes(10), false);
            TrackBudget b = mechanisms.chargedBudget(p);
            AnswerPlan both = AnswerPlan.of(mechanisms, p, b, true, Optional.empty(), rr);
            AnswerPlan alone = AnswerPlan.of(mechanisms, p, b, false, Optional.empty(), rr);
            assertTrue(alone.ok(), eps + ": " + alone.refusal());
            assertEquals(b.unitsPerRelease(), alone.answerEpsilon(), "an answer alone spends the whole charge");
            if (eps >= 35 && eps < 36.03) {
                assertFalse(both.ok(), "ε " + eps + " has no cap at half");
                assertTrue(both.refusal().contains("half"), both.refusal());
                continue;
            }
            assertTrue(both.ok(), eps + ": " + both.refusal());
            double vector = both.mechanism().epsilonPerFace();
            assertTrue(both.answerEpsilon() > 0.25 * b.unitsPerRelease(), eps + ": answer " + both.answerEpsilon());
            assertEquals(b.unitsPerRelease(), vector + both.answerEpsilon(), 1e-12, "together what was charged");
            // The answer's sampler states at most what it was given.
            assertTrue(rr.sampler(5, both.answerEpsilon()).epsilon() <= both.answerEpsilon());
        }
    }
}
