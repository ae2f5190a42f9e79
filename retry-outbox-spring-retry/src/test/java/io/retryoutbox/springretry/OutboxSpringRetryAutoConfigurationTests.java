package io.retryoutbox.springretry;

import io.retryoutbox.direct.DirectRetries;
import io.retryoutbox.springretry.autoconfigure.OutboxSpringRetryAutoConfiguration;
import io.retryoutbox.testsupport.DestinationServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.retry.annotation.EnableRetry;
import org.springframework.retry.annotation.Retryable;
import org.springframework.retry.interceptor.RetryOperationsInterceptor;
import org.springframework.retry.support.RetryTemplate;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link OutboxSpringRetryAutoConfiguration}.
 */
class OutboxSpringRetryAutoConfigurationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(OutboxSpringRetryAutoConfiguration.class))
		.withBean(DirectRetries.class, DirectRetriesForTests::payments);

	@Test
	void providesTheAdapterWhenSpringRetryIsPresent() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(OutboxSpringRetry.class));
	}

	@Test
	void providesNothingWithoutSpringRetry() {
		this.runner.withClassLoader(new FilteredClassLoader(RetryTemplate.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(OutboxSpringRetry.class));
	}

	@Test
	void providesNothingWithoutTheOutbox() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(OutboxSpringRetryAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(OutboxSpringRetry.class));
	}

	@Test
	void retriesARetryableMethodByTheDestinationsPolicy() {
		this.destination.dispatcher()
			.answer("/charges", OutboxSpringRetryTests.conflict("RESOURCE_LOCKED"), OutboxSpringRetryTests.ok());
		this.runner.withUserConfiguration(RetryableConfiguration.class)
			.withBean(RestClient.class,
					() -> RestClient.builder()
						.requestFactory(new JdkClientHttpRequestFactory())
						.baseUrl(this.destination.server().url("/").toString())
						.build())
			.run((context) -> {
				assertThat(context.getBean(PaymentsClient.class).charge()).isEqualTo("charged");
				assertThat(this.destination.dispatcher().requests()).hasSize(2);
			});
	}

	@Configuration(proxyBeanMethods = false)
	@EnableRetry
	static class RetryableConfiguration {

		@Bean
		RetryOperationsInterceptor paymentsRetry(OutboxSpringRetry springRetry) {
			return springRetry.interceptor("payments");
		}

		@Bean
		PaymentsClient paymentsClient(RestClient restClient) {
			return new PaymentsClient(restClient);
		}

	}

	static class PaymentsClient {

		private final RestClient restClient;

		PaymentsClient(RestClient restClient) {
			this.restClient = restClient;
		}

		@Retryable(interceptor = "paymentsRetry")
		String charge() {
			return this.restClient.post().uri("/charges").body("{}").retrieve().body(String.class);
		}

	}

}
