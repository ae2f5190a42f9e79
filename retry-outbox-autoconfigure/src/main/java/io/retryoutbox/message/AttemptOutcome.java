package io.retryoutbox.message;

import io.retryoutbox.RetryDecision;

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
	 * The outcome of an attempt the policy decided on.
	 * @param decision the decision
	 * @return the outcome
	 */
	public static AttemptOutcome of(RetryDecision decision) {
		if (decision instanceof RetryDecision.Delivered) {
			return DELIVERED;
		}
		return (decision instanceof RetryDecision.Retry) ? RETRY : DEAD;
	}

}
