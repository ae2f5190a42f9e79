package io.retryoutbox;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import org.springframework.util.Assert;

/**
 * One delivery attempt of an outbox message, as seen by a {@link RetryPolicy}.
 *
 * @param messageId the id of the message, also sent as its idempotency key
 * @param destination the configured destination name
 * @param attempt the number of this attempt, starting at 1
 * @param createdAt when the message was enqueued
 * @param pausedFor how long its destination was paused since {@code createdAt} (by a
 * {@code Retry-After} or an open circuit, on any instance), up to the end of the current
 * pause if it is paused now: time in which the message could not be sent, which a
 * delivery deadline should not count
 */
public record DeliveryAttempt(UUID messageId, String destination, int attempt, Instant createdAt, Duration pausedFor) {

	public DeliveryAttempt {
		Assert.isTrue(!pausedFor.isNegative(), () -> "pausedFor must not be negative, was " + pausedFor);
	}

	/**
	 * Creates an attempt of a message whose destination was never paused.
	 * @param messageId the id of the message
	 * @param destination the configured destination name
	 * @param attempt the number of this attempt, starting at 1
	 * @param createdAt when the message was enqueued
	 */
	public DeliveryAttempt(UUID messageId, String destination, int attempt, Instant createdAt) {
		this(messageId, destination, attempt, createdAt, Duration.ZERO);
	}

	/**
	 * How long the message will have waited for delivery at {@code time}, counted from
	 * {@code createdAt} without the time its destination was paused.
	 * @param time e.g. when the next attempt would start
	 * @return the time spent of its delivery deadline
	 */
	public Duration unpausedAge(Instant time) {
		return Duration.between(this.createdAt, time).minus(this.pausedFor);
	}

}
