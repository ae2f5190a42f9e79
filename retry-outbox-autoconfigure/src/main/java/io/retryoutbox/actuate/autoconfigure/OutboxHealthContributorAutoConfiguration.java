package io.retryoutbox.actuate.autoconfigure;

import io.retryoutbox.actuate.OutboxHealthIndicator;
import io.retryoutbox.autoconfigure.RetryOutboxAutoConfiguration;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.relay.OutboxRelay;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} for the {@code retryOutbox} {@link OutboxHealthIndicator health
 * indicator}. It joins no health group by itself, so it is not part of the liveness
 * probe: a backlog downstream is no reason to restart this process.
 */
@AutoConfiguration(after = RetryOutboxAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean(OutboxReadModel.class)
@EnableConfigurationProperties(OutboxHealthProperties.class)
public final class OutboxHealthContributorAutoConfiguration {

	// On the method, not the class: its condition class is only there with
	// spring-boot-health, which the class-level condition checks first.
	@Bean
	@ConditionalOnMissingBean(name = "retryOutboxHealthIndicator")
	@ConditionalOnEnabledHealthIndicator("retryoutbox")
	OutboxHealthIndicator retryOutboxHealthIndicator(OutboxReadModel readModel, OutboxHealthProperties properties,
			ObjectProvider<OutboxRelay> relay) {
		return new OutboxHealthIndicator(readModel, relay.getIfAvailable(), new OutboxHealthIndicator.Thresholds(
				properties.getMaxLag(), properties.getMaxDead(), properties.getThresholdStatus()));
	}

}
