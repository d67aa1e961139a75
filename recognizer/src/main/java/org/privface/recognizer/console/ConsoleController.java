package org.privface.recognizer.console;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.Post;
import io.micronaut.http.annotation.Produces;
import io.micronaut.security.annotation.Secured;
import io.micronaut.security.authentication.Authentication;
import io.micronaut.security.rules.SecurityRule;
import io.micronaut.serde.annotation.Serdeable;
import org.privface.recognizer.api.ModelController;
import org.privface.recognizer.answer.AnswerResults;
import org.privface.recognizer.answer.GalleryService;
import org.privface.recognizer.api.SiteController;
import org.privface.recognizer.ingest.AnswerReader;
import org.privface.recognizer.status.StatusReader;
import org.privface.wire.avro.FaceGallery;

/**
 * The operator console: one page (Vite-built, under /console) and the JSON it reads. Everything
 * but the page itself needs a logged-in operator. What it shows comes from the gateways' status
 * reports, the recognizer's own meters and models, and the offline evaluations; the one thing it
 * writes is a proposed ε, to the site's control topic.
 */
@Controller("/console")
@Secured(SecurityRule.IS_AUTHENTICATED)
public class ConsoleController {
    private final StatusReader status;
    private final ConsoleSeries series;
    private final ControlProposals proposals;
    private final TradeoffCurves tradeoffs;
    private final ModelController models;
    private final SiteController sites;
    private final ConsoleSettings settings;
    private final Operators operators;
    private final GalleryService galleries;
    private final AnswerReader answers;

    public ConsoleController(StatusReader status, ConsoleSeries series, ControlProposals proposals,
                             TradeoffCurves tradeoffs, ModelController models, SiteController sites,
                             ConsoleSettings settings, Operators operators, GalleryService galleries,
                             AnswerReader answers) {
        this.status = status;
        this.series = series;
        this.proposals = proposals;
        this.tradeoffs = tradeoffs;
        this.models = models;
        this.sites = sites;
        this.settings = settings;
        this.operators = operators;
        this.galleries = galleries;
        this.answers = answers;
    }

    @Serdeable
    public record EpsilonChange(Double epsilon) {
    }

    /** The page; it asks for a login itself and holds no data. */
    @Get
    @Secured(SecurityRule.IS_ANONYMOUS)
    @Produces(MediaType.TEXT_HTML)
    public HttpResponse<?> page() throws IOException {
        try (InputStream in = ConsoleController.class.getResourceAsStream("/console/index.html")) {
            if (in == null) {
                return HttpResponse.status(HttpStatus.SERVICE_UNAVAILABLE)
                        .body("the console was not built into this recognizer (recognizer/src/main/console)");
            }
            return HttpResponse.ok(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8))
                    .header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
                    .header("X-Content-Type-Options", "nosniff");
        }
    }

    /**
     * Ends the browser's session by expiring its token cookie. Written here because
     * micronaut-security's logout endpoint exists only with its redirects on, which a page that
     * logs in with fetch() does not want. The token is stateless: a copy taken elsewhere stays
     * valid until it expires (recognizer.console token lifetime, 8 h).
     */
    @Post("/api/logout")
    @Secured(SecurityRule.IS_ANONYMOUS)
    public HttpResponse<?> logout() {
        return HttpResponse.ok(Map.of("loggedOut", true)).cookie(io.micronaut.http.cookie.Cookie.of("JWT", "")
                .path("/").httpOnly(true).maxAge(0).sameSite(io.micronaut.http.cookie.SameSite.Strict));
    }

    @Get("/api/me")
    public Map<String, Object> me(Authentication who) {
        return Map.of("operator", who.getName(), "operatorsConfigured", operators.any());
    }

    /** Sites per page when the console asks for none: a page of cards, not a fleet of 1,000. */
    static final int DEFAULT_PAGE = 20;
    static final int MAX_PAGE = 200;

    /**
     * One page of the fleet: the sites whose names contain {@code filter}, in name order, from
     * {@code offset}, at most {@code limit}; {@code total} says how many matched. Only the page's sites
     * are built, and only their models are listed.
     */
    @Get("/api/overview{?offset,limit,filter}")
    public Map<String, Object> overview(@Nullable Integer offset, @Nullable Integer limit, @Nullable String filter) {
        Instant now = Instant.now();
        Map<String, Map<String, StatusReader.Latest>> gateways = status.gateways();
        Map<String, SiteController.SiteStats> stats = new LinkedHashMap<>();
        sites.sites().forEach(s -> stats.put(s.site(), s));
        Set<String> all = new TreeSet<>(gateways.keySet());
        all.addAll(stats.keySet());
        Map<String, AnswerResults.Estimate> estimates = answers.estimates();
        estimates.values().forEach(e -> all.add(e.site()));
        List<String> matched = all.stream()
                .filter(x -> filter == null || filter.isBlank() || x.contains(filter.strip())).toList();
        int from = Math.max(0, Math.min(offset == null ? 0 : offset, matched.size()));
        int size = Math.max(1, Math.min(limit == null ? DEFAULT_PAGE : limit, MAX_PAGE));
        List<String> page = matched.subList(from, Math.min(matched.size(), from + size));
        List<Map<String, Object>> out = new ArrayList<>();
        for (String site : page) {
            List<Map<String, Object>> gws = new ArrayList<>();
            List<Map<String, Object>> cams = new ArrayList<>();
            Map<String, Object> policy = null;
            Object floor = null;
            Instant newest = Instant.EPOCH;
            boolean live = false;
            for (var e : gateways.getOrDefault(site, Map.of()).entrySet()) {
                Map<String, Object> body = e.getValue().current().body();
                Instant at = e.getValue().current().receivedAt();
                boolean gwLive = Duration.between(at, now).compareTo(settings.getLiveWithin()) <= 0;
                live |= gwLive;
                Map<String, Object> g = new LinkedHashMap<>();
                g.put("gateway", e.getKey());
                g.put("live", gwLive);
                g.put("reportedAt", at.toString());
                g.put("reportAgeSeconds", Duration.between(at, now).toSeconds());
                for (String k : List.of("policyVersion", "policy", "floor", "uplink", "lastChange", "startedAt", "enrollment",
                        "linking")) {
                    g.put(k, body.get(k));
                }
                g.put("framesPerSec", StatusReader.rate(e.getValue(), "frames"));
                g.put("facesPerSec", StatusReader.rate(e.getValue(), "noised.seen"));
                g.put("releasesPerSec", StatusReader.rate(e.getValue(), "releases"));
                gws.add(g);
                // The site's policy is what its most recently reporting gateway applies.
                if (!at.isBefore(newest) && body.get("policy") instanceof Map<?, ?>) {
                    newest = at;
                    @SuppressWarnings("unchecked")
                    Map<String, Object> p = (Map<String, Object>) body.get("policy");
                    policy = p;
                    floor = body.get("floor");
                }
                if (body.get("cameras") instanceof Map<?, ?> cm) {
                    for (var c : cm.entrySet()) {
                        Map<String, Object> row = new LinkedHashMap<>();
                        row.put("gateway", e.getKey());
                        row.put("camera", String.valueOf(c.getKey()));
                        // The camera's state is as of its gateway's last report; stale once that is.
                        row.put("live", gwLive && c.getValue() instanceof Map<?, ?> v && "LIVE".equals(v.get("state")));
                        row.put("stale", !gwLive);
                        if (c.getValue() instanceof Map<?, ?> v) {
                            v.forEach((k, val) -> row.put(String.valueOf(k), val));
                            row.put("noisedEstimates", estimates(v.get("noised"), body.get("startedAt"), at));
                        }
                        cams.add(row);
                    }
                }
            }
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("site", site);
            s.put("live", live);
            s.put("policy", policy);
            s.put("floor", floor);
            s.put("gateways", gws);
            s.put("cameras", cams);
            s.put("enrollment", enrollment(gws));
            s.put("linking", PersonBudgets.site(gws));
            s.put("recognizer", stats.get(site));
            s.put("answers", answers(galleries.gallery(site).orElse(null), site, estimates.values()));
            out.add(s);
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("now", now.toString());
        r.put("total", matched.size());
        r.put("offset", from);
        r.put("limit", size);
        r.put("sites", out);
        Set<String> shown = new java.util.HashSet<>(page);
        r.put("models", models.models().stream().filter(m -> shown.contains(m.site())).toList());
        return r;
    }

    /**
     * The site's enrolled faces as its gateways last reported their enrollment ledgers: images,
     * releases and refusals summed, the largest composed ε of any image, and the lowest cap (the
     * one that binds first). Null when no gateway reports a ledger.
     */
    static Map<String, Object> enrollment(List<Map<String, Object>> gateways) {
        Map<String, Object> out = null;
        for (Map<String, Object> g : gateways) {
            if (!(g.get("enrollment") instanceof Map<?, ?> e) || !(e.get("epsilonCap") instanceof Number cap)) {
                continue; // no ledger, or one that could not be opened (its error is in the gateway's row)
            }
            if (out == null) {
                out = new LinkedHashMap<>();
                out.put("images", 0L);
                out.put("releases", 0L);
                out.put("refusedReleases", 0L);
                out.put("maxComposedEpsilon", 0.0);
                out.put("totalComposedEpsilon", 0.0);
                out.put("epsilonCap", Double.POSITIVE_INFINITY);
            }
            for (String k : List.of("images", "releases", "refusedReleases")) {
                out.put(k, (Long) out.get(k) + number(e.get(k)).longValue());
            }
            out.put("maxComposedEpsilon", Math.max((Double) out.get("maxComposedEpsilon"), number(e.get("maxComposedEpsilon")).doubleValue()));
            out.put("totalComposedEpsilon", (Double) out.get("totalComposedEpsilon") + number(e.get("totalComposedEpsilon")).doubleValue());
            out.put("epsilonCap", Math.min((Double) out.get("epsilonCap"), cap.doubleValue()));
        }
        return out;
    }

    /**
     * The site's answer release as the recognizer sees it: the gallery it last published here
     * (version, C, threshold, how the threshold was set) and, per gallery version and ε, the
     * answers read with each identity's released count and its unbiased estimate
     * ({@link org.privface.privacy.answer.RandomizedResponse#estimateCounts}; unknown last). An
     * estimate may be negative or above the total: it is unbiased, not clipped. Null when neither.
     */
    static Map<String, Object> answers(FaceGallery gallery, String site, java.util.Collection<AnswerResults.Estimate> estimates) {
        List<Map<String, Object>> channels = new ArrayList<>();
        for (AnswerResults.Estimate e : estimates) {
            if (!e.site().equals(site)) {
                continue;
            }
            List<String> names = gallery != null && gallery.getVersion() == e.galleryVersion() ? gallery.getLabels() : null;
            List<Map<String, Object>> people = new ArrayList<>();
            for (int i = 0; i <= e.identities(); i++) {
                Map<String, Object> row = new LinkedHashMap<>();
                // The gallery's name for the index; else the one the answers were released with.
                row.put("label", i == e.identities() ? "unknown" : names != null ? names.get(i)
                        : e.labels()[i] != null ? e.labels()[i] : "#" + i);
                row.put("released", (long) e.released()[i]);
                row.put("estimated", e.estimated()[i]);
                row.put("estimate", NoisyCounts.randomizedResponse(e.estimated()[i], e.released()[i], e.answers(),
                        e.identities(), e.epsilon()));
                people.add(row);
            }
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("galleryVersion", e.galleryVersion());
            c.put("identities", e.identities());
            c.put("epsilonPerAnswer", e.epsilon());
            c.put("answers", e.answers());
            c.put("perIdentity", people);
            channels.add(c);
        }
        if (gallery == null && channels.isEmpty()) {
            return null;
        }
        channels.sort(Comparator.comparingLong((Map<String, Object> c) -> (Long) c.get("galleryVersion")).reversed());
        Map<String, Object> out = new LinkedHashMap<>();
        if (gallery != null) {
            Map<String, Object> g = new LinkedHashMap<>();
            g.put("version", gallery.getVersion());
            g.put("identities", gallery.getLabels().size());
            g.put("basisId", gallery.getBasisId());
            g.put("enrollmentReleases", gallery.getEnrollmentReleases());
            g.put("threshold", Double.isFinite(gallery.getThreshold()) ? gallery.getThreshold() : null);
            g.put("openSet", gallery.getCalibration() == null ? "closed set: no public strangers"
                    : gallery.getCalibration().getStrangers() + " public strangers of " + gallery.getCalibration().getStrangerSet());
            g.put("builtAt", gallery.getBuiltAt().toString());
            out.put("gallery", g);
        }
        out.put("answers", channels.stream().mapToLong(c -> (Long) c.get("answers")).sum());
        out.put("channels", channels);
        return out;
    }

    /**
     * The answers this site's gateways released against the gallery version: how many, the share
     * that said "unknown", and the unbiased estimate of the share of faces that were nobody in the
     * gallery, with its interval. Null before any answer.
     */
    private Map<String, Object> measuredAnswers(String site, long version) {
        double answered = 0;
        double unknown = 0;
        double unknownEstimated = 0;
        double identities = 0;
        double epsilon = Double.NaN;
        for (AnswerResults.Estimate e : answers.estimates().values()) {
            if (e.site().equals(site) && e.galleryVersion() == version) {
                answered += e.answers();
                unknown += e.released()[e.identities()];
                unknownEstimated += e.estimated()[e.identities()];
                identities = e.identities();
                epsilon = Double.isNaN(epsilon) ? e.epsilon() : Math.min(epsilon, e.epsilon());
            }
        }
        if (answered == 0) {
            return null;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("answers", (long) answered);
        m.put("epsilonPerAnswer", epsilon);
        m.put("unknownShareReleased", unknown / answered);
        Map<String, Object> est = NoisyCounts.randomizedResponse(unknownEstimated, unknown, answered, (int) identities,
                epsilon);
        double n = answered;
        est.replaceAll((k, v) -> (Double) v / n);
        m.put("unknownShareEstimated", est);
        return m;
    }

    /** A camera's noised counts as non-negative estimates with intervals; null without a noised section. */
    static Map<String, Object> estimates(Object noised, Object startedAt, Instant reportedAt) {
        if (!(noised instanceof Map<?, ?> n)) {
            return null;
        }
        double variance = NoisyCounts.statusVariance(n.get("noise"), startedAt, reportedAt);
        Map<String, Object> out = new LinkedHashMap<>();
        n.forEach((k, v) -> {
            if (v instanceof Number count) {
                out.put(String.valueOf(k), NoisyCounts.total(count.doubleValue(), variance));
            }
        });
        return out;
    }

    private static Number number(Object o) {
        return o instanceof Number n ? n : 0;
    }

    /** The sites' series, or every site's when none is named (comma-separated names). */
    @Get("/api/series{?sites}")
    public Map<String, List<ConsoleSeries.Sample>> series(@Nullable String sites) {
        Map<String, List<ConsoleSeries.Sample>> all = series.series();
        if (sites == null || sites.isBlank()) {
            return all;
        }
        Map<String, List<ConsoleSeries.Sample>> some = new java.util.TreeMap<>();
        for (String s : sites.split(",")) {
            List<ConsoleSeries.Sample> v = all.get(s.strip());
            if (v != null) {
                some.put(s.strip(), v);
            }
        }
        return some;
    }

    @Get("/api/tradeoff/{site}")
    public HttpResponse<?> tradeoff(String site) {
        Map<String, Object> policy = null;
        // Faces per answer the site's gateways decode together (their reports' answer.trackFaces); 1 before issue 45.
        int trackFaces = 1;
        for (StatusReader.Latest l : status.gateways().getOrDefault(site, Map.of()).values()) {
            if (l.current().body().get("policy") instanceof Map<?, ?> p) {
                @SuppressWarnings("unchecked")
                Map<String, Object> pm = (Map<String, Object>) p;
                policy = pm;
            }
            if (l.current().body().get("answer") instanceof Map<?, ?> a && a.get("trackFaces") instanceof Number n) {
                trackFaces = Math.max(trackFaces, n.intValue());
            }
        }
        if (policy == null) {
            return HttpResponse.notFound(Map.of("error", "no gateway of site " + site + " has reported its policy"));
        }
        String mechanism = String.valueOf(policy.get("mechanism"));
        String mode = String.valueOf(policy.get("mode"));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("site", site);
        body.put("epsilonPerFace", policy.get("epsilonPerRelease"));
        tradeoffs.forPolicy(mechanism, mode).ifPresentOrElse(t -> body.put("tradeoff", t),
                () -> body.put("message", "no evaluation results for " + mechanism + " " + mode));
        FaceGallery gallery = galleries.gallery(site).orElse(null);
        if (gallery != null) {
            String network = gallery.getBasisId().contains("fr_feature") ? "fr_feature" : "dlib";
            tradeoffs.forAnswer(gallery.getLabels().size(), network, trackFaces).ifPresent(a -> {
                Map<String, Object> advisor = new LinkedHashMap<>();
                advisor.put("identities", gallery.getLabels().size());
                advisor.put("answerEpsilon", gallery.getCalibration() == null ? null
                        : gallery.getCalibration().getEpsilon());
                advisor.put("expected", a);
                advisor.put("measured", measuredAnswers(site, gallery.getVersion()));
                body.put("advisor", advisor);
            });
        }
        return HttpResponse.ok(body);
    }

    @Post("/api/sites/{site}/epsilon")
    public HttpResponse<?> propose(String site, @Body EpsilonChange change, Authentication who) {
        if (change == null || change.epsilon() == null) {
            return HttpResponse.badRequest(Map.of("error", "give {\"epsilon\": <number>}"));
        }
        try {
            return HttpResponse.accepted().body(proposals.propose(who.getName(), site, change.epsilon()));
        } catch (IllegalArgumentException e) {
            return HttpResponse.badRequest(Map.of("error", e.getMessage()));
        } catch (ControlProposals.NotConfigured e) {
            return HttpResponse.status(HttpStatus.SERVICE_UNAVAILABLE).body(Map.of("error", e.getMessage()));
        } catch (IllegalStateException e) {
            return HttpResponse.status(HttpStatus.BAD_GATEWAY).body(Map.of("error", e.getMessage()));
        }
    }

    /**
     * Every policy change the gateways report (whatever its source: this console, REST, their
     * configuration), newest first, and the console's proposals no gateway has reported yet.
     */
    @Get("/api/audit")
    public List<Map<String, Object>> audit() {
        List<Map<String, Object>> rows = new ArrayList<>();
        Set<String> answered = new HashSet<>();
        status.gateways().forEach((site, gws) -> gws.forEach((gw, l) -> {
            if (l.current().body().get("recentChanges") instanceof List<?> changes) {
                for (Object o : changes) {
                    if (o instanceof Map<?, ?> c) {
                        Map<String, Object> row = new LinkedHashMap<>();
                        row.put("site", site);
                        row.put("gateway", gw);
                        c.forEach((k, v) -> row.put(String.valueOf(k), v));
                        answered.add(site + "|" + c.get("source"));
                        rows.add(row);
                    }
                }
            }
        }));
        for (ControlProposals.Proposal p : proposals.recent()) {
            if (!answered.contains(p.site() + "|control-topic@" + p.offset())) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("site", p.site());
                row.put("gateway", "");
                row.put("at", p.at().toString());
                row.put("source", "control-topic@" + p.offset());
                row.put("principal", p.operator());
                row.put("outcome", "PENDING");
                row.put("epsilonRequested", p.epsilon());
                row.put("reason", "written to the control topic; no gateway has reported it yet");
                rows.add(row);
            }
        }
        rows.sort(Comparator.comparing((Map<String, Object> m) -> instant(m.get("at"))).reversed());
        return rows;
    }

    private static Instant instant(Object at) {
        try {
            return Instant.parse(String.valueOf(at));
        } catch (java.time.format.DateTimeParseException e) {
            return Instant.EPOCH;
        }
    }
}
