package org.privface.k8s;

import java.util.List;
import java.util.Set;

import io.strimzi.api.kafka.model.user.KafkaUser;
import io.strimzi.api.kafka.model.user.KafkaUserAuthorizationSimple;
import io.strimzi.api.kafka.model.user.acl.AclOperation;
import io.strimzi.api.kafka.model.user.acl.AclResourcePatternType;
import io.strimzi.api.kafka.model.user.acl.AclRule;
import io.strimzi.api.kafka.model.user.acl.AclRuleGroupResource;
import io.strimzi.api.kafka.model.user.acl.AclRuleResource;
import io.strimzi.api.kafka.model.user.acl.AclRuleTopicResource;
import io.strimzi.api.kafka.model.user.acl.AclRuleTransactionalIdResource;
import io.strimzi.api.kafka.model.user.acl.AclRuleType;

/**
 * What a KafkaUser's simple-authorization ACLs allow, decided as Kafka's StandardAuthorizer does:
 * a DENY rule wins over any ALLOW; a rule matches a resource by literal name, by the literal
 * wildcard "*", or by prefix; ALL implies every operation, and READ, WRITE, DELETE and ALTER
 * imply DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS.
 */
final class KafkaAcls {
    private KafkaAcls() {}

    static List<AclRule> rules(KafkaUser user) {
        if (user.getSpec() == null || !(user.getSpec().getAuthorization() instanceof KafkaUserAuthorizationSimple s)
                || s.getAcls() == null) {
            return List.of();
        }
        return s.getAcls();
    }

    static List<AclOperation> operations(AclRule rule) {
        if (rule.getOperations() != null && !rule.getOperations().isEmpty()) {
            return rule.getOperations();
        }
        return rule.getOperation() == null ? List.of() : List.of(rule.getOperation());
    }

    static boolean allowsTopic(KafkaUser user, String topic, AclOperation op) {
        return allows(user, "topic", topic, op);
    }

    static boolean allows(KafkaUser user, String resourceType, String name, AclOperation op) {
        boolean allowed = false;
        for (AclRule r : rules(user)) {
            if (!matches(r.getResource(), resourceType, name) || operations(r).stream().noneMatch(g -> implies(g, op))) {
                continue;
            }
            if (r.getType() == AclRuleType.DENY) {
                return false;
            }
            allowed = true;
        }
        return allowed;
    }

    static boolean implies(AclOperation granted, AclOperation requested) {
        if (granted == AclOperation.ALL || granted == requested) {
            return true;
        }
        if (requested == AclOperation.DESCRIBE) {
            return Set.of(AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER).contains(granted);
        }
        return requested == AclOperation.DESCRIBECONFIGS && granted == AclOperation.ALTERCONFIGS;
    }

    static String type(AclRuleResource r) {
        if (r instanceof AclRuleTopicResource) {
            return "topic";
        }
        if (r instanceof AclRuleGroupResource) {
            return "group";
        }
        if (r instanceof AclRuleTransactionalIdResource) {
            return "transactionalId";
        }
        return "cluster";
    }

    static String name(AclRuleResource r) {
        if (r instanceof AclRuleTopicResource t) {
            return t.getName();
        }
        if (r instanceof AclRuleGroupResource g) {
            return g.getName();
        }
        if (r instanceof AclRuleTransactionalIdResource t) {
            return t.getName();
        }
        return "kafka-cluster";
    }

    static AclResourcePatternType patternType(AclRuleResource r) {
        AclResourcePatternType p = null;
        if (r instanceof AclRuleTopicResource t) {
            p = t.getPatternType();
        } else if (r instanceof AclRuleGroupResource g) {
            p = g.getPatternType();
        } else if (r instanceof AclRuleTransactionalIdResource t) {
            p = t.getPatternType();
        }
        return p == null ? AclResourcePatternType.LITERAL : p;
    }

    private static boolean matches(AclRuleResource r, String resourceType, String name) {
        if (!type(r).equals(resourceType)) {
            return false;
        }
        String pattern = name(r);
        if (patternType(r) == AclResourcePatternType.PREFIX) {
            return name.startsWith(pattern);
        }
        return pattern.equals("*") || pattern.equals(name);
    }
}
