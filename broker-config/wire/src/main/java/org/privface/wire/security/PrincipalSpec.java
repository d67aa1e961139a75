package org.privface.wire.security;

import java.util.List;

import org.apache.kafka.common.acl.AclBinding;

/**
 * One SCRAM user as declared in broker-config/security.yml, with its site already substituted,
 * and every ACL it is granted (principal {@code User:<name>}).
 */
public record PrincipalSpec(String name, List<AclBinding> acls) {
    public PrincipalSpec {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("principal name missing");
        }
        acls = List.copyOf(acls);
    }

    /** The Kafka principal string, {@code User:<name>}. */
    public String principal() {
        return Security.principal(name);
    }
}
