package io.retryoutbox.springretry;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import io.retryoutbox.direct.DirectRetries;
import io.retryoutbox.testsupport.DestinationServer;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.retry.backoff.BackOffInterruptedException;
import org.springframework.retry.policy.SimpleRetryPolicy;
import org.springframework.retry.support.RetryTemplate;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link OutboxRetryPolicy} and {@link OutboxBackOffPolicy} in spring-retry's
 * own {@link RetryTemplate}, with a real {@link RestClient} against a real HTTP server.
 */
class OutboxSpringRetryTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final DirectRetries retries = DirectRetriesForTests.payments();

	private final RetryTemplate retryTemplate = new OutboxSpringRetry(this.retries).retryTemplate("payments");

	private RestClient restClient;

	@BeforeEach
	void start() {
		this.retries.start();
		this.restClient = RestClient.builder()
			.requestFactory(new JdkClientHttpRequestFactory())
			.baseUrl(this.destination.server().url("/").toString())
			.build();
	}

	@AfterEach
	void stop() {
		this.retries.stop();
	}

	@Test
	void waitsAtLeastTheRetryAfterOfA503() {
		answer(new MockResponse.Builder().code(503).addHeader("Retry-After", "1").build(), ok());
		assertThat(this.retryTemplate.<String, RuntimeException>execute((context) -> charge())).isEqualTo("charged");
		List<Long> arrivals = this.destination.dispatcher().arrivals();
		assertThat(arrivals).hasSize(2);
		assertThat(Duration.ofNanos(arrivals.get(1) - arrivals.get(0))).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
	}

	@Test
	void retriesA409ResourceLocked() {
		answer(conflict("RESOURCE_LOCKED"), ok());
		assertThat(this.retryTemplate.<String, RuntimeException>execute((context) -> charge())).isEqualTo("charged");
		assertThat(this.destination.dispatcher().requests()).hasSize(2);
	}

	@Test
	void doesNotRetryA409Conflict() {
		answer(conflict("CONFLICT"));
		assertThatExceptionOfType(HttpClientErrorException.Conflict.class)
			.isThrownBy(() -> this.retryTemplate.<String, RuntimeException>execute((context) -> charge()));
		assertThat(this.destination.dispatcher().requests()).hasSize(1);
	}

	@Test
	void rethrowsTheLastExceptionWhenTheAttemptBudgetIsSpent() {
		answer(new MockResponse.Builder().code(503).build());
		assertThatExceptionOfType(HttpServerErrorException.ServiceUnavailable.class)
			.isThrownBy(() -> this.retryTemplate.<String, RuntimeException>execute((context) -> charge()));
		assertThat(this.destination.dispatcher().requests()).hasSize(3);
	}

	@Test
	void doesNotRetryAnExceptionThatIsNoHttpOutcome() {
		int[] calls = { 0 };
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> this.retryTemplate.execute((context) -> {
				calls[0]++;
				throw new IllegalStateException("a bug");
			}));
		assertThat(calls[0]).isEqualTo(1);
	}

	@Test
	void endsAWaitAtOnceWhenTheApplicationStops() {
		answer(new MockResponse.Builder().code(503).addHeader("Retry-After", "300").build(), ok());
		CompletableFuture<String> call = CompletableFuture
			.supplyAsync(() -> this.retryTemplate.<String, RuntimeException>execute((context) -> charge()));
		await().atMost(Duration.ofSeconds(10)).until(() -> this.destination.dispatcher().requests().size() == 1);
		this.retries.stop();
		await().atMost(Duration.ofSeconds(5)).until(call::isDone);
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(call::get)
			.havingCause()
			.isInstanceOf(BackOffInterruptedException.class)
			.havingCause()
			.isInstanceOf(HttpServerErrorException.ServiceUnavailable.class);
		assertThat(this.destination.dispatcher().requests()).hasSize(1);
	}

	@Test
	void refusesAnotherPolicysContext() {
		RetryTemplate mixed = new RetryTemplate();
		mixed.setRetryPolicy(new SimpleRetryPolicy());
		mixed.setBackOffPolicy(new OutboxBackOffPolicy());
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> mixed.execute((context) -> "never"))
			.withMessageContaining("OutboxBackOffPolicy needs the RetryContext of an OutboxRetryPolicy");
	}

	private String charge() {
		return this.restClient.post().uri("/charges").body("{}").retrieve().body(String.class);
	}

	private void answer(MockResponse first, MockResponse... then) {
		this.destination.dispatcher().answer("/charges", first, then);
	}

	static MockResponse ok() {
		return new MockResponse.Builder().code(200).body("charged").build();
	}

	static MockResponse conflict(String code) {
		return new MockResponse.Builder().code(409)
			.addHeader("Content-Type", "application/json")
			.body("{\"error\":{\"code\":\"" + code + "\"}}")
			.build();
	}

}
