package io.retryoutbox.sample.simulator;

/**
 * A fault the simulator injects.
 */
public enum Fault {

	/** 503 with {@code Retry-After: 1}; the request is not processed. */
	UNAVAILABLE(false),

	/** 429 with a {@code Retry-After} HTTP-date; the request is not processed. */
	RATE_LIMITED(false),

	/** 409 with error code {@code RESOURCE_LOCKED}; the request is not processed. */
	LOCKED(false),

	/** The request is processed but answered only after the slow delay. */
	SLOW(false),

	/**
	 * The request is processed but the connection is dropped before the answer is
	 * complete: its status has gone out, half its body has not, so the relay records a
	 * success on the status and never sends it again.
	 */
	DROPPED(false),

	/** 400 for every request with the idempotency key. */
	BAD_REQUEST(true),

	/**
	 * 409 with error code {@code CONFLICT} for every request with the idempotency key.
	 */
	CONFLICT(true);

	private final boolean perKey;

	Fault(boolean perKey) {
		this.perKey = perKey;
	}

	/**
	 * Whether the fault answers a request without processing it.
	 * @return whether the request is refused
	 */
	public boolean refusesRequest() {
		return this == UNAVAILABLE || this == RATE_LIMITED || this == LOCKED;
	}

	/**
	 * Whether the fault is decided once per idempotency key rather than per request.
	 * @return whether the fault is decided per key
	 */
	public boolean isPerKey() {
		return this.perKey;
	}

}
