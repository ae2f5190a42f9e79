package io.retryoutbox.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * The outcome of one attempt, to be written to the message's row and the attempt log.
 *
 * @param id the message id
 * @param status the new status: {@code PENDING} (retry), {@code DELIVERED} or
 * {@code DEAD}
 * @param nextAttemptAt when a retried message is due again, else {@code null}
 * @param statusCode the HTTP status received, or {@code null} if none
 * @param errorCode the error code found in the response body, or {@code null}
 * @param error a short description of the failure, or {@code null}
 * @param deadReason why the message is dead, or {@code null}
 * @param releasesKey whether the message stops holding its ordering key, so the next
 * message of the key may go: on delivery, and when a dead message must not block its key
 * @param startedAt when the attempt started, or {@code null} if unknown
 * @param duration how long the attempt took, or {@code null} if unknown
 * @param delay the wait chosen before the next attempt of a retried message, else
 * {@code null}
 * @param delayReason what set that wait ({@code BACKOFF} or {@code RETRY_AFTER}), else
 * {@code null}
 * @param errorBody the start of an error response's body, {@code null} for a 2xx response
 * or no response; the attempt log stores a redacted, truncated snippet of it
 */
public record Completion(UUID id, String status, @Nullable Instant nextAttemptAt, @Nullable Integer statusCode,
		@Nullable String errorCode, @Nullable String error, @Nullable String deadReason, boolean releasesKey,
		@Nullable Instant startedAt, @Nullable Duration duration, @Nullable Duration delay,
		@Nullable String delayReason, byte @Nullable [] errorBody) {

	/**
	 * Creates a completion without the details of the attempt.
	 * @param id the message id
	 * @param status the new status
	 * @param nextAttemptAt when a retried message is due again, else {@code null}
	 * @param statusCode the HTTP status received, or {@code null} if none
	 * @param errorCode the error code found in the response body, or {@code null}
	 * @param error a short description of the failure, or {@code null}
	 * @param deadReason why the message is dead, or {@code null}
	 * @param releasesKey whether the message stops holding its ordering key
	 */
	public Completion(UUID id, String status, @Nullable Instant nextAttemptAt, @Nullable Integer statusCode,
			@Nullable String errorCode, @Nullable String error, @Nullable String deadReason, boolean releasesKey) {
		this(id, status, nextAttemptAt, statusCode, errorCode, error, deadReason, releasesKey, null, null, null, null,
				null);
	}

	/**
	 * Returns this completion with when the attempt started and how long it took.
	 * @param startedAt when the attempt started
	 * @param duration how long it took
	 * @return a copy with the timing set
	 */
	public Completion timed(Instant startedAt, Duration duration) {
		return new Completion(this.id, this.status, this.nextAttemptAt, this.statusCode, this.errorCode, this.error,
				this.deadReason, this.releasesKey, startedAt, duration, this.delay, this.delayReason, this.errorBody);
	}

}
