package org.privface.wire;

import io.micronaut.context.annotation.Factory;
import io.micronaut.context.env.Environment;
import jakarta.inject.Singleton;

/**
 * The one place a service's Kafka client settings come from, for the gateway and the recognizer
 * alike: everything under {@code kafka.*} ({@code kafka.bootstrap.servers}, and on a secured
 * cluster {@code kafka.security.protocol}, {@code kafka.sasl.mechanism},
 * {@code kafka.sasl.jaas.config}, {@code kafka.ssl.*}; or the {@code KAFKA_*} environment
 * variables). The agent's publisher, control and status clients and the recognizer's readers and
 * output all start from it. Micronaut is a provided dependency of this module: code without a
 * Micronaut context never loads this class.
 */
@Factory
public class KafkaClientFactory {
    /**
     * Read through the environment with its default key convention: a {@code @MapFormat} map, or
     * {@code StringConvention.RAW}, leaves out what comes from {@code KAFKA_*} environment
     * variables (KAFKA_SASL_JAAS_CONFIG and the like). Micronaut offers those in every spelling
     * it derives from the variable's name; the client types' known names pick the right one.
     */
    @Singleton
    KafkaClientProperties kafkaClientProperties(Environment environment) {
        return KafkaClientProperties.of(environment.getProperties("kafka"));
    }
}
