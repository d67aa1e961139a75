package org.privface.recognizer.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.security.annotation.Secured;
import io.micronaut.security.rules.SecurityRule;
import io.micronaut.serde.annotation.Serdeable;
import org.privface.recognizer.answer.GalleryService;
import org.privface.recognizer.ownership.SiteOwnership;
import org.privface.recognizer.model.ModelRegistry;

/**
 * Per-site statistics of the whole fleet, whichever replica answers: the sites this replica owns
 * from its own meters (the same ones /prometheus exports), the others from their owners' latest
 * summaries ({@link FleetSummaries}). Sorted by site; {@code offset} and {@code limit} return one
 * page of them.
 */
@Controller("/sites")
@Secured(SecurityRule.IS_AUTHENTICATED)
public class SiteController {
    private final MeterRegistry meters;
    private final ModelRegistry registry;
    private final SiteOwnership ownership;
    private final FleetSummaries fleet;
    private final GalleryService galleries;
    private final org.privface.recognizer.RecognizerSettings settings;

    public SiteController(MeterRegistry meters, ModelRegistry registry, SiteOwnership ownership, FleetSummaries fleet,
                          GalleryService galleries, org.privface.recognizer.RecognizerSettings settings) {
        this.meters = meters;
        this.registry = registry;
        this.ownership = ownership;
        this.fleet = fleet;
        this.galleries = galleries;
        this.settings = settings;
    }

    /**
     * One site's row. {@code owner} is the instance id of the replica that owns it (null when the
     * row is a replica's own count of a site it does not own), {@code epoch} the owners' group
     * generation at which it acquired the site, {@code galleryVersion} its latest gallery (0: none).
     */
    @Serdeable
    public record SiteStats(String site, long enrollments, long identified, long unknown, long deadLetters,
                            long duplicates, double meanEpsilonPerFace, int models, @Nullable String owner, int epoch,
                            long galleryVersion) {
    }

    /** Every site of the fleet. */
    public List<SiteStats> sites() {
        return sites(0, Integer.MAX_VALUE);
    }

    @Get
    public List<SiteStats> sites(@QueryValue(defaultValue = "0") int offset,
                                 @QueryValue(defaultValue = "2147483647") int limit) {
        Map<String, SiteStats> rows = new TreeMap<>(fleet.fleet());
        TreeSet<String> here = sitesMetered(meters);
        registry.models().keySet().forEach(k -> here.add(k.site()));
        here.addAll(ownership.sites());
        for (String site : here) {
            boolean owned = ownership.owns(site);
            if (owned || !rows.containsKey(site)) {
                // Live for what this replica owns; its own count where no owner has reported.
                rows.put(site, stats(meters, registry, galleries, site, owned ? settings.getInstanceId() : null,
                        ownership.epoch(site)));
            }
        }
        List<SiteStats> all = new ArrayList<>(rows.values());
        int from = Math.min(Math.max(0, offset), all.size());
        int to = (int) Math.min(all.size(), (long) from + Math.max(0, limit));
        return all.subList(from, to);
    }

    /** A site's row from this replica's meters, models and gallery. */
    static SiteStats stats(MeterRegistry meters, ModelRegistry registry, GalleryService galleries, String site,
                           String owner, int epoch) {
        int models = (int) registry.models().keySet().stream().filter(k -> k.site().equals(site)).count();
        long gallery = galleries.gallery(site).map(g -> g.getVersion()).orElse(0L);
        return new SiteStats(site,
                (long) count(meters, "privface.recognizer.enrollments", site, null),
                (long) count(meters, "privface.recognizer.results", site, "identified"),
                (long) count(meters, "privface.recognizer.results", site, "unknown"),
                (long) count(meters, "privface.recognizer.dead.letters", site, null),
                (long) count(meters, "privface.recognizer.duplicates", site, null),
                meanEpsilon(meters, site), models, owner, epoch, gallery);
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

    private static double meanEpsilon(MeterRegistry meters, String site) {
        DistributionSummary s = meters.find("privface.recognizer.query.epsilon.per.face").tag("site", site).summary();
        return s == null || s.count() == 0 ? 0 : s.mean();
    }
}
