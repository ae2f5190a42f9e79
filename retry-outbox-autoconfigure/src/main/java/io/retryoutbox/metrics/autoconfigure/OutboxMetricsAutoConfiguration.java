package io.retryoutbox.metrics.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.retryoutbox.autoconfigure.RetryOutboxAutoConfiguration;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.metrics.OutboxFlowMeters;
import io.retryoutbox.metrics.OutboxGauges;
import io.retryoutbox.metrics.OutboxMeterDescriptions;
import io.retryoutbox.metrics.OutboxMeters;
import io.retryoutbox.relay.OutboxRelay;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of the retry-outbox meters: the enqueue counter, the delivery
 * latency and the gauges, and the descriptions of the observations' timers. Without a
 * {@link MeterRegistry} there are none, and nothing fails.
 */
@AutoConfiguration(after = RetryOutboxAutoConfiguration.class,
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ OutboxReadModel.class, MeterRegistry.class })
@EnableConfigurationProperties(OutboxMetricsProperties.class)
public final class OutboxMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	OutboxMeters retryOutboxMeters(MeterRegistry registry) {
		return new OutboxMeters(registry);
	}

	@Bean
	@ConditionalOnMissingBean
	OutboxMeterDescriptions retryOutboxMeterDescriptions() {
		return new OutboxMeterDescriptions();
	}

	@Bean
	@ConditionalOnMissingBean
	OutboxGauges retryOutboxGauges(OutboxReadModel readModel, MeterRegistry registry,
			OutboxMetricsProperties properties) {
		return new OutboxGauges(readModel, registry, properties.getGaugeInterval());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(OutboxRelay.class)
	OutboxFlowMeters retryOutboxFlowMeters(OutboxRelay relay) {
		return new OutboxFlowMeters(relay);
	}

}
