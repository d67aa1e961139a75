package org.privface.wire.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.junit.jupiter.api.Test;
import org.privface.wire.topics.Topics;

class SecurityTest {

    /** "principal operation resource-type name", sorted, for the bundled security.yml and two sites. */
    private static Set<String> table(List<PrincipalSpec> ps) {
        return ps.stream().flatMap(p -> p.acls().stream()).map(b -> {
            assertEquals(AclPermissionType.ALLOW, b.entry().permissionType());
            assertEquals("*", b.entry().host());
            assertEquals(PatternType.LITERAL, b.pattern().patternType());
            return b.entry().principal() + " " + b.entry().operation() + " " + b.pattern().resourceType() + " "
                    + b.pattern().name();
        }).collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void bundledDefinitionsGrantEachPrincipalItsOwnTopicsOnly() {
        List<PrincipalSpec> ps = Security.definitions(List.of("north", "south"));
        assertEquals(List.of("agent-north", "agent-south", "recognizer", "operator"),
                ps.stream().map(PrincipalSpec::name).toList());
        Set<String> expected = new TreeSet<>();
        for (String site : List.of("north", "south")) {
            String agent = "User:agent-" + site;
            for (String t : List.of(Topics.enrollment(site), Topics.query(site), Topics.answer(site), Topics.status(site))) {
                expected.add(agent + " WRITE TOPIC " + t);
                expected.add(agent + " DESCRIBE TOPIC " + t);
            }
            for (String t : List.of(Topics.control(site), Topics.gallery(site))) {
                expected.add(agent + " READ TOPIC " + t);
                expected.add(agent + " DESCRIBE TOPIC " + t);
            }
            for (String t : List.of(Topics.enrollment(site), Topics.query(site), Topics.answer(site), Topics.status(site))) {
                expected.add("User:recognizer READ TOPIC " + t);
                expected.add("User:recognizer DESCRIBE TOPIC " + t);
            }
            // The gallery: written by the recognizer, read by the site's gateways and by the
            // recognizer's owner of the site (the versions on it; issue 41).
            expected.add("User:recognizer WRITE TOPIC " + Topics.gallery(site));
            expected.add("User:recognizer READ TOPIC " + Topics.gallery(site));
            expected.add("User:recognizer DESCRIBE TOPIC " + Topics.gallery(site));
            expected.add("User:operator WRITE TOPIC " + Topics.control(site));
            expected.add("User:operator DESCRIBE TOPIC " + Topics.control(site));
            expected.add("User:operator READ TOPIC " + Topics.status(site));
            expected.add("User:operator DESCRIBE TOPIC " + Topics.status(site));
            // Erasure (#43): the operator's signed command, each component's report, read by all three.
            for (String who : List.of(agent, "User:recognizer", "User:operator")) {
                for (String op : List.of("READ", "WRITE", "DESCRIBE")) {
                    expected.add(who + " " + op + " TOPIC " + Topics.erasure(site));
                }
            }
        }
        expected.add("User:recognizer READ GROUP privface-recognizer");
        expected.add("User:recognizer READ GROUP privface-recognizer.owners");
        expected.add("User:recognizer READ GROUP privface-recognizer.answers");
        // The fleet's per-site counts, written by each site's owner replica, read by every replica.
        for (String op : List.of("READ", "WRITE", "DESCRIBE")) {
            expected.add("User:recognizer " + op + " TOPIC privface.fleet-sites");
        }
        for (String t : List.of(Topics.RESULTS, Topics.DEAD_LETTER)) {
            expected.add("User:recognizer WRITE TOPIC " + t);
            expected.add("User:recognizer DESCRIBE TOPIC " + t);
        }
        assertEquals(expected, table(ps));
        // A site's agent holds nothing of another site.
        for (AclBinding b : ps.get(0).acls()) {
            assertTrue(b.pattern().name().startsWith("privface.north."), b.toString());
        }
    }

    @Test
    void rejectsWhatWouldWidenAGrant() {
        assertThrows(IllegalArgumentException.class, () -> parse("""
                principals:
                  - name: x
                    acls:
                      - {type: topic, name: "*", operations: [READ]}
                """));
        assertThrows(IllegalArgumentException.class, () -> parse("""
                principals:
                  - name: x
                    acls:
                      - {type: topic, name: t, operations: [ALL]}
                """));
        assertThrows(IllegalArgumentException.class, () -> parse("""
                principals:
                  - name: x
                    acls:
                      - {type: any, name: t, operations: [READ]}
                """));
        assertThrows(IllegalArgumentException.class, () -> parse("""
                principals:
                  - name: x
                  - name: x
                """));
        List<PrincipalSpec> prefixed = parse("""
                principals:
                  - name: reader
                    acls:
                      - {type: topic, name: "privface.", pattern: prefixed, operations: [read]}
                """);
        assertEquals(PatternType.PREFIXED, prefixed.get(0).acls().get(0).pattern().patternType());
    }

    /** Every grant of a vendor, as "operation resource-type name pattern". */
    private static Set<String> grants(PrincipalSpec p) {
        return p.acls().stream().map(b -> {
            assertEquals(AclPermissionType.ALLOW, b.entry().permissionType());
            assertEquals("User:" + p.name(), b.entry().principal());
            return b.entry().operation() + " " + b.pattern().resourceType() + " " + b.pattern().name() + " "
                    + b.pattern().patternType();
        }).collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void aVendorIsConfigurationAndReadsOnlyItsSitesFaces() {
        List<PrincipalSpec> ps = Security.parse(new ByteArrayInputStream("""
                principals:
                  - name: recognizer
                    acls:
                      - {type: group, name: privface-recognizer, operations: [READ]}
                vendors:
                  - {name: acme, sites: [north, east], results: true}
                  - {name: quiet, sites: [south]}
                  - {name: elsewhere, sites: [west]}
                retired: [oldco]
                """.getBytes(StandardCharsets.UTF_8)), List.of("north", "south", "east"));
        assertEquals(List.of("recognizer", "acme", "quiet", "oldco"), ps.stream().map(PrincipalSpec::name).toList(),
                "a vendor listing none of the applied sites is left out");
        Set<String> acme = new TreeSet<>();
        for (String site : List.of("north", "east")) {
            for (String t : List.of(Topics.enrollment(site), Topics.query(site), Topics.answer(site))) {
                acme.add("READ TOPIC " + t + " LITERAL");
                acme.add("DESCRIBE TOPIC " + t + " LITERAL");
            }
        }
        acme.add("READ GROUP vendor.acme. PREFIXED");
        acme.add("WRITE TOPIC vendor.acme.results LITERAL");
        acme.add("DESCRIBE TOPIC vendor.acme.results LITERAL");
        assertEquals(acme, grants(ps.get(1)));
        assertEquals(Set.of("READ TOPIC privface.south.enrollment LITERAL", "DESCRIBE TOPIC privface.south.enrollment LITERAL",
                "READ TOPIC privface.south.query LITERAL", "DESCRIBE TOPIC privface.south.query LITERAL",
                "READ TOPIC privface.south.answer LITERAL", "DESCRIBE TOPIC privface.south.answer LITERAL",
                "READ GROUP vendor.quiet. PREFIXED"), grants(ps.get(2)));
        assertTrue(ps.get(3).retired() && ps.get(3).acls().isEmpty());
        assertTrue(!ps.get(1).retired());

        var topics = Security.vendorTopics(ps);
        assertEquals(List.of("vendor.acme.results"), topics.stream().map(t -> t.name()).toList());
        var results = Topics.definitions(List.of()).stream().filter(t -> t.name().equals(Topics.RESULTS)).findFirst().orElseThrow();
        assertEquals(results.config(), topics.get(0).config());
        assertEquals(results.partitions(), topics.get(0).partitions());
    }

    @Test
    void aVendorEntryCannotWidenItsGrants() {
        // Unknown keys (an attempt to add acls), dotted names (a prefix covering another vendor's),
        // no sites, a non-boolean results, and a name clash with a product principal are refused.
        for (String bad : List.of(
                "  - {name: acme, sites: [north], acls: [{type: topic, name: privface.results, operations: [READ]}]}",
                "  - {name: acme.x, sites: [north]}",
                "  - {name: acme, sites: []}",
                "  - {name: acme, sites: [north], results: yes-please}",
                "  - {name: recognizer, sites: [north]}")) {
            String yaml = "principals:\n  - name: recognizer\nvendors:\n" + bad + "\n";
            assertThrows(IllegalArgumentException.class, () -> Security.parse(
                    new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)), List.of("north")), bad);
        }
    }

    @Test
    void theBundledFileDeclaresNoVendorByDefault() {
        assertTrue(Security.definitions(List.of("north")).stream().noneMatch(PrincipalSpec::retired));
        assertTrue(Security.vendorTopics(Security.definitions(List.of("north"))).isEmpty());
    }

    @Test
    void passwordsComeFromTheEnvironmentOrAFile() {
        assertEquals("PRIVFACE_SCRAM_PASSWORD_AGENT_NORTH", Passwords.envName("agent-north"));
        Passwords env = Passwords.fromEnvironment(Map.of("PRIVFACE_SCRAM_PASSWORD_RECOGNIZER", "r"));
        assertEquals(Optional.of("r"), env.of("recognizer"));
        assertEquals(Optional.empty(), env.of("operator"));
        Passwords first = u -> u.equals("operator") ? Optional.of("o") : Optional.empty();
        assertEquals(Optional.of("o"), first.orElse(env).of("operator"));
        assertEquals(Optional.of("r"), first.orElse(env).of("recognizer"));
    }

    private static List<PrincipalSpec> parse(String yaml) {
        return Security.parse(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)), List.of("north"));
    }
}
