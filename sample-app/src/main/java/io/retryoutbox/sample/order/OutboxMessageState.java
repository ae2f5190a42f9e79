package io.retryoutbox.sample.order;

import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * Where an outbox message stands, read from the outbox table for display.
 *
 * @param id the message id, also its idempotency key
 * @param path the request path
 * @param status {@code PENDING}, {@code IN_FLIGHT}, {@code DELIVERED} or {@code DEAD}
 * @param attempts the number of attempts made
 * @param lastStatusCode the HTTP status of the last attempt, if it got one
 * @param lastError what went wrong in the last attempt, if anything
 * @param deadReason why the message is dead, if it is
 */
public record OutboxMessageState(UUID id, String path, String status, int attempts, @Nullable Integer lastStatusCode,
		@Nullable String lastError, @Nullable String deadReason) {

}
