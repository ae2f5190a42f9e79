package io.retryoutbox.direct;

import java.time.Duration;
import java.util.List;

import io.retryoutbox.testsupport.DestinationServer;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.core.retry.RetryException;
import org.springframework.core.retry.RetryTemplate;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link DestinationRetry#coreRetryPolicy()} with Spring Framework 7's
 * {@link RetryTemplate} and a real {@link RestClient} and {@link WebClient} against a
 * real HTTP server.
 */
class CoreRetryPolicyTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final DestinationRetry payments = PaymentsRetries.create().forDestination("payments");

	private final RetryTemplate retryTemplate = new RetryTemplate(this.payments.coreRetryPolicy());

	private RestClient restClient;

	@BeforeEach
	void restClient() {
		this.restClient = RestClient.builder()
			.requestFactory(new JdkClientHttpRequestFactory())
			.baseUrl(this.destination.server().url("/").toString())
			.build();
	}

	@Test
	void retriesARestClientCallAnswered409ResourceLocked() throws RetryException {
		answer(conflict("RESOURCE_LOCKED"), ok());
		assertThat(this.retryTemplate.execute(this::charge)).isEqualTo("charged");
		assertThat(this.destination.dispatcher().requests()).hasSize(2);
	}

	@Test
	void doesNotRetryARestClientCallAnswered409Conflict() {
		answer(conflict("CONFLICT"));
		assertThatExceptionOfType(RetryException.class).isThrownBy(() -> this.retryTemplate.execute(this::charge))
			.satisfies((ex) -> assertThat(ex.getLastException()).isInstanceOf(HttpClientErrorException.Conflict.class));
		assertThat(this.destination.dispatcher().requests()).hasSize(1);
	}

	@Test
	void doesNotRetryARestClientCallAnswered400() {
		answer(new MockResponse.Builder().code(400).build());
		assertThatExceptionOfType(RetryException.class).isThrownBy(() -> this.retryTemplate.execute(this::charge));
		assertThat(this.destination.dispatcher().requests()).hasSize(1);
	}

	@Test
	void endsWithTheLastExceptionWhenTheAttemptBudgetIsSpent() {
		answer(new MockResponse.Builder().code(503).build());
		assertThatExceptionOfType(RetryException.class).isThrownBy(() -> this.retryTemplate.execute(this::charge))
			.satisfies((ex) -> assertThat(ex.getLastException())
				.isInstanceOf(HttpServerErrorException.ServiceUnavailable.class));
		assertThat(this.destination.dispatcher().requests()).hasSize(3);
	}

	@Test
	void retriesARefusedConnection() {
		this.destination.stop();
		assertThatExceptionOfType(RetryException.class).isThrownBy(() -> this.retryTemplate.execute(this::charge))
			.satisfies((ex) -> assertThat(ex.getExceptions()).hasSize(3));
	}

	@Test
	void classifiesAWebClientResponseExceptionByItsErrorCode() throws RetryException {
		WebClient webClient = WebClient.create(this.destination.server().url("/").toString());
		answer(conflict("RESOURCE_LOCKED"), conflict("CONFLICT"));
		assertThatExceptionOfType(RetryException.class)
			.isThrownBy(() -> this.retryTemplate.execute(() -> webClient.post()
				.uri("/charges")
				.bodyValue("{}")
				.retrieve()
				.bodyToMono(String.class)
				.block(Duration.ofSeconds(10))))
			.satisfies(
					(ex) -> assertThat(ex.getLastException()).isInstanceOf(WebClientResponseException.Conflict.class));
		assertThat(this.destination.dispatcher().requests()).hasSize(2);
	}

	@Test
	void doesNotRetryAnExceptionThatIsNoHttpOutcome() {
		assertThat(this.payments.coreRetryPolicy().shouldRetry(new IllegalStateException("a bug"))).isFalse();
	}

	// The limitation the Javadoc and the README state: the back-off is not told the
	// response, so it waits as the ramp says (tens of milliseconds here), not a minute.
	@Test
	void backsOffOnTheRampWithoutTheRetryAfterItCannotSee() throws RetryException {
		answer(new MockResponse.Builder().code(503).addHeader("Retry-After", "60").build(), ok());
		assertThat(this.retryTemplate.execute(this::charge)).isEqualTo("charged");
		List<Long> arrivals = this.destination.dispatcher().arrivals();
		assertThat(Duration.ofNanos(arrivals.get(1) - arrivals.get(0))).isLessThan(Duration.ofSeconds(30));
	}

	private String charge() {
		return this.restClient.post().uri("/charges").body("{}").retrieve().body(String.class);
	}

	private void answer(MockResponse first, MockResponse... then) {
		this.destination.dispatcher().answer("/charges", first, then);
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
