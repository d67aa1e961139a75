package org.privface.agent.publish;

import io.micronaut.context.annotation.Factory;
import io.micronaut.context.env.Environment;
import jakarta.inject.Singleton;
import org.privface.wire.KafkaClientProperties;

/**
 * The one place the gateway's Kafka client settings come from: everything under {@code kafka.*}
 * ({@code kafka.bootstrap.servers}, and on a secured cluster {@code kafka.security.protocol},
 * {@code kafka.sasl.mechanism}, {@code kafka.sasl.jaas.config}, {@code kafka.ssl.*}; or the
 * {@code KAFKA_*} environment variables). {@link FacePublisher} and the control topic's consumer
 * and status producer all start from it.
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
