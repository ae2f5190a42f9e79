package io.retryoutbox.message;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A message as stored in the outbox table, for operators.
 *
 * @param id the message id
 * @param destination the destination name
 * @param method the HTTP method
 * @param path the path relative to the destination's base URL
 * @param headers the request headers, unmasked
 * @param contentType the body's content type, or {@code null}
 * @param bodySize the body's size in bytes, {@code 0} without a body
 * @param orderingKey the ordering key, or {@code null}
 * @param idempotencyKey the idempotency key sent on every attempt
 * @param status the status
 * @param attempts the number of attempts made
 * @param createdAt when the message was enqueued (or last replayed)
 * @param nextAttemptAt when a {@code PENDING} message is due
 * @param lastAttemptAt when the last attempt started, or {@code null}
 * @param lastStatusCode the HTTP status of the last attempt, or {@code null}
 * @param lastErrorCode the error code of the last attempt, or {@code null}
 * @param lastError a description of the last failure, or {@code null}
 * @param deadReason why the message is dead, or {@code null}
 * @param deliveredAt when the message was delivered, or {@code null}
 * @param traceParent the W3C traceparent of the enqueuing request, or {@code null}
 */
public record StoredMessage(UUID id, String destination, String method, String path, Map<String, List<String>> headers,
		@Nullable String contentType, long bodySize, @Nullable String orderingKey, String idempotencyKey,
		MessageStatus status, int attempts, Instant createdAt, Instant nextAttemptAt, @Nullable Instant lastAttemptAt,
		@Nullable Integer lastStatusCode, @Nullable String lastErrorCode, @Nullable String lastError,
		@Nullable String deadReason, @Nullable Instant deliveredAt, @Nullable String traceParent) {

}
