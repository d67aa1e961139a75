package org.privface.wire.security;

import java.util.List;

import org.apache.kafka.common.acl.AclBinding;

/**
 * One SCRAM user as declared in broker-config/security.yml, with its site already substituted,
 * and every ACL it is granted (principal {@code User:<name>}). A retired principal (a vendor
 * listed under {@code retired:}) is granted nothing: the applier reports its remaining ACLs and
 * credential, and removes them with {@code --prune}.
 */
public record PrincipalSpec(String name, List<AclBinding> acls, boolean retired) {
    public PrincipalSpec {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("principal name missing");
        }
        acls = List.copyOf(acls);
        if (retired && !acls.isEmpty()) {
            throw new IllegalArgumentException("a retired principal is granted nothing: " + name);
        }
    }

    public PrincipalSpec(String name, List<AclBinding> acls) {
        this(name, acls, false);
    }

    /** The Kafka principal string, {@code User:<name>}. */
    public String principal() {
        return Security.principal(name);
    }
}
