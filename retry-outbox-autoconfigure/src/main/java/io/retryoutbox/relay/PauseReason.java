package io.retryoutbox.relay;

/**
 * Why a destination is paused.
 */
public enum PauseReason {

	/** A 429 or 503 answer with {@code Retry-After} told every caller to wait. */
	RETRY_AFTER,

	/**
	 * Its circuit opened after consecutive transient failures, or a probe of the open
	 * circuit failed.
	 */
	CIRCUIT

}
