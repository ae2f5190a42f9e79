package io.retryoutbox.autoconfigure;

import io.retryoutbox.jdbc.JdbcOutboxComponents;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.retention.OutboxRetention;
import io.retryoutbox.retention.OutboxRetentionRunner;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of the retention of finished messages, on the instances that run a
 * relay.
 */
@AutoConfiguration(after = RetryOutboxAutoConfiguration.class)
@ConditionalOnBean(OutboxRelay.class)
@ConditionalOnBooleanProperty(name = "retry-outbox.retention.enabled", matchIfMissing = true)
@EnableConfigurationProperties(OutboxRetentionProperties.class)
public final class OutboxRetentionAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	OutboxRetention retryOutboxRetentionStore(JdbcOutboxComponents jdbc, OutboxRetentionProperties properties) {
		return jdbc.retention(properties.getBatchSize());
	}

	@Bean
	@ConditionalOnMissingBean
	OutboxRetentionRunner retryOutboxRetention(OutboxRetention retention, OutboxRetentionProperties properties) {
		return new OutboxRetentionRunner(retention, properties.getDelivered(), properties.getDead(),
				properties.getInterval());
	}

}
