package io.retryoutbox.message;

import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A row a relay claimed for one attempt: a message it can send, or one whose stored
 * request cannot be read.
 */
public sealed interface Claim permits ClaimedMessage, UnreadableMessage {

	/**
	 * The message id.
	 * @return the id
	 */
	UUID id();

	/**
	 * The destination name.
	 * @return the destination
	 */
	String destination();

	/**
	 * The ordering key.
	 * @return the key, or {@code null}
	 */
	@Nullable String orderingKey();

	/**
	 * The number of this attempt, starting at 1.
	 * @return the attempt
	 */
	int attempt();

}
