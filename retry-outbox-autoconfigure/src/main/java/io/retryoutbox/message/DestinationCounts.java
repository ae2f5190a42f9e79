package io.retryoutbox.message;

/**
 * What waits in the outbox for one destination: the messages waiting for an attempt, and
 * the dead ones waiting for an operator.
 *
 * @param pending the number of {@code PENDING} messages
 * @param dead the number of {@code DEAD} messages
 */
public record DestinationCounts(long pending, long dead) {

	/**
	 * No message at all.
	 */
	public static final DestinationCounts NONE = new DestinationCounts(0, 0);

}
