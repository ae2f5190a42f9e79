package io.retryoutbox.relay;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import io.retryoutbox.DeliveryAttempt;
import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.RetryDecision;
import io.retryoutbox.RetryDecision.DeadReason;
import io.retryoutbox.RetryPolicy;
import io.retryoutbox.message.Claim;
import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.message.Outcome;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Asks the {@link RetryPolicy} about an attempt and turns its decision into the row's new
 * state. A policy that throws or answers nothing cannot drop a message nor retry it for
 * ever: the attempt then counts as a transient failure on the default policy's ramp, so
 * the attempt budget and the deadline still end it.
 */
final class DecisionRecorder {

	private static final Log logger = LogFactory.getLog(DecisionRecorder.class);

	private final RetryPolicy policy;

	private final RetryPolicy fallback;

	private final Map<String, OnDead> onDead;

	DecisionRecorder(RetryPolicy policy, RetryPolicy fallback, Map<String, OnDead> onDead) {
		this.policy = policy;
		this.fallback = fallback;
		this.onDead = Map.copyOf(onDead);
	}

	/**
	 * The attempt's duration ends once the policy decided, so that the wait recorded
	 * before the next attempt, counted from that end, never exceeds what the policy
	 * chose. {@code pausedFor} is how long the message's destination was paused during
	 * its life, which its deadline does not count.
	 */
	Outcome record(ClaimedMessage message, DeliveryOutcome outcome, Duration pausedFor, Instant startedAt,
			long startNanos) {
		DeliveryAttempt attempt = new DeliveryAttempt(message.id(), message.destination(), message.attempt(),
				message.createdAt(), pausedFor);
		Integer statusCode = (outcome instanceof DeliveryOutcome.Response response) ? response.statusCode() : null;
		byte[] errorBody = (outcome instanceof DeliveryOutcome.Response response && !isSuccess(response))
				? response.body() : null;
		String error = describe(outcome);
		if (outcome instanceof DeliveryOutcome.Failure failure) {
			logFailure(message, failure.cause());
		}
		RetryDecision decision;
		try {
			decision = this.policy.decide(attempt, outcome);
			if (decision == null) {
				throw new IllegalStateException(this.policy.getClass().getName() + " returned no decision");
			}
		}
		catch (RuntimeException ex) {
			logger.error("RetryPolicy failed for outbox message " + message.id() + " to '" + message.destination()
					+ "'; the attempt counts as a transient failure on the default backoff ramp", ex);
			decision = this.fallback.decide(attempt, new DeliveryOutcome.Failure(ex));
			error = ((error != null) ? error + "; " : "") + "retry policy failed: "
					+ describe(new DeliveryOutcome.Failure(ex));
		}
		Duration duration = Duration.ofNanos(System.nanoTime() - startNanos);
		if (decision instanceof RetryDecision.Delivered) {
			return new Outcome(message.id(), decision, message.orderingKey() != null, statusCode, null, null, startedAt,
					duration);
		}
		if (decision instanceof RetryDecision.Dead dead) {
			logger.warn("Outbox message " + message.id() + " to '" + message.destination() + "' is dead: "
					+ dead.reason() + " (" + dead.detail() + ")");
			error = dead.detail();
		}
		return new Outcome(message.id(), decision, releasesKey(message, decision), statusCode, error, errorBody,
				startedAt, duration);
	}

	/**
	 * The outcome of a claimed row that cannot be read or sent: dead at once, without a
	 * request and without asking the policy, which could only retry it for ever.
	 */
	Outcome invalid(Claim claim, String problem) {
		logger.warn("Outbox message " + claim.id() + " to '" + claim.destination() + "' is dead: "
				+ DeadReason.INVALID_REQUEST + " (" + problem + ")");
		RetryDecision dead = new RetryDecision.Dead(DeadReason.INVALID_REQUEST, problem, null);
		return new Outcome(claim.id(), dead, releasesKey(claim, dead), null, problem, null, Instant.now(),
				Duration.ZERO);
	}

	/**
	 * Whether the message gives its key up: when delivered, and when dead unless its
	 * destination blocks the key on a dead message.
	 */
	private boolean releasesKey(Claim claim, RetryDecision decision) {
		if (claim.orderingKey() == null || decision instanceof RetryDecision.Retry) {
			return false;
		}
		return decision instanceof RetryDecision.Delivered
				|| this.onDead.getOrDefault(claim.destination(), OnDead.SKIP) == OnDead.SKIP;
	}

	private static boolean isSuccess(DeliveryOutcome.Response response) {
		return response.statusCode() >= 200 && response.statusCode() < 300;
	}

	private static @Nullable String describe(DeliveryOutcome outcome) {
		if (outcome instanceof DeliveryOutcome.Response response) {
			return (response.statusCode() >= 200 && response.statusCode() < 300) ? null
					: "HTTP " + response.statusCode();
		}
		Throwable cause = ((DeliveryOutcome.Failure) outcome).cause();
		return cause.getClass().getSimpleName() + ((cause.getMessage() != null) ? ": " + cause.getMessage() : "");
	}

	private static void logFailure(ClaimedMessage message, Throwable cause) {
		String text = "Attempt " + message.attempt() + " of outbox message " + message.id() + " to '"
				+ message.destination() + "' failed: " + describe(new DeliveryOutcome.Failure(cause));
		if (cause instanceof IOException || cause instanceof TimeoutException) {
			logger.info(text);
		}
		else {
			logger.warn(text, cause);
		}
	}

}
