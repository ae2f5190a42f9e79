package io.retryoutbox;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * The decision of a {@link RetryPolicy} about a message after an attempt.
 */
public sealed interface RetryDecision permits RetryDecision.Delivered, RetryDecision.Retry, RetryDecision.Dead {

	/**
	 * The message was delivered.
	 */
	record Delivered() implements RetryDecision {

	}

	/**
	 * The message stays in the outbox and is attempted again.
	 *
	 * @param nextAttemptAt when the message becomes due again
	 * @param delayReason what set the delay
	 * @param errorCode the error code found in the response body, if any
	 */
	record Retry(Instant nextAttemptAt, DelayReason delayReason, @Nullable String errorCode) implements RetryDecision {

	}

	/**
	 * The message is given up on and kept in the dead-letter set.
	 *
	 * @param reason why the message is dead
	 * @param detail a human-readable explanation, e.g. {@code "HTTP 409 CONFLICT"}
	 * @param errorCode the error code found in the response body, if any
	 */
	record Dead(DeadReason reason, String detail, @Nullable String errorCode) implements RetryDecision {

	}

	/**
	 * What set the delay of a retry.
	 */
	enum DelayReason {

		/** The exponential backoff ramp. */
		BACKOFF,

		/** A {@code Retry-After} response header that was longer than the ramp. */
		RETRY_AFTER

	}

	/**
	 * Why a message is dead.
	 */
	enum DeadReason {

		/**
		 * The downstream answered with a status (and error code) that cannot succeed
		 * later.
		 */
		TERMINAL_STATUS,

		/** The configured maximum number of attempts was reached. */
		ATTEMPTS_EXHAUSTED,

		/** The next attempt would start after the delivery deadline. */
		DEADLINE_EXCEEDED,

		/**
		 * The stored request cannot be read or sent, e.g. a row edited by hand; it goes
		 * dead on its first attempt without reaching the downstream or the policy.
		 */
		INVALID_REQUEST

	}

}
