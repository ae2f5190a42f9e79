package io.retryoutbox.autoconfigure;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import io.retryoutbox.RetryDecision;
import io.retryoutbox.RetryPolicy;
import io.retryoutbox.direct.DirectCallFailedException;
import io.retryoutbox.direct.DirectRetries;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Tests for the {@link DirectRetries} that {@link RetryOutboxAutoConfiguration} provides.
 */
class DirectRetriesAutoConfigurationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private ApplicationContextRunner runner;

	@BeforeEach
	void createDatabase() {
		this.runner = OutboxContexts.runner(TestDatabase.createDatabase())
			.withPropertyValues("retry-outbox.relay.enabled=false",
					"retry-outbox.destinations.payments.base-url=" + this.destination.server().url("/"),
					"retry-outbox.retry.delay=10ms", "retry-outbox.destinations.payments.retry.max-attempts=2",
					"retry-outbox.idempotency-key-header=X-Request-Key");
	}

	@Test
	void retriesDirectCallsByTheDestinationsMergedSettings() {
		this.destination.dispatcher().answer("/charges", new MockResponse.Builder().code(503).build());
		this.runner.run((context) -> {
			WebClient client = client(context.getBean(DirectRetries.class));
			assertThatExceptionOfType(DirectCallFailedException.class)
				.isThrownBy(
						() -> client.post().uri("/charges").retrieve().toBodilessEntity().block(Duration.ofSeconds(10)))
				.satisfies((ex) -> assertThat(ex.getAttempts()).isEqualTo(2));
			assertThat(this.destination.dispatcher().requests()).hasSize(2)
				.allSatisfy((request) -> assertThat(request.getHeaders().get("X-Request-Key")).isNotBlank());
		});
	}

	@Test
	void followsTheApplicationsOwnRetryPolicy() {
		this.destination.dispatcher().answer("/charges", new MockResponse.Builder().code(503).build());
		RetryPolicy neverRetry = (attempt, outcome) -> new RetryDecision.Dead(RetryDecision.DeadReason.TERMINAL_STATUS,
				"never retried", null);
		this.runner.withBean(RetryPolicy.class, () -> neverRetry).run((context) -> {
			WebClient client = client(context.getBean(DirectRetries.class));
			assertThatExceptionOfType(WebClientResponseException.ServiceUnavailable.class).isThrownBy(
					() -> client.post().uri("/charges").retrieve().toBodilessEntity().block(Duration.ofSeconds(10)));
			assertThat(this.destination.dispatcher().requests()).hasSize(1);
		});
	}

	@Test
	void endsTheWaitsOfDirectCallsWhenTheContextCloses() {
		this.destination.dispatcher()
			.answer("/charges", new MockResponse.Builder().code(503).addHeader("Retry-After", "300").build());
		this.runner.run((context) -> {
			CompletableFuture<?> call = client(context.getBean(DirectRetries.class)).post()
				.uri("/charges")
				.retrieve()
				.toBodilessEntity()
				.toFuture();
			await().atMost(Duration.ofSeconds(10)).until(() -> this.destination.dispatcher().requests().size() == 1);
			context.close();
			await().atMost(Duration.ofSeconds(5)).until(call::isDone);
			assertThat(call).isCompletedExceptionally();
		});
	}

	private WebClient client(DirectRetries retries) {
		return WebClient.builder()
			.baseUrl(this.destination.server().url("/").toString())
			.filter(retries.forDestination("payments").filter())
			.build();
	}

}
