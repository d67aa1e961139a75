package org.privface.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.junit.jupiter.api.Test;

class KafkaClientPropertiesTest {

    @Test
    void keepsOnlyWhatEachClientKnows() {
        KafkaClientProperties k = KafkaClientProperties.of(Map.of(
                "bootstrap.servers", List.of("a:9092", "b:9092"),
                "security.protocol", "SASL_SSL",
                "sasl.mechanism", "SCRAM-SHA-512",
                "sasl.jaas.config", "secret",
                "sasl.jaas-config", "a spelling variant from KAFKA_SASL_JAAS_CONFIG",
                "group.id", "someone-elses-group",
                "acks", "1",
                "heap.opts", "-Xmx1g"));
        Properties c = k.consumer();
        assertEquals("a:9092,b:9092", c.get("bootstrap.servers"));
        assertEquals("SASL_SSL", c.get("security.protocol"));
        assertEquals("secret", c.get("sasl.jaas.config"));
        assertFalse(c.containsKey("group.id"), "a component decides on its group");
        assertFalse(c.containsKey("sasl.jaas-config"));
        assertFalse(c.containsKey("heap.opts"));
        assertFalse(c.containsKey("acks"));
        Properties p = k.producer();
        assertEquals("1", p.get("acks"));
        assertFalse(p.containsKey("group.id"));
        Properties a = k.admin();
        assertEquals("SCRAM-SHA-512", a.get("sasl.mechanism"));
        assertFalse(a.containsKey("acks"));
        assertFalse(k.toString().contains("secret"), k.toString());
        assertTrue(k.names().contains("sasl.jaas.config"));
    }
}
