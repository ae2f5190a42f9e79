package io.retryoutbox.relay;

/**
 * Whether a destination takes requests on this instance.
 */
public enum DestinationState {

	/** Requests go up to its flow limit. */
	OPEN,

	/**
	 * A {@code Retry-After}, or its circuit after consecutive transient failures, made it
	 * wait; nothing is sent and its messages spend no attempts.
	 */
	PAUSED,

	/** The pause is over: one request at a time until one gets through. */
	PROBING

}
