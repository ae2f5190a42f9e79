package io.retryoutbox;

import java.time.Instant;
import java.util.UUID;

/**
 * One delivery attempt of an outbox message, as seen by a {@link RetryPolicy}.
 *
 * @param messageId the id of the message, also sent as its idempotency key
 * @param destination the configured destination name
 * @param attempt the number of this attempt, starting at 1
 * @param createdAt when the message was enqueued
 */
public record DeliveryAttempt(UUID messageId, String destination, int attempt, Instant createdAt) {

}
