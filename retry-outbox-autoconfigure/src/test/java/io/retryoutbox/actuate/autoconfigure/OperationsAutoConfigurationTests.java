package io.retryoutbox.actuate.autoconfigure;

import io.retryoutbox.Outbox;
import io.retryoutbox.actuate.OutboxEndpoint;
import io.retryoutbox.actuate.OutboxHealthIndicator;
import io.retryoutbox.autoconfigure.OutboxRetentionAutoConfiguration;
import io.retryoutbox.relay.OutboxStore;
import io.retryoutbox.metrics.ObservingAttemptObserver;
import io.retryoutbox.metrics.OutboxGauges;
import io.retryoutbox.metrics.autoconfigure.OutboxMetricsAutoConfiguration;
import io.retryoutbox.metrics.autoconfigure.OutboxObservationAutoConfiguration;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for the optional auto-configurations: endpoint, health, observations, metrics and
 * retention.
 */
class OperationsAutoConfigurationTests {

	private ApplicationContextRunner ours;

	private ApplicationContextRunner runner;

	@BeforeEach
	void createDatabase() {
		this.ours = OutboxContexts.runner(TestDatabase.createDatabase())
			.withConfiguration(AutoConfigurations.of(OutboxEndpointAutoConfiguration.class,
					OutboxHealthContributorAutoConfiguration.class, OutboxObservationAutoConfiguration.class,
					OutboxMetricsAutoConfiguration.class, OutboxRetentionAutoConfiguration.class))
			.withPropertyValues("retry-outbox.destinations.payments.base-url=http://localhost:9/api");
		this.runner = this.ours.withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class,
				ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class));
	}

	@Test
	void providesTheHealthIndicatorMetricsAndObservationsAndTheEndpointOnceExposed() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(OutboxHealthIndicator.class)
			.hasSingleBean(OutboxGauges.class)
			.hasSingleBean(ObservingAttemptObserver.class)
			.doesNotHaveBean(OutboxEndpoint.class));
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=outbox")
			.run((context) -> assertThat(context).hasSingleBean(OutboxEndpoint.class));
	}

	@Test
	void leavesTheHealthIndicatorOutWhenItIsDisabled() {
		this.runner.withPropertyValues("management.health.retryoutbox.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(OutboxHealthIndicator.class));
	}

	@Test
	void worksWithoutActuatorAndWithoutMicrometer() {
		this.ours
			.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate",
					"org.springframework.boot.health", "io.micrometer.core", "io.micrometer.tracing"))
			.withPropertyValues("management.endpoints.web.exposure.include=outbox")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(Outbox.class)
				.hasSingleBean(OutboxStore.class)
				.doesNotHaveBean(OutboxEndpoint.class)
				.doesNotHaveBean(OutboxHealthIndicator.class)
				.doesNotHaveBean(OutboxGauges.class));
	}

}
