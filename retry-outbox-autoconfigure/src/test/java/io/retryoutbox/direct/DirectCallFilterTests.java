package io.retryoutbox.direct;

import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.RetryDecision;
import io.retryoutbox.testsupport.DestinationServer;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link DestinationRetry#filter()} against a real HTTP server.
 */
class DirectCallFilterTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final DirectRetries retries = PaymentsRetries.create();

	private WebClient client;

	@BeforeEach
	void start() {
		this.retries.start();
		this.client = WebClient.builder()
			.baseUrl(this.destination.server().url("/").toString())
			.filter(this.retries.forDestination("payments").filter())
			.build();
	}

	@AfterEach
	void stop() {
		this.retries.stop();
	}

	@Test
	void retriesA503NoEarlierThanItsRetryAfter() {
		answer(new MockResponse.Builder().code(503).addHeader("Retry-After", "1").build(), ok());
		assertThat(charge()).isEqualTo("charged");
		List<Long> arrivals = this.destination.dispatcher().arrivals();
		assertThat(arrivals).hasSize(2);
		assertThat(Duration.ofNanos(arrivals.get(1) - arrivals.get(0))).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
	}

	@Test
	void retriesA409ResourceLocked() {
		answer(conflict("RESOURCE_LOCKED"), ok());
		assertThat(charge()).isEqualTo("charged");
		assertThat(this.destination.dispatcher().requests()).hasSize(2);
	}

	@Test
	void handsA409ConflictToTheCallerWithoutRetrying() {
		answer(conflict("CONFLICT"));
		assertThatExceptionOfType(WebClientResponseException.Conflict.class).isThrownBy(this::charge)
			.satisfies((ex) -> assertThat(ex.getResponseBodyAsString()).contains("CONFLICT"));
		assertThat(this.destination.dispatcher().requests()).hasSize(1);
	}

	@Test
	void handsA400ToTheCallerWithoutRetrying() {
		answer(new MockResponse.Builder().code(400).body("bad amount").build());
		assertThatExceptionOfType(WebClientResponseException.BadRequest.class).isThrownBy(this::charge)
			.satisfies((ex) -> assertThat(ex.getResponseBodyAsString()).isEqualTo("bad amount"));
		assertThat(this.destination.dispatcher().requests()).hasSize(1);
	}

	@Test
	void retriesARefusedConnectionUntilTheBudgetIsSpent() {
		this.destination.stop();
		assertThatExceptionOfType(DirectCallFailedException.class).isThrownBy(this::charge).satisfies((ex) -> {
			assertThat(ex.getAttempts()).isEqualTo(3);
			assertThat(ex.getLastOutcome()).isInstanceOf(DeliveryOutcome.Failure.class);
			assertThat(ex).hasRootCauseInstanceOf(ConnectException.class);
			assertThat(ex.getLastDecision()).isInstanceOfSatisfying(RetryDecision.Dead.class,
					(dead) -> assertThat(dead.reason()).isEqualTo(RetryDecision.DeadReason.ATTEMPTS_EXHAUSTED));
		});
	}

	@Test
	void endsWithTheLastResponseWhenTheBudgetIsSpent() {
		answer(new MockResponse.Builder().code(503).body("{\"code\":\"MAINTENANCE\"}").build());
		assertThatExceptionOfType(DirectCallFailedException.class).isThrownBy(this::charge).satisfies((ex) -> {
			assertThat(ex.getAttempts()).isEqualTo(3);
			assertThat(ex.getStatusCode()).isEqualTo(503);
			assertThat(ex.isStopped()).isFalse();
			assertThat(ex.getLastOutcome()).isInstanceOfSatisfying(DeliveryOutcome.Response.class,
					(response) -> assertThat(new String(response.body())).contains("MAINTENANCE"));
			assertThat(ex).hasMessageContaining("ATTEMPTS_EXHAUSTED").hasMessageContaining("HTTP 503 MAINTENANCE");
		});
		assertThat(this.destination.dispatcher().requests()).hasSize(3);
	}

	@Test
	void sendsOneGeneratedIdempotencyKeyOnEveryAttempt() {
		answer(new MockResponse.Builder().code(502).build(), new MockResponse.Builder().code(429).build(), ok());
		charge();
		List<String> keys = keys();
		assertThat(keys).hasSize(3).doesNotContainNull().containsOnly(keys.get(0));
		charge();
		assertThat(keys().get(3)).isNotEqualTo(keys.get(0));
	}

	@Test
	void keepsTheCallersIdempotencyKeyOnEveryAttempt() {
		answer(new MockResponse.Builder().code(504).build(), ok());
		this.client.post()
			.uri("/charges")
			.header("Idempotency-Key", "order-42")
			.bodyValue("{}")
			.retrieve()
			.bodyToMono(String.class)
			.block(Duration.ofSeconds(10));
		assertThat(keys()).containsExactly("order-42", "order-42");
	}

	@Test
	void endsAWaitAtOnceWhenTheApplicationStops() {
		answer(new MockResponse.Builder().code(503).addHeader("Retry-After", "300").build(), ok());
		CompletableFuture<String> call = this.client.post()
			.uri("/charges")
			.bodyValue("{}")
			.retrieve()
			.bodyToMono(String.class)
			.toFuture();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.destination.dispatcher().requests().size() == 1);
		this.retries.stop();
		await().atMost(Duration.ofSeconds(5)).until(call::isDone);
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(call::get)
			.havingCause()
			.isInstanceOfSatisfying(DirectCallFailedException.class, (ex) -> {
				assertThat(ex.isStopped()).isTrue();
				assertThat(ex.getStatusCode()).isEqualTo(503);
				assertThat(ex.getLastDecision()).isInstanceOf(RetryDecision.Retry.class);
			});
		assertThat(this.destination.dispatcher().requests()).hasSize(1);
	}

	@Test
	void refusesADestinationThatIsNotConfigured() {
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> this.retries.forDestination("invoices"))
			.withMessage(
					"Destination 'invoices' is not configured in retry-outbox.destinations; configured: [payments]");
	}

	private void answer(MockResponse first, MockResponse... then) {
		this.destination.dispatcher().answer("/charges", first, then);
	}

	private String charge() {
		return this.client.post()
			.uri("/charges")
			.bodyValue("{\"amount\":42}")
			.retrieve()
			.bodyToMono(String.class)
			.block(Duration.ofSeconds(10));
	}

	private List<String> keys() {
		return this.destination.dispatcher()
			.requests()
			.stream()
			.map((RecordedRequest request) -> request.getHeaders().get("Idempotency-Key"))
			.toList();
	}

	private static MockResponse ok() {
		return new MockResponse.Builder().code(200).body("charged").build();
	}

	private static MockResponse conflict(String code) {
		return new MockResponse.Builder().code(409)
			.addHeader("Content-Type", "application/json")
			.body("{\"error\":{\"code\":\"" + code + "\"}}")
			.build();
	}

}
