package org.privface.localstack;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.privface.broker.KafkaServerProcess;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * One real Kafka broker process for all tests of a class, in a temporary folder, with the
 * synthetic faces; the folder's logs are kept under target/ when a test clears {@link #passed}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class BrokerProcessTest {
    protected Path root;
    protected Path synthetic;
    protected Path work;
    protected KafkaServerProcess kafka;
    protected String bootstrap;
    protected boolean passed = true;

    /** Names the temporary folder and, under k8s/local-stack/target, the kept logs. */
    protected abstract String name();

    /** Further assumptions checked before the broker starts. */
    protected void assumeReady() {
    }

    @BeforeAll
    void broker() throws Exception {
        root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        synthetic = root.resolve("test-data/synthetic");
        assumeTrue(Files.isDirectory(synthetic.resolve("query")) && Files.isDirectory(synthetic.resolve("enroll")),
                "no synthetic faces at " + synthetic);
        BrokerOutageTest.assumeBrokerJarsResolvable(root);
        assumeReady();
        work = Files.createTempDirectory("privface-" + name() + "-");
        kafka = KafkaServerProcess.start(root, work);
        bootstrap = kafka.bootstrapServers();
    }

    /** Creates a site's topics on the broker, as the deployment's topic job does. */
    protected void applyTopics(String site) throws Exception {
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            new TopicApplier(admin).apply(Topics.definitions(List.of(site)));
        }
    }

    @AfterAll
    void stopBroker() {
        if (kafka != null) {
            kafka.close();
        }
        if (work != null) {
            if (!passed) {
                FaultKit.keepLogs(work, root.resolve("k8s/local-stack/target/" + name() + "-logs"));
            }
            FaultKit.deleteRecursively(work);
        }
    }
}
