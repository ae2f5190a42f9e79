package io.retryoutbox.relay;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import io.retryoutbox.DeliveryAttempt;
import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.RetryDecision;
import io.retryoutbox.RetryPolicy;
import io.retryoutbox.jdbc.ClaimedMessage;
import io.retryoutbox.jdbc.Completion;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Asks the {@link RetryPolicy} about an attempt and turns its decision into the row's new
 * state. A policy that throws cannot drop a message: the attempt is then retried at the
 * next poll.
 */
final class DecisionRecorder {

	private static final Log logger = LogFactory.getLog(DecisionRecorder.class);

	private final RetryPolicy policy;

	private final Map<String, OnDead> onDead;

	DecisionRecorder(RetryPolicy policy, Map<String, OnDead> onDead) {
		this.policy = policy;
		this.onDead = Map.copyOf(onDead);
	}

	Completion record(ClaimedMessage message, DeliveryOutcome outcome) {
		DeliveryAttempt attempt = new DeliveryAttempt(message.id(), message.destination(), message.attempt(),
				message.createdAt());
		Integer statusCode = (outcome instanceof DeliveryOutcome.Response response) ? response.statusCode() : null;
		String error = describe(outcome);
		if (outcome instanceof DeliveryOutcome.Failure failure) {
			logFailure(message, failure.cause());
		}
		RetryDecision decision;
		try {
			decision = this.policy.decide(attempt, outcome);
		}
		catch (RuntimeException ex) {
			logger.error("RetryPolicy failed for outbox message " + message.id() + "; it will be retried", ex);
			return new Completion(message.id(), "PENDING", Instant.now().plusSeconds(1), statusCode, null, error, null,
					false);
		}
		if (decision instanceof RetryDecision.Delivered) {
			return new Completion(message.id(), "DELIVERED", null, statusCode, null, null, null,
					message.orderingKey() != null);
		}
		byte[] errorBody = (outcome instanceof DeliveryOutcome.Response response) ? response.body() : null;
		if (decision instanceof RetryDecision.Retry retry) {
			Duration delay = Duration.between(Instant.now(), retry.nextAttemptAt());
			return new Completion(message.id(), "PENDING", retry.nextAttemptAt(), statusCode, retry.errorCode(), error,
					null, false, null, null, delay.isNegative() ? Duration.ZERO : delay, retry.delayReason().name(),
					errorBody);
		}
		RetryDecision.Dead dead = (RetryDecision.Dead) decision;
		logger.warn("Outbox message " + message.id() + " to '" + message.destination() + "' is dead: " + dead.reason()
				+ " (" + dead.detail() + ")");
		boolean skip = message.orderingKey() != null
				&& this.onDead.getOrDefault(message.destination(), OnDead.SKIP) == OnDead.SKIP;
		return new Completion(message.id(), "DEAD", null, statusCode, dead.errorCode(), dead.detail(),
				dead.reason().name(), skip, null, null, null, null, errorBody);
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
