package org.privface.wire.topics;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;

/**
 * Applies topic definitions to a running cluster through the Admin API. Idempotent: existing
 * topics get their configs set and partitions grown, never shrunk or recreated.
 */
public final class TopicApplier {
    private final Admin admin;

    public TopicApplier(Admin admin) {
        this.admin = admin;
    }

    /** What one apply changed; empty lists when the cluster already matched the definitions. */
    public record Result(List<String> created, List<String> partitionsGrown, List<String> configsChanged) {
        public Result {
            created = List.copyOf(created);
            partitionsGrown = List.copyOf(partitionsGrown);
            configsChanged = List.copyOf(configsChanged);
        }

        public boolean changedNothing() {
            return created.isEmpty() && partitionsGrown.isEmpty() && configsChanged.isEmpty();
        }

        @Override
        public String toString() {
            return "created " + created + ", partitions grown " + partitionsGrown + ", configs changed " + configsChanged;
        }
    }

    /** Creates or updates every topic; returns the names created in this call. */
    public List<String> apply(Collection<TopicSpec> specs) throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
        return applyAll(specs).created();
    }

    /**
     * Creates missing topics, grows partitions and sets the declared configs where they differ
     * (so a second run alters nothing); returns what it changed, configs as {@code topic:key}.
     */
    public Result applyAll(Collection<TopicSpec> specs) throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
        int brokers = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).size();
        Set<String> existing = admin.listTopics().names().get();
        List<NewTopic> toCreate = new ArrayList<>();
        for (TopicSpec s : specs) {
            if (!existing.contains(s.name())) {
                // Production asks for RF 3; a dev broker has one node, so cap rather than fail.
                short rf = (short) Math.min(s.replicationFactor(), brokers);
                toCreate.add(new NewTopic(s.name(), s.partitions(), rf).configs(s.config()));
            }
        }
        if (!toCreate.isEmpty()) {
            admin.createTopics(toCreate).all().get();
        }
        List<String> grown = new ArrayList<>();
        List<String> changed = new ArrayList<>();
        List<TopicSpec> updates = specs.stream().filter(s -> existing.contains(s.name())).toList();
        if (!updates.isEmpty()) {
            Map<String, TopicDescription> described = admin.describeTopics(
                    updates.stream().map(TopicSpec::name).toList()).allTopicNames().get();
            Map<ConfigResource, Config> configs = admin.describeConfigs(updates.stream()
                    .map(s -> new ConfigResource(ConfigResource.Type.TOPIC, s.name())).toList()).all().get();
            for (TopicSpec s : updates) {
                int have = described.get(s.name()).partitions().size();
                if (have < s.partitions()) {
                    admin.createPartitions(Map.of(s.name(), NewPartitions.increaseTo(s.partitions()))).all().get();
                    grown.add(s.name() + ":" + have + "->" + s.partitions());
                }
                var resource = new ConfigResource(ConfigResource.Type.TOPIC, s.name());
                Config current = configs.get(resource);
                List<AlterConfigOp> ops = s.config().entrySet().stream()
                        .filter(e -> current == null || current.get(e.getKey()) == null
                                || !e.getValue().equals(current.get(e.getKey()).value()))
                        .map(e -> new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET))
                        .toList();
                if (!ops.isEmpty()) {
                    admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get();
                    ops.forEach(op -> changed.add(s.name() + ":" + op.configEntry().name()));
                }
            }
        }
        return new Result(toCreate.stream().map(NewTopic::name).toList(), grown, changed);
    }

    /**
     * {@code --bootstrap host:port --sites a,b [--command-config admin.properties]}: applies
     * broker-config/topics.yml; the optional file holds the admin client's settings (security).
     */
    public static void main(String[] args) throws Exception {
        String usage = "usage: --bootstrap HOST:PORT --sites SITE[,SITE...] [--command-config FILE]";
        String bootstrap = null;
        String commandConfig = null;
        List<String> sites = List.of();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--bootstrap" -> bootstrap = args[++i];
                case "--sites" -> sites = Arrays.asList(args[++i].split(","));
                case "--command-config" -> commandConfig = args[++i];
                default -> throw new IllegalArgumentException("unknown argument " + args[i] + "; " + usage);
            }
        }
        if (bootstrap == null || sites.isEmpty()) {
            throw new IllegalArgumentException(usage);
        }
        try (Admin admin = Admin.create(adminProperties(bootstrap, commandConfig))) {
            List<TopicSpec> specs = Topics.definitions(sites);
            Result r = new TopicApplier(admin).applyAll(specs);
            System.out.printf("topics: %d defined; %s%n", specs.size(), r);
        }
    }

    /** The admin client's settings: the {@code --command-config} file if any, then the bootstrap servers. */
    public static Properties adminProperties(String bootstrap, String commandConfig) throws java.io.IOException {
        Properties p = new Properties();
        if (commandConfig != null) {
            try (var in = java.nio.file.Files.newBufferedReader(java.nio.file.Path.of(commandConfig))) {
                p.load(in);
            }
        }
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return p;
    }
}
