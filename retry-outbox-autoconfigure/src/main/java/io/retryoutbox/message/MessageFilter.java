package io.retryoutbox.message;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * Which messages to list, replay or discard; a {@code null} component does not filter.
 *
 * @param status the status
 * @param destination the destination name
 * @param orderingKey the ordering key
 * @param deadReason why the message is dead, e.g. {@code TERMINAL_STATUS}
 * @param from the earliest enqueue time, inclusive
 * @param to the latest enqueue time, exclusive
 */
public record MessageFilter(@Nullable MessageStatus status, @Nullable String destination, @Nullable String orderingKey,
		@Nullable String deadReason, @Nullable Instant from, @Nullable Instant to) {

	/**
	 * Every message.
	 */
	public static final MessageFilter ALL = new MessageFilter(null, null, null, null, null, null);

}
