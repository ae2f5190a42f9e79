package io.retryoutbox.metrics.autoconfigure;

import io.micrometer.observation.ObservationRegistry;
import io.retryoutbox.autoconfigure.RetryOutboxAutoConfiguration;
import io.retryoutbox.Outbox;
import io.retryoutbox.metrics.ObservingAttemptObserver;
import io.retryoutbox.metrics.ObservingEnqueueObserver;
import io.retryoutbox.metrics.OutboxAttemptObservationConvention;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of the enqueue and attempt observations, and, with Micrometer
 * Tracing, of the storing and restoring of trace contexts.
 */
@AutoConfiguration(after = RetryOutboxAutoConfiguration.class, afterName = {
		"org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration",
		"org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration",
		"org.springframework.boot.micrometer.tracing.brave.autoconfigure.BraveAutoConfiguration",
		"org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.OpenTelemetryTracingAutoConfiguration" })
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean({ Outbox.class, ObservationRegistry.class })
public final class OutboxObservationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ObservingEnqueueObserver retryOutboxEnqueueObserver(ObservationRegistry registry) {
		return new ObservingEnqueueObserver(registry, null);
	}

	@Bean
	@ConditionalOnMissingBean
	ObservingAttemptObserver retryOutboxAttemptObserver(ObservationRegistry registry,
			ObjectProvider<OutboxAttemptObservationConvention> convention) {
		return new ObservingAttemptObserver(registry, convention.getIfAvailable());
	}

}
