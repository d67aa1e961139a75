package org.privface.recognizer.api;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.security.annotation.Secured;
import io.micronaut.security.rules.SecurityRule;
import io.micronaut.serde.annotation.Serdeable;
import org.privface.recognizer.model.ModelRegistry;

/** Per-site statistics, read from the same meters that /prometheus exports. */
@Controller("/sites")
@Secured(SecurityRule.IS_AUTHENTICATED)
public class SiteController {
    private final MeterRegistry meters;
    private final ModelRegistry registry;

    public SiteController(MeterRegistry meters, ModelRegistry registry) {
        this.meters = meters;
        this.registry = registry;
    }

    @Serdeable
    public record SiteStats(String site, long enrollments, long identified, long unknown, long deadLetters,
                            long duplicates, double meanEpsilonPerFace, int models) {
    }

    @Get
    public List<SiteStats> sites() {
        TreeSet<String> sites = sitesMetered(meters);
        Map<String, Integer> models = new TreeMap<>();
        registry.models().keySet().forEach(k -> models.merge(k.site(), 1, Integer::sum));
        sites.addAll(models.keySet());
        return sites.stream().map(site -> new SiteStats(site,
                count("privface.recognizer.enrollments", site, null),
                count("privface.recognizer.results", site, "identified"),
                count("privface.recognizer.results", site, "unknown"),
                count("privface.recognizer.dead.letters", site, null),
                count("privface.recognizer.duplicates", site, null),
                meanEpsilon(site), models.getOrDefault(site, 0))).toList();
    }

    private long count(String name, String site, String outcome) {
        return (long) count(meters, name, site, outcome);
    }

    /** A recognizer counter's total for one site, over all its other tags or one outcome. */
    public static double count(MeterRegistry meters, String name, String site, String outcome) {
        var search = meters.find(name).tag("site", site);
        if (outcome != null) {
            search = search.tag("outcome", outcome);
        }
        return search.counters().stream().mapToDouble(Counter::count).sum();
    }

    /** Every site some recognizer meter is tagged with. */
    public static TreeSet<String> sitesMetered(MeterRegistry meters) {
        TreeSet<String> sites = new TreeSet<>();
        meters.getMeters().forEach(m -> {
            String site = m.getId().getTag("site");
            if (site != null && m.getId().getName().startsWith("privface.recognizer.")) {
                sites.add(site);
            }
        });
        return sites;
    }

    private double meanEpsilon(String site) {
        DistributionSummary s = meters.find("privface.recognizer.query.epsilon.per.face").tag("site", site).summary();
        return s == null || s.count() == 0 ? 0 : s.mean();
    }
}
