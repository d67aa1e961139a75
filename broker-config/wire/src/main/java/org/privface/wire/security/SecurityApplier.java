package org.privface.wire.security;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.TopicSpec;
import org.privface.wire.topics.Topics;

/**
 * Applies topics (broker-config/topics.yml), SCRAM users and ACLs (broker-config/security.yml)
 * to a running cluster through the Admin API, as a super user. Idempotent: topics as in
 * {@link TopicApplier}; a user is created only when it has no SCRAM-SHA-512 credential yet (its
 * password is then required; an existing user's password is left alone unless
 * {@code resetPasswords}); only missing ACLs are created. ACLs of the declared principals that
 * security.yml does not declare are reported, and removed only with {@code prune}; so are the
 * ACLs and the credential of a principal listed under {@code retired:}. A second run reports
 * nothing changed.
 */
public final class SecurityApplier {
    public static final ScramMechanism MECHANISM = ScramMechanism.SCRAM_SHA_512;
    /** Kafka accepts 4096 to 16384 for SHA-512. */
    public static final int ITERATIONS = 8192;
    private static final java.time.Duration VISIBLE_WITHIN = java.time.Duration.ofSeconds(30);

    private final Admin admin;

    public SecurityApplier(Admin admin) {
        this.admin = admin;
    }

    /** What one apply changed, and what it found that security.yml does not declare. */
    public record Report(TopicApplier.Result topics, List<String> usersCreated, List<String> passwordsReset,
                         List<AclBinding> aclsCreated, List<AclBinding> aclsRemoved, List<AclBinding> aclsUndeclared,
                         List<String> retiredUsersDeleted, List<String> retiredUsersPresent) {
        public Report {
            retiredUsersDeleted = List.copyOf(retiredUsersDeleted);
            retiredUsersPresent = List.copyOf(retiredUsersPresent);
            usersCreated = List.copyOf(usersCreated);
            passwordsReset = List.copyOf(passwordsReset);
            aclsCreated = List.copyOf(aclsCreated);
            aclsRemoved = List.copyOf(aclsRemoved);
            aclsUndeclared = List.copyOf(aclsUndeclared);
        }

        public boolean changedNothing() {
            return topics.changedNothing() && usersCreated.isEmpty() && passwordsReset.isEmpty()
                    && aclsCreated.isEmpty() && aclsRemoved.isEmpty() && retiredUsersDeleted.isEmpty();
        }

        /** Human-readable, one line per kind of change; no secrets. */
        public String describe() {
            StringBuilder b = new StringBuilder();
            b.append("topics: ").append(topics).append('\n');
            b.append("users created: ").append(usersCreated).append('\n');
            if (!passwordsReset.isEmpty()) {
                b.append("passwords reset: ").append(passwordsReset).append('\n');
            }
            b.append("acls created: ").append(aclsCreated.size()).append('\n');
            aclsCreated.forEach(a -> b.append("  + ").append(SecurityApplier.describe(a)).append('\n'));
            if (!aclsRemoved.isEmpty()) {
                b.append("acls removed: ").append(aclsRemoved.size()).append('\n');
                aclsRemoved.forEach(a -> b.append("  - ").append(SecurityApplier.describe(a)).append('\n'));
            }
            if (!aclsUndeclared.isEmpty()) {
                b.append("acls not in security.yml (kept; --prune removes them): ").append(aclsUndeclared.size()).append('\n');
                aclsUndeclared.forEach(a -> b.append("  ? ").append(SecurityApplier.describe(a)).append('\n'));
            }
            if (!retiredUsersDeleted.isEmpty()) {
                b.append("retired users deleted: ").append(retiredUsersDeleted).append('\n');
            }
            if (!retiredUsersPresent.isEmpty()) {
                b.append("retired users still present (--prune deletes them): ").append(retiredUsersPresent).append('\n');
            }
            return b.toString();
        }
    }

    /**
     * Applies everything: topics first (ACLs may name them), then users, then ACLs.
     *
     * @param passwords     consulted for users that do not exist yet (all users with resetPasswords)
     * @param resetPasswords set every declared user's password again (new salt: not idempotent)
     * @param prune         delete ACLs of declared principals that security.yml does not declare
     */
    public Report apply(List<TopicSpec> topics, List<PrincipalSpec> principals, Passwords passwords,
                        boolean resetPasswords, boolean prune)
            throws ExecutionException, InterruptedException, TimeoutException {
        TopicApplier.Result t = new TopicApplier(admin).applyAll(topics);
        List<String> created = new ArrayList<>();
        List<String> reset = new ArrayList<>();
        applyUsers(principals, passwords, resetPasswords, created, reset);
        List<AclBinding> undeclared = new ArrayList<>();
        List<AclBinding> aclsCreated = applyAcls(principals, undeclared);
        List<AclBinding> removed = List.of();
        if (prune && !undeclared.isEmpty()) {
            admin.deleteAcls(undeclared.stream().map(AclBinding::toFilter).toList()).all().get();
            removed = List.copyOf(undeclared);
            List<AclBinding> gone = removed;
            awaitVisible("removals of " + gone.size() + " ACLs", () -> admin.describeAcls(AclBindingFilter.ANY).values().get()
                    .stream().noneMatch(gone::contains));
            undeclared.clear();
        }
        List<String> retiredPresent = retiredUsers(principals);
        List<String> retiredDeleted = List.of();
        if (prune && !retiredPresent.isEmpty()) {
            admin.alterUserScramCredentials(retiredPresent.stream()
                    .<UserScramCredentialAlteration>map(u -> new UserScramCredentialDeletion(u, MECHANISM)).toList()).all().get();
            retiredDeleted = retiredPresent;
            awaitVisible("deletion of retired users " + retiredDeleted, () -> retiredUsers(principals).isEmpty());
            retiredPresent = List.of();
        }
        return new Report(t, created, reset, aclsCreated, removed, undeclared, retiredDeleted, retiredPresent);
    }

    /** Retired principals that still hold a SCRAM-SHA-512 credential. */
    private List<String> retiredUsers(List<PrincipalSpec> principals) throws ExecutionException, InterruptedException {
        Map<String, UserScramCredentialsDescription> existing = admin.describeUserScramCredentials().all().get();
        return principals.stream().filter(PrincipalSpec::retired).map(PrincipalSpec::name)
                .filter(u -> existing.containsKey(u) && existing.get(u).credentialInfos().stream()
                        .anyMatch(c -> c.mechanism() == MECHANISM))
                .toList();
    }

    private void applyUsers(List<PrincipalSpec> principals, Passwords passwords, boolean resetPasswords,
                            List<String> created, List<String> reset) throws ExecutionException, InterruptedException {
        Map<String, UserScramCredentialsDescription> existing = admin.describeUserScramCredentials().all().get();
        List<UserScramCredentialAlteration> upserts = new ArrayList<>();
        List<String> missingPasswords = new ArrayList<>();
        for (PrincipalSpec p : principals) {
            if (p.retired()) {
                continue;
            }
            UserScramCredentialsDescription d = existing.get(p.name());
            boolean has = d != null && d.credentialInfos().stream().anyMatch(c -> c.mechanism() == MECHANISM);
            if (has && !resetPasswords) {
                continue;
            }
            var password = passwords.of(p.name());
            if (password.isEmpty()) {
                missingPasswords.add(p.name() + " (" + Passwords.envName(p.name()) + ")");
                continue;
            }
            upserts.add(new UserScramCredentialUpsertion(p.name(), new ScramCredentialInfo(MECHANISM, ITERATIONS),
                    password.get()));
            (has ? reset : created).add(p.name());
        }
        if (!missingPasswords.isEmpty()) {
            throw new IllegalStateException("no password for " + missingPasswords
                    + "; set the environment variable(s) or pass --passwords FILE");
        }
        if (!upserts.isEmpty()) {
            admin.alterUserScramCredentials(upserts).all().get();
            // The controller has committed them; the broker answering describe catches up from the
            // metadata log. Wait, so the report holds and a second run right after sees them.
            awaitVisible("SCRAM users " + created, () -> {
                Map<String, UserScramCredentialsDescription> now = admin.describeUserScramCredentials().all().get();
                return created.stream().allMatch(u -> now.containsKey(u) && now.get(u).credentialInfos().stream()
                        .anyMatch(c -> c.mechanism() == MECHANISM));
            });
        }
    }

    /** Creates the declared ACLs that are missing; fills {@code undeclared} with the declared principals' extra ones. */
    private List<AclBinding> applyAcls(List<PrincipalSpec> principals, List<AclBinding> undeclared)
            throws ExecutionException, InterruptedException {
        Set<AclBinding> existing = new LinkedHashSet<>(admin.describeAcls(AclBindingFilter.ANY).values().get());
        Set<AclBinding> wanted = new LinkedHashSet<>();
        principals.forEach(p -> wanted.addAll(p.acls()));
        List<AclBinding> missing = wanted.stream().filter(b -> !existing.contains(b)).toList();
        if (!missing.isEmpty()) {
            admin.createAcls(missing).all().get();
            awaitVisible(missing.size() + " ACLs", () -> admin.describeAcls(AclBindingFilter.ANY).values().get()
                    .containsAll(missing));
        }
        Set<String> managed = principals.stream().map(PrincipalSpec::principal).collect(Collectors.toSet());
        existing.stream().filter(b -> managed.contains(b.entry().principal()) && !wanted.contains(b))
                .forEach(undeclared::add);
        return missing;
    }

    @FunctionalInterface
    private interface Check {
        boolean holds() throws ExecutionException, InterruptedException;
    }

    /** Polls until the broker shows what the controller committed; 30 s at most. */
    private static void awaitVisible(String what, Check check) throws ExecutionException, InterruptedException {
        long deadline = System.nanoTime() + VISIBLE_WITHIN.toNanos();
        while (!check.holds()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(what + " were accepted but not visible on the broker within " + VISIBLE_WITHIN);
            }
            Thread.sleep(100);
        }
    }

    /** {@code User:agent-north ALLOW WRITE on TOPIC privface.north.query (LITERAL) from *}. */
    public static String describe(AclBinding b) {
        return b.entry().principal() + " " + b.entry().permissionType() + " " + b.entry().operation() + " on "
                + b.pattern().resourceType() + " " + b.pattern().name() + " (" + b.pattern().patternType() + ") from "
                + b.entry().host();
    }

    /**
     * {@code --bootstrap HOST:PORT --sites SITE[,SITE...] --command-config admin.properties
     * [--passwords FILE] [--reset-passwords] [--prune]}. The command config holds the admin
     * client's settings (a super user's SASL_SSL credentials). Passwords for users that do not
     * exist yet come from {@code --passwords} (a properties file user=password) or
     * {@code PRIVFACE_SCRAM_PASSWORD_<USER>}.
     */
    public static void main(String[] args) throws Exception {
        String usage = "usage: --bootstrap HOST:PORT --sites SITE[,SITE...] --command-config FILE"
                + " [--passwords FILE] [--reset-passwords] [--prune]";
        String bootstrap = null;
        String commandConfig = null;
        Path passwordFile = null;
        boolean resetPasswords = false;
        boolean prune = false;
        List<String> sites = List.of();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--bootstrap" -> bootstrap = args[++i];
                case "--sites" -> sites = Arrays.asList(args[++i].split(","));
                case "--command-config" -> commandConfig = args[++i];
                case "--passwords" -> passwordFile = Path.of(args[++i]);
                case "--reset-passwords" -> resetPasswords = true;
                case "--prune" -> prune = true;
                default -> throw new IllegalArgumentException("unknown argument " + args[i] + "; " + usage);
            }
        }
        if (bootstrap == null || sites.isEmpty() || commandConfig == null) {
            throw new IllegalArgumentException(usage);
        }
        Passwords passwords = Passwords.fromEnvironment(System.getenv());
        if (passwordFile != null) {
            passwords = Passwords.fromFile(passwordFile).orElse(passwords);
        }
        try (Admin admin = Admin.create(TopicApplier.adminProperties(bootstrap, commandConfig))) {
            List<PrincipalSpec> principals = Security.definitions(sites);
            List<TopicSpec> topics = new ArrayList<>(Topics.definitions(sites));
            topics.addAll(Security.vendorTopics(principals));
            Report r = new SecurityApplier(admin).apply(topics, principals, passwords, resetPasswords, prune);
            System.out.print(r.describe());
            System.out.println(r.changedNothing() ? "nothing changed" : "applied");
        }
    }

    /** For tests and tools: every ACL the declared principals should hold. */
    public static List<AclBinding> declared(Collection<PrincipalSpec> principals) {
        return principals.stream().flatMap(p -> p.acls().stream()).toList();
    }
}
