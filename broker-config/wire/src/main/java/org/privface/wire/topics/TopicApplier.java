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

    /** Creates or updates every topic; returns the names created in this call. */
    public List<String> apply(Collection<TopicSpec> specs) throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
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
        List<TopicSpec> updates = specs.stream().filter(s -> existing.contains(s.name())).toList();
        if (!updates.isEmpty()) {
            Map<String, TopicDescription> described = admin.describeTopics(
                    updates.stream().map(TopicSpec::name).toList()).allTopicNames().get();
            for (TopicSpec s : updates) {
                int have = described.get(s.name()).partitions().size();
                if (have < s.partitions()) {
                    admin.createPartitions(Map.of(s.name(), NewPartitions.increaseTo(s.partitions()))).all().get();
                }
                if (!s.config().isEmpty()) {
                    var resource = new ConfigResource(ConfigResource.Type.TOPIC, s.name());
                    List<AlterConfigOp> ops = s.config().entrySet().stream()
                            .map(e -> new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET))
                            .toList();
                    admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get();
                }
            }
        }
        return toCreate.stream().map(NewTopic::name).toList();
    }

    /** {@code --bootstrap host:port --sites a,b}: applies broker-config/topics.yml. */
    public static void main(String[] args) throws Exception {
        String bootstrap = null;
        List<String> sites = List.of();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--bootstrap" -> bootstrap = args[++i];
                case "--sites" -> sites = Arrays.asList(args[++i].split(","));
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; usage: --bootstrap HOST:PORT --sites SITE[,SITE...]");
            }
        }
        if (bootstrap == null || sites.isEmpty()) {
            throw new IllegalArgumentException("usage: --bootstrap HOST:PORT --sites SITE[,SITE...]");
        }
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            List<TopicSpec> specs = Topics.definitions(sites);
            List<String> created = new TopicApplier(admin).apply(specs);
            System.out.printf("topics: %d defined, %d created %s%n", specs.size(), created.size(), created);
        }
    }
}
