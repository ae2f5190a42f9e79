package io.retryoutbox.sample.order;

/**
 * The state of an {@link Order}.
 */
public enum OrderStatus {

	/** Placed; its charge is requested. */
	PLACED,

	/** Cancelled; its refund is requested. */
	CANCELLED

}
