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
            for (String t : List.of(Topics.enrollment(site), Topics.query(site), Topics.status(site))) {
                expected.add(agent + " WRITE TOPIC " + t);
                expected.add(agent + " DESCRIBE TOPIC " + t);
            }
            expected.add(agent + " READ TOPIC " + Topics.control(site));
            expected.add(agent + " DESCRIBE TOPIC " + Topics.control(site));
            for (String t : List.of(Topics.enrollment(site), Topics.query(site), Topics.status(site))) {
                expected.add("User:recognizer READ TOPIC " + t);
                expected.add("User:recognizer DESCRIBE TOPIC " + t);
            }
            expected.add("User:operator WRITE TOPIC " + Topics.control(site));
            expected.add("User:operator DESCRIBE TOPIC " + Topics.control(site));
            expected.add("User:operator READ TOPIC " + Topics.status(site));
            expected.add("User:operator DESCRIBE TOPIC " + Topics.status(site));
        }
        expected.add("User:recognizer READ GROUP privface-recognizer");
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
