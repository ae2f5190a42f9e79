package io.retryoutbox.message;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import io.retryoutbox.RetryDecision;
import org.jspecify.annotations.Nullable;

/**
 * What an attempt of a claimed message came to, as the relay records it: the decision,
 * and what of the answer is kept.
 *
 * @param id the message id
 * @param decision what becomes of the message
 * @param releasesKey whether the message stops holding its ordering key, so that the
 * key's next message may go: on delivery, and when a dead message must not block its key
 * @param statusCode the HTTP status received, or {@code null} if none
 * @param error a short description of the failure, or {@code null}
 * @param errorBody the start of an error response's body, {@code null} for a 2xx response
 * or no response
 * @param startedAt when the attempt started
 * @param duration how long the attempt took
 */
public record Outcome(UUID id, RetryDecision decision, boolean releasesKey, @Nullable Integer statusCode,
		@Nullable String error, byte @Nullable [] errorBody, Instant startedAt, Duration duration) {

	/**
	 * The message's status after this outcome.
	 * @return the status
	 */
	public MessageStatus status() {
		return MessageStatus.after(this.decision);
	}

	/**
	 * What the attempt log records for this outcome.
	 * @return the attempt outcome
	 */
	public AttemptOutcome attemptOutcome() {
		return AttemptOutcome.after(status());
	}

	/**
	 * The error code read from the response, if the decision names one.
	 * @return the error code, or {@code null}
	 */
	public @Nullable String errorCode() {
		if (this.decision instanceof RetryDecision.Retry retry) {
			return retry.errorCode();
		}
		return (this.decision instanceof RetryDecision.Dead dead) ? dead.errorCode() : null;
	}

	/**
	 * The wait before the next attempt of a retried message, counted from the end of this
	 * attempt.
	 * @return the wait, or {@code null} if the message is not retried
	 */
	public @Nullable Duration delay() {
		if (!(this.decision instanceof RetryDecision.Retry retry)) {
			return null;
		}
		Duration delay = Duration.between(this.startedAt.plus(this.duration), retry.nextAttemptAt());
		return delay.isNegative() ? Duration.ZERO : delay;
	}

}
