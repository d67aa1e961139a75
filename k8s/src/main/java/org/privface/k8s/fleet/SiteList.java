package org.privface.k8s.fleet;

import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * The fleet as one declarative list (k8s/sites.yaml): sites with their cameras, camera networks,
 * ε and floor, release mode, image tag and off-cluster gateways, and the consoles that manage
 * them. {@link #problems()} is the validation: it refuses what the copied-overlay way let
 * through (a site left with another site's camera network or URLs, documentation placeholders,
 * ε outside the floor, a site without operator keys, a console naming a site that does not exist).
 */
public record SiteList(String recognizerTag, String agentTag, List<Site> sites, List<Console> consoles) {

    public record Site(String id, List<String> cameraNetworks, Map<String, String> cameras, String epsilon,
                       String floorMin, String floorMax, String release, String agentTag, List<String> gateways,
                       List<String> uplinks, List<String> operatorKeys, Map<String, String> agent) {}

    public record Console(String name, List<String> sites) {}

    static final Pattern ID = Pattern.compile("[a-z0-9]([-a-z0-9]{0,28}[a-z0-9])?");
    static final Pattern CAMERA = Pattern.compile("[a-z0-9]{1,32}");
    static final Pattern TAG = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
    static final Pattern AGENT_VAR = Pattern.compile("AGENT_[A-Z0-9_]+");
    static final Pattern KEY_LINE = Pattern.compile("([A-Za-z0-9._-]+):\\s*([A-Za-z0-9+/=]+)");
    static final Set<String> RELEASES = Set.of("vector", "answer", "both");
    static final Set<String> SCHEMES = Set.of("rtsp", "rtsps", "http", "https");
    /** RFC 5737 and RFC 3849 documentation ranges, and "everywhere": never a real camera network or uplink. */
    static final List<String> PLACEHOLDER_CIDRS = List.of("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24");
    /** The variables the list itself sets; an agent: override of one of them would be a second source of truth. */
    static final Set<String> OWN_VARS = Set.of("AGENT_SITE_ID", "AGENT_EPSILON", "AGENT_FLOOR_EPSILON_MIN",
            "AGENT_FLOOR_EPSILON_MAX", "AGENT_ANSWER_RELEASE");

    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);

    public static SiteList read(Path file) throws IOException {
        return parse(Files.readString(file));
    }

    public static SiteList parse(String yaml) throws IOException {
        JsonNode root = YAML.readTree(yaml);
        known(root, "the list", "images", "sites", "consoles");
        JsonNode images = root.path("images");
        known(images, "images", "recognizer", "agent");
        List<Site> sites = new ArrayList<>();
        for (JsonNode s : root.path("sites")) {
            known(s, "site " + s.path("id").asText("?"), "id", "cameraNetworks", "cameras", "epsilon", "floor",
                    "release", "agentTag", "gateways", "uplinks", "operatorKeys", "agent");
            known(s.path("floor"), "floor", "min", "max");
            sites.add(new Site(s.path("id").asText(), strings(s.path("cameraNetworks")), map(s.path("cameras")),
                    s.path("epsilon").asText("20"), s.path("floor").path("min").asText("1"),
                    s.path("floor").path("max").asText("20"), s.path("release").asText("vector"),
                    s.path("agentTag").asText(images.path("agent").asText()), strings(s.path("gateways")),
                    strings(s.path("uplinks")), strings(s.path("operatorKeys")), map(s.path("agent"))));
        }
        List<Console> consoles = new ArrayList<>();
        for (JsonNode c : root.path("consoles")) {
            known(c, "console", "name", "sites");
            consoles.add(new Console(c.path("name").asText(), strings(c.path("sites"))));
        }
        return new SiteList(images.path("recognizer").asText(), images.path("agent").asText(), sites, consoles);
    }

    private static void known(JsonNode node, String where, String... fields) {
        Set<String> ok = Set.of(fields);
        node.fieldNames().forEachRemaining(f -> {
            if (!ok.contains(f)) {
                throw new IllegalArgumentException(where + ": unknown field '" + f + "' (known: " + ok + ")");
            }
        });
    }

    private static List<String> strings(JsonNode n) {
        List<String> out = new ArrayList<>();
        n.forEach(e -> out.add(e.asText()));
        return out;
    }

    private static Map<String, String> map(JsonNode n) {
        Map<String, String> out = new LinkedHashMap<>();
        n.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }

    public Site site(String id) {
        return sites.stream().filter(s -> s.id().equals(id)).findFirst().orElse(null);
    }

    /** Everything wrong with the list; empty when the generator may write it. */
    public List<String> problems() {
        List<String> out = new ArrayList<>();
        if (!TAG.matcher(recognizerTag).matches()) {
            out.add("images.recognizer: '" + recognizerTag + "' is not an image tag");
        }
        if (sites.isEmpty()) {
            out.add("no site");
        }
        Set<String> ids = new LinkedHashSet<>();
        Map<String, String> urlOwner = new HashMap<>();
        List<String[]> networks = new ArrayList<>(); // {site, cidr}
        for (Site s : sites) {
            String at = "site " + s.id();
            if (!ID.matcher(s.id()).matches()) {
                out.add(at + ": the id must be a lower-case DNS label of at most 30 characters (it names topics, users and objects)");
            }
            if (!ids.add(s.id())) {
                out.add(at + ": listed twice");
            }
            if (!TAG.matcher(s.agentTag()).matches()) {
                out.add(at + ": agentTag '" + s.agentTag() + "' is not an image tag");
            }
            if (s.cameraNetworks().isEmpty()) {
                out.add(at + ": no cameraNetworks (the agents' camera egress policy would admit nothing)");
            }
            List<long[]> own = new ArrayList<>();
            for (String cidr : s.cameraNetworks()) {
                long[] r = cidrProblem(at + ": camera network", cidr, out);
                if (r == null) {
                    continue;
                }
                own.add(r);
                for (String[] other : networks) {
                    long[] o = range(other[1]);
                    if (r[0] <= o[1] && o[0] <= r[1]) {
                        out.add(at + ": camera network " + cidr + " overlaps " + other[1] + " of site " + other[0]
                                + (other[0].equals(s.id()) ? "" : " (a copied site keeps the old site's network)"));
                    }
                }
                networks.add(new String[] {s.id(), cidr});
            }
            if (s.cameras().isEmpty()) {
                out.add(at + ": no cameras");
            }
            for (Map.Entry<String, String> c : s.cameras().entrySet()) {
                String cam = at + ": camera " + c.getKey();
                if (!CAMERA.matcher(c.getKey()).matches()) {
                    out.add(cam + ": the name must be lower-case letters and digits (it becomes AGENT_CAMERAS_<NAME>_URL)");
                }
                String prev = urlOwner.putIfAbsent(c.getValue(), s.id() + "/" + c.getKey());
                if (prev != null) {
                    out.add(cam + ": URL " + c.getValue() + " is already camera " + prev);
                }
                cameraProblems(cam, c.getValue(), own, out);
            }
            epsilonProblems(at, s, out);
            if (!RELEASES.contains(s.release())) {
                out.add(at + ": release '" + s.release() + "' is none of " + RELEASES);
            }
            if (s.operatorKeys().isEmpty()) {
                out.add(at + ": no operatorKeys: its gateways would refuse every signed control record");
            }
            for (String line : s.operatorKeys()) {
                var m = KEY_LINE.matcher(line.trim());
                if (!m.matches()) {
                    out.add(at + ": operator key '" + line + "' is not a 'key-id: base64' line");
                    continue;
                }
                try {
                    int n = Base64.getDecoder().decode(m.group(2)).length;
                    if (n != 44) {
                        out.add(at + ": operator key " + m.group(1) + " is " + n + " bytes, not an Ed25519 X.509 public key (44)");
                    }
                } catch (IllegalArgumentException e) {
                    out.add(at + ": operator key " + m.group(1) + " is not base64");
                }
            }
            Set<String> gws = new LinkedHashSet<>();
            for (String g : s.gateways()) {
                if (!ID.matcher(g).matches()) {
                    out.add(at + ": gateway '" + g + "' is not a lower-case DNS label");
                }
                if (!gws.add(g)) {
                    out.add(at + ": gateway " + g + " listed twice");
                }
                if (("gateway-" + s.id() + "-" + g).length() > 63) {
                    out.add(at + ": gateway " + g + ": principal gateway-" + s.id() + "-" + g + " is longer than 63 characters");
                }
            }
            if (!s.gateways().isEmpty() && s.uplinks().isEmpty()) {
                out.add(at + ": off-cluster gateways " + s.gateways() + " but no uplinks (the external listener would not admit them)");
            }
            for (String cidr : s.uplinks()) {
                cidrProblem(at + ": uplink", cidr, out);
            }
            for (String var : s.agent().keySet()) {
                if (!AGENT_VAR.matcher(var).matches()) {
                    out.add(at + ": agent: " + var + " is not an AGENT_* variable");
                } else if (OWN_VARS.contains(var) || var.startsWith("AGENT_CAMERAS_")) {
                    out.add(at + ": agent: " + var + " is set by the list's own fields");
                }
            }
        }
        Set<String> consoleNames = new LinkedHashSet<>();
        for (Console c : consoles) {
            String at = "console " + c.name();
            if (!ID.matcher(c.name()).matches()) {
                out.add(at + ": the name must be a lower-case DNS label");
            }
            if (!consoleNames.add(c.name())) {
                out.add(at + ": listed twice");
            }
            if (c.sites().isEmpty()) {
                out.add(at + ": manages no site");
            }
            for (String site : c.sites()) {
                if (!ids.contains(site)) {
                    out.add(at + ": manages site " + site + ", which is not in the list");
                }
            }
            if (new LinkedHashSet<>(c.sites()).size() != c.sites().size()) {
                out.add(at + ": a site listed twice");
            }
        }
        return out;
    }

    private static void epsilonProblems(String at, Site s, List<String> out) {
        try {
            double e = Double.parseDouble(s.epsilon());
            double lo = Double.parseDouble(s.floorMin());
            double hi = Double.parseDouble(s.floorMax());
            if (!(lo > 0) || !(lo <= hi) || Double.isInfinite(hi)) {
                out.add(at + ": floor [" + s.floorMin() + ", " + s.floorMax() + "] is not 0 < min <= max < ∞");
            } else if (e < lo || e > hi) {
                out.add(at + ": epsilon " + s.epsilon() + " lies outside the floor [" + s.floorMin() + ", "
                        + s.floorMax() + "] (the agent would not start)");
            }
        } catch (NumberFormatException ex) {
            out.add(at + ": epsilon and floor must be numbers");
        }
    }

    private static void cameraProblems(String at, String url, List<long[]> networks, List<String> out) {
        URI u;
        try {
            u = new URI(url);
        } catch (URISyntaxException e) {
            out.add(at + ": '" + url + "' is not a URL");
            return;
        }
        if (u.getScheme() == null || !SCHEMES.contains(u.getScheme().toLowerCase(Locale.ROOT)) || u.getHost() == null) {
            out.add(at + ": " + url + " is not a network camera URL (" + SCHEMES + "://host...)");
            return;
        }
        if (u.getRawUserInfo() != null) {
            out.add(at + ": " + url + " carries credentials; the list is committed, put them in a Secret");
        }
        String host = u.getHost().toLowerCase(Locale.ROOT);
        if (host.equals("example.com") || host.endsWith(".example.com") || host.equals("example.org")
                || host.endsWith(".example.org") || host.equals("example.net") || host.endsWith(".example.net")
                || host.endsWith(".example") || host.endsWith(".invalid") || host.equals("localhost")) {
            out.add(at + ": " + url + " is a placeholder host");
            return;
        }
        if (host.matches("\\d+\\.\\d+\\.\\d+\\.\\d+")) {
            long ip = ipv4(host);
            if (ip < 0) {
                out.add(at + ": " + url + " has no valid IPv4 address");
                return;
            }
            for (String p : PLACEHOLDER_CIDRS) {
                long[] r = range(p);
                if (ip >= r[0] && ip <= r[1]) {
                    out.add(at + ": " + url + " is in the documentation range " + p + " (a placeholder)");
                    return;
                }
            }
            if (networks.stream().noneMatch(r -> ip >= r[0] && ip <= r[1])) {
                out.add(at + ": " + url + " lies in none of the site's cameraNetworks (its egress policy would block it)");
            }
        }
    }

    /** The range of a valid, non-placeholder IPv4 CIDR, or null after adding the problem. */
    private static long[] cidrProblem(String at, String cidr, List<String> out) {
        long[] r = range(cidr);
        if (r == null) {
            out.add(at + " '" + cidr + "' is not an IPv4 CIDR a.b.c.d/n with no host bits set");
            return null;
        }
        if (r[0] == 0 && r[1] == 0xFFFFFFFFL) {
            out.add(at + " " + cidr + " is everywhere");
            return null;
        }
        for (String p : PLACEHOLDER_CIDRS) {
            long[] d = range(p);
            if (r[0] <= d[1] && d[0] <= r[1]) {
                out.add(at + " " + cidr + " is in the documentation range " + p + " (a placeholder)");
                return null;
            }
        }
        return r;
    }

    /** {first, last} address of an IPv4 CIDR, or null where it is not one (or has host bits set). */
    static long[] range(String cidr) {
        String[] parts = cidr.split("/");
        if (parts.length != 2 || !parts[1].matches("\\d{1,2}") || !parts[0].matches("\\d+\\.\\d+\\.\\d+\\.\\d+")) {
            return null;
        }
        int bits = Integer.parseInt(parts[1]);
        long ip = ipv4(parts[0]);
        if (bits > 32 || ip < 0) {
            return null;
        }
        long size = 1L << (32 - bits);
        if (ip % size != 0) {
            return null;
        }
        return new long[] {ip, ip + size - 1};
    }

    private static long ipv4(String dotted) {
        try {
            byte[] b = InetAddress.getByName(dotted).getAddress();
            if (b.length != 4 || !dotted.matches("(25[0-5]|2[0-4]\\d|1?\\d?\\d)(\\.(25[0-5]|2[0-4]\\d|1?\\d?\\d)){3}")) {
                return -1;
            }
            return new BigInteger(1, b).longValue();
        } catch (UnknownHostException e) {
            return -1;
        }
    }
}
