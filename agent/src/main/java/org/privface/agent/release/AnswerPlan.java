package org.privface.agent.release;

import java.util.Optional;

import org.privface.agent.answer.AnswerSampler;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.policy.SitePolicy;
import org.privface.agent.track.TrackBudget;
import org.privface.privacy.FaceMechanism;
import org.privface.privacy.answer.Gallery;
import org.privface.privacy.embedding.EmbeddingMechanism;

/**
 * How one query face's charge is spent when the site answers: the embedding mechanism whose
 * release space the query is decoded in (and, with {@code both}, whose vector goes out too) and
 * the ε left for the answer. Worked out before the grant, so a split that cannot be released is
 * refused before anything is charged: with {@code both} the vector asks half the charge and the
 * answer gets the rest, and at some ε no cap of the policy's shape exists at half (ε in
 * [35, 36.03) at k 64, r 1), or the vector states the whole charge (ε ≥ 124.7, where the cap's
 * ε saturates), leaving the answer nothing.
 *
 * @param mechanism     the embedding mechanism (vector releases and the query's projection)
 * @param answerEpsilon what the answer may spend: the charge, less the vector's stated ε with {@code both}
 * @param refusal       why faces cannot be answered under this policy and gallery; then the rest is null/NaN
 */
public record AnswerPlan(EmbeddingMechanism mechanism, double answerEpsilon, String refusal) {
    public static AnswerPlan refused(String why) {
        return new AnswerPlan(null, Double.NaN, why);
    }

    public boolean ok() {
        return refusal == null;
    }

    /**
     * @param budget  the policy's charged budget ({@link Mechanisms#chargedBudget})
     * @param both    whether a vector goes out beside each answer
     * @param gallery the gallery to answer with, if held (its space and C are checked too)
     * @param rr      the gateway's answer sampler cache
     */
    public static AnswerPlan of(Mechanisms mechanisms, SitePolicy policy, TrackBudget budget, boolean both,
                         Optional<Gallery> gallery, AnswerSampler rr) {
        if (policy.mechanism() != Mechanism.EMBEDDING) {
            return refused("answers need the EMBEDDING mechanism, not " + policy.mechanism());
        }
        if (budget.accounting() != TrackBudget.Accounting.PURE_EPSILON) {
            return refused("answers need a pure-ε budget");
        }
        double units = budget.unitsPerRelease();
        FaceMechanism m;
        try {
            // Alone, the mechanism of the whole share (the one the charge was computed from); with both, half the charge.
            m = mechanisms.forRelease(policy, both ? units / 2 : policy.budgetPolicy().epsilonPerRelease(policy.epsilon()));
        } catch (RuntimeException e) {
            return refused((both ? "the vector at half of ε " + units + " cannot be released: " : "")
                    + e.getMessage());
        }
        if (!(m instanceof EmbeddingMechanism em)) {
            return refused("answers need an embedding mechanism");
        }
        double answer = both ? units - m.epsilonPerFace() : units;
        if (!(answer > 0)) {
            return refused("the vector at half of ε " + units + " states " + m.epsilonPerFace()
                    + ", leaving the answer nothing: choose another ε for both");
        }
        if (gallery.isPresent()) {
            Gallery g = gallery.get();
            try {
                AnswerSampler.checkSpace(g, em);
            } catch (IllegalStateException e) {
                return refused(e.getMessage());
            }
            try {
                rr.sampler(g.identities(), answer);
            } catch (IllegalArgumentException e) {
                return refused("no answer at ε " + answer + " over " + g.identities() + " people: " + e.getMessage());
            }
        }
        return new AnswerPlan(em, answer, null);
    }
}
