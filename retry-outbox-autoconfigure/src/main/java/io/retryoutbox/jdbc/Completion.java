package io.retryoutbox.jdbc;

import java.time.Instant;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * The outcome of one attempt, to be written to the message's row.
 *
 * @param id the message id
 * @param status the new status: {@code PENDING} (retry), {@code DELIVERED} or {@code DEAD}
 * @param nextAttemptAt when a retried message is due again, else {@code null}
 * @param statusCode the HTTP status received, or {@code null} if none
 * @param errorCode the error code found in the response body, or {@code null}
 * @param error a short description of the failure, or {@code null}
 * @param deadReason why the message is dead, or {@code null}
 * @param releasesKey whether the message stops holding its ordering key, so the next message
 * of the key may go: on delivery, and when a dead message must not block its key
 */
public record Completion(UUID id, String status, @Nullable Instant nextAttemptAt, @Nullable Integer statusCode,
		@Nullable String errorCode, @Nullable String error, @Nullable String deadReason, boolean releasesKey) {

}
