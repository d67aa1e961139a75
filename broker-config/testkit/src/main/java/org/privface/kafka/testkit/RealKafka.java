package org.privface.kafka.testkit;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;

import kafka.testkit.KafkaClusterTestKit;
import kafka.testkit.TestKitNodes;

/**
 * One real Apache Kafka broker per test JVM, started on first use and stopped at JVM exit.
 * Testcontainers' Kafka module when a Docker engine answers; otherwise Kafka's own in-JVM KRaft
 * test kit, whose version matches the clients. Either way it is a real broker, never a mock.
 */
public final class RealKafka {
    private static final String IMAGE = "apache/kafka:3.9.1";
    private static volatile Broker broker;

    private RealKafka() {
    }

    /** A running broker's bootstrap servers, starting it on first call. */
    public static String bootstrapServers() {
        return broker().bootstrapServers();
    }

    private static Broker broker() {
        Broker b = broker;
        if (b == null) {
            synchronized (RealKafka.class) {
                b = broker;
                if (b == null) {
                    b = start();
                    Broker started = b;
                    Runtime.getRuntime().addShutdownHook(new Thread(started::close, "real-kafka-stop"));
                    broker = b;
                }
            }
        }
        return b;
    }

    private static Broker start() {
        try {
            if (dockerAvailable()) {
                KafkaContainer c = new KafkaContainer(IMAGE);
                c.start();
                return new Broker(c.getBootstrapServers(), "Testcontainers " + IMAGE, c::stop);
            }
            KafkaClusterTestKit kit = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
                    .setCombined(true)
                    .setNumBrokerNodes(1)
                    .setNumControllerNodes(1)
                    .build())
                    .setConfigProp("group.initial.rebalance.delay.ms", "0")
                    .setConfigProp("offsets.topic.replication.factor", "1")
                    .setConfigProp("transaction.state.log.replication.factor", "1")
                    .setConfigProp("transaction.state.log.min.isr", "1")
                    .setConfigProp("auto.create.topics.enable", "false")
                    .build();
            kit.format();
            kit.startup();
            kit.waitForReadyBrokers();
            return new Broker(kit.bootstrapServers(), "Kafka KRaft test kit (in-JVM)", () -> {
                try {
                    kit.close();
                } catch (Exception e) {
                    // Shutting down at JVM exit: nothing left to do with the error.
                }
            });
        } catch (Exception e) {
            throw new IllegalStateException("cannot start a Kafka broker for tests", e);
        }
    }

    private static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (Throwable t) {
            return false;
        }
    }

    private record Broker(String bootstrapServers, String description, Runnable stop) {
        void close() {
            stop.run();
        }
    }
}
