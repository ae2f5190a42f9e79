package io.retryoutbox.direct;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import io.retryoutbox.DeliveryAttempt;
import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.RetryDecision;
import io.retryoutbox.RetryPolicy;

import org.springframework.util.Assert;

/**
 * One logical call to a destination, made directly and retried: it counts its attempts
 * and asks the destination's {@link RetryPolicy} after each, as the relay asks it after
 * each attempt of a message. Its attempts are made one after the other, never at once.
 */
public final class DirectCall {

	private final RetryPolicy policy;

	private final String destination;

	private final UUID id;

	private final Instant startedAt;

	private final Clock clock;

	private final AtomicInteger attempts = new AtomicInteger();

	DirectCall(RetryPolicy policy, String destination, Clock clock) {
		this.policy = policy;
		this.destination = destination;
		this.id = UUID.randomUUID();
		this.clock = clock;
		this.startedAt = clock.instant();
	}

	/**
	 * The id of the call, the idempotency key of its attempts unless the caller set one.
	 * @return the id
	 */
	public UUID id() {
		return this.id;
	}

	/**
	 * The destination the call goes to.
	 * @return the configured destination name
	 */
	public String destination() {
		return this.destination;
	}

	/**
	 * Counts an attempt and asks the policy what follows it.
	 * @param outcome what the attempt produced
	 * @return the policy's verdict, with the wait before the next attempt if it retries
	 */
	public Verdict after(DeliveryOutcome outcome) {
		int attempt = this.attempts.incrementAndGet();
		// Read before the policy reads its own clock, so that the wait is never shorter
		// than the one the policy decided, a Retry-After floor included.
		Instant now = this.clock.instant();
		RetryDecision decision = this.policy
			.decide(new DeliveryAttempt(this.id, this.destination, attempt, this.startedAt), outcome);
		Assert.state(decision != null, () -> "The RetryPolicy returned no decision for " + this.destination);
		Duration delay = (decision instanceof RetryDecision.Retry retry)
				? max(Duration.between(now, retry.nextAttemptAt()), Duration.ZERO) : Duration.ZERO;
		return new Verdict(this.destination, attempt, outcome, decision, delay);
	}

	private static Duration max(Duration a, Duration b) {
		return (a.compareTo(b) >= 0) ? a : b;
	}

	/**
	 * What the policy decided after an attempt of a direct call.
	 *
	 * @param destination the destination name
	 * @param attempt the number of the attempt, starting at 1
	 * @param outcome what the attempt produced
	 * @param decision the policy's decision
	 * @param delay how long to wait before the next attempt, zero unless it retries
	 */
	public record Verdict(String destination, int attempt, DeliveryOutcome outcome, RetryDecision decision,
			Duration delay) {

		/**
		 * Whether the policy retries the call.
		 * @return whether a next attempt follows
		 */
		public boolean retries() {
			return this.decision instanceof RetryDecision.Retry;
		}

	}

}
