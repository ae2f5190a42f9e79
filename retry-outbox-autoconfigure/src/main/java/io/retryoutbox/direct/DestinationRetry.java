package io.retryoutbox.direct;

import java.time.Clock;
import java.time.Duration;

import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.RetryPolicy;
import org.jspecify.annotations.Nullable;

import org.springframework.web.reactive.function.client.ExchangeFilterFunction;

/**
 * The retries of one destination's direct calls, by its {@link RetryPolicy}: status and
 * error-code classification, the backoff ramp with a {@code Retry-After} floor and
 * additive jitter, and the attempt and time budget, all as the relay applies them to the
 * destination's messages. Obtained from {@link DirectRetries#forDestination(String)}.
 */
public final class DestinationRetry {

	private final RetryPolicy policy;

	private final String destination;

	private final Duration attemptTimeout;

	private final String idempotencyKeyHeader;

	private final int maxErrorBodyBytes;

	private final Clock clock;

	private final StopSignal stopSignal;

	DestinationRetry(RetryPolicy policy, String destination, Duration attemptTimeout, String idempotencyKeyHeader,
			int maxErrorBodyBytes, Clock clock, StopSignal stopSignal) {
		this.policy = policy;
		this.destination = destination;
		this.attemptTimeout = attemptTimeout;
		this.idempotencyKeyHeader = idempotencyKeyHeader;
		this.maxErrorBodyBytes = maxErrorBodyBytes;
		this.clock = clock;
		this.stopSignal = stopSignal;
	}

	/**
	 * A WebClient filter that retries each exchange by the destination's policy, without
	 * blocking a thread. Every attempt of a call carries the same idempotency key: the
	 * caller's, if the request has the idempotency-key header, else one generated per
	 * call. Each attempt is bounded by the destination's {@code timeout}. A response the
	 * policy does not retry (a 2xx, a 409 {@code CONFLICT}, a 400) is handed to the
	 * caller as it came, its body included; once the budget is spent, or when the
	 * application stops during a wait, the call ends with a
	 * {@link DirectCallFailedException} carrying the last outcome. The request is sent
	 * again as built, so its body must be one that can be written more than once, such as
	 * a {@code bodyValue}.
	 * @return the filter
	 */
	public ExchangeFilterFunction filter() {
		return new RetryingExchangeFilter(this);
	}

	/**
	 * A Spring Framework 7 {@link org.springframework.core.retry.RetryPolicy} for a
	 * {@code RetryTemplate} around {@code RestClient} or {@code WebClient} calls: it
	 * retries what the destination's policy retries, classifying a
	 * {@code RestClientResponseException} or {@code WebClientResponseException} by its
	 * status and error code, and an I/O failure or a timeout as a failure to get a
	 * response; any other exception is not retried. Its back-off follows the
	 * destination's ramp, jitter, attempt budget and deadline.
	 * <p>
	 * <strong>It cannot honour {@code Retry-After}.</strong> Framework 7's
	 * {@code RetryTemplate} starts one {@code BackOff} per call and asks it for the next
	 * wait without the exception, so no {@code BackOff} can read a response's header;
	 * this one waits as the ramp says, shorter than a {@code Retry-After} that asks for
	 * more. Where a destination answers 429 or 503 with {@code Retry-After}, use
	 * {@link #filter()} or the spring-retry adapter, which honour it.
	 * @return the policy
	 */
	public org.springframework.core.retry.RetryPolicy coreRetryPolicy() {
		return new CoreRetryPolicy(this);
	}

	/**
	 * Starts a logical call, for an adapter that drives the attempts itself.
	 * @return the call
	 */
	public DirectCall begin() {
		return new DirectCall(this.policy, this.destination, this.clock);
	}

	/**
	 * What an exception thrown by an HTTP client says of the attempt.
	 * @param thrown the exception
	 * @return a response (with the start of its body) or a failure to get one, or
	 * {@code null} if the exception is no report of an attempt and must not be retried
	 */
	public @Nullable DeliveryOutcome outcomeOf(Throwable thrown) {
		return ThrowableOutcomes.of(thrown, this.maxErrorBodyBytes);
	}

	/**
	 * Waits on this thread before the next attempt, ending at once when the application
	 * stops.
	 * @param delay the wait
	 * @return {@code true} if the wait passed, {@code false} if the application stopped
	 * @throws InterruptedException if the thread was interrupted
	 */
	public boolean await(Duration delay) throws InterruptedException {
		return this.stopSignal.await(delay);
	}

	/**
	 * The destination name.
	 * @return the configured name
	 */
	public String destination() {
		return this.destination;
	}

	/**
	 * The header that carries the idempotency key.
	 * @return the header name, {@code retry-outbox.idempotency-key-header}
	 */
	public String idempotencyKeyHeader() {
		return this.idempotencyKeyHeader;
	}

	Duration attemptTimeout() {
		return this.attemptTimeout;
	}

	int maxErrorBodyBytes() {
		return this.maxErrorBodyBytes;
	}

	StopSignal stopSignal() {
		return this.stopSignal;
	}

}
