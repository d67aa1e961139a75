package org.privface.agent.release;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.privface.agent.AgentSettings;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.policy.SitePolicy;
import org.privface.agent.track.TrackBudget;

/**
 * The ledger charges each release the ε its mechanism states, asked of the family without building
 * the mechanism: for every EMBEDDING noise, budget and ε, the charge is what the built release
 * states (a sign-cap's exact bound a little below the share, the whole share otherwise).
 */
class StatedEpsilonChargeTest {
    @Test
    void chargeIsWhatTheBuiltMechanismStates() {
        Mechanisms mechanisms = new Mechanisms(new AgentSettings(), null, null); // dlib's bundled public basis
        int checked = 0;
        for (String mode : new String[] {"sign-cap", "lap-l1", "gauss-l2"}) {
            for (String budget : new String[] {"once", "max-k:k=4"}) {
                for (double eps : new double[] {5, 10, 20, 50, 100, 200}) {
                    SitePolicy p = new SitePolicy(Mechanism.EMBEDDING, mode, eps, budget, Duration.ofMinutes(10), false);
                    TrackBudget b = mechanisms.chargedBudget(p);
                    double share = p.budgetPolicy().epsilonPerRelease(p.epsilon());
                    assertEquals(mechanisms.forRelease(p, share).epsilonPerFace(), b.unitsPerRelease(),
                            mode + " " + budget + " ε " + eps);
                    checked++;
                }
            }
        }
        assertEquals(36, checked);
    }
}
