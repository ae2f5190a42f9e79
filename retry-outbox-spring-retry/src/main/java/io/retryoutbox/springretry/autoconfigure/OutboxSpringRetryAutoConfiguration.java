package io.retryoutbox.springretry.autoconfigure;

import io.retryoutbox.autoconfigure.RetryOutboxAutoConfiguration;
import io.retryoutbox.direct.DirectRetries;
import io.retryoutbox.springretry.OutboxSpringRetry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.retry.support.RetryTemplate;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of {@link OutboxSpringRetry}, when the application has spring-retry
 * and the outbox's {@link DirectRetries}.
 */
@AutoConfiguration(after = RetryOutboxAutoConfiguration.class)
@ConditionalOnClass(RetryTemplate.class)
@ConditionalOnBean(DirectRetries.class)
public final class OutboxSpringRetryAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	OutboxSpringRetry retryOutboxSpringRetry(DirectRetries retries) {
		return new OutboxSpringRetry(retries);
	}

}
