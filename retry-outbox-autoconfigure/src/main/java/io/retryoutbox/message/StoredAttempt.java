package io.retryoutbox.message;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A row of the attempt log: one attempt of a message, or an operator's replay of it.
 *
 * @param attempt the number of the attempt; for a replay, the number of attempts made
 * before it
 * @param startedAt when the attempt started, or when the message was replayed
 * @param durationMillis how long the attempt took, or {@code null}
 * @param outcome what the attempt came to, or {@code REPLAYED}
 * @param statusCode the HTTP status received, or {@code null}
 * @param errorCode the error code found in the response body, or {@code null}
 * @param error a description of the failure, or {@code null}
 * @param responseSnippet the start of the error response body, secrets masked, or
 * {@code null}
 * @param delayMillis the wait chosen before the next attempt, or {@code null}
 * @param delayReason what set that wait: {@code BACKOFF} or {@code RETRY_AFTER}, or
 * {@code null}
 * @param actor who replayed the message, or {@code null}
 */
public record StoredAttempt(int attempt, Instant startedAt, @Nullable Long durationMillis, AttemptOutcome outcome,
		@Nullable Integer statusCode, @Nullable String errorCode, @Nullable String error,
		@Nullable String responseSnippet, @Nullable Long delayMillis, @Nullable String delayReason,
		@Nullable String actor) {

}
