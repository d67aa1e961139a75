package org.privface.agent.publish;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.Map;
import java.util.Properties;

import io.micronaut.context.ApplicationContext;
import org.junit.jupiter.api.Test;
import org.privface.wire.KafkaClientProperties;

/** Every client the gateway creates starts from {@code kafka.*}: bootstrap servers and security alike. */
class KafkaClientFactoryTest {

    @Test
    void kafkaPropertiesReachEveryClientType() {
        String jaas = "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"agent-x\" password=\"p\";";
        try (ApplicationContext ctx = ApplicationContext.run(Map.of(
                "kafka.health.enabled", "false",
                "kafka.bootstrap.servers", "10.0.0.1:9094",
                "kafka.security.protocol", "SASL_SSL",
                "kafka.sasl.mechanism", "SCRAM-SHA-512",
                "kafka.sasl.jaas.config", jaas,
                "kafka.ssl.truststore.location", "/etc/privface/truststore.p12"))) {
            KafkaClientProperties k = ctx.getBean(KafkaClientProperties.class);
            for (Properties p : new Properties[] {k.producer(), k.consumer(), k.admin()}) {
                assertEquals("10.0.0.1:9094", p.get("bootstrap.servers"));
                assertEquals("SASL_SSL", p.get("security.protocol"));
                assertEquals("SCRAM-SHA-512", p.get("sasl.mechanism"));
                assertEquals(jaas, p.get("sasl.jaas.config"));
                assertEquals("/etc/privface/truststore.p12", p.get("ssl.truststore.location"));
                assertFalse(p.containsKey("health.enabled"));
            }
        }
    }
}
