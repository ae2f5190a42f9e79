package io.retryoutbox.message;

/**
 * What one row of the attempt log records: an attempt's outcome, or an operator's replay.
 */
public enum AttemptOutcome {

	/** The attempt delivered the message. */
	DELIVERED,

	/** The attempt failed and the message stays {@code PENDING} for another one. */
	RETRY,

	/** The attempt failed for good, or the row could not be sent. */
	DEAD,

	/** An operator made the dead message {@code PENDING} again. */
	REPLAYED;

	/**
	 * What the attempt log records for an attempt after which the message has this
	 * status: the one place where a {@code PENDING} message reads as a retry.
	 * @param status the message's status after the attempt
	 * @return the outcome
	 */
	public static AttemptOutcome after(MessageStatus status) {
		return switch (status) {
			case PENDING -> RETRY;
			case DELIVERED -> DELIVERED;
			case DEAD -> DEAD;
			case IN_FLIGHT -> throw new IllegalArgumentException("An attempt never ends IN_FLIGHT");
		};
	}

}
