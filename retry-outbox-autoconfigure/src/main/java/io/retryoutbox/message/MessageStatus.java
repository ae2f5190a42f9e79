package io.retryoutbox.message;

import io.retryoutbox.RetryDecision;

/**
 * Where a message is in its life. The names are what the {@code status} column holds:
 * <table>
 * <caption>Transitions</caption>
 * <tr>
 * <th>from</th>
 * <th>to</th>
 * <th>by</th>
 * </tr>
 * <tr>
 * <td>(new)</td>
 * <td>{@code PENDING}</td>
 * <td>enqueue</td>
 * </tr>
 * <tr>
 * <td>{@code PENDING}</td>
 * <td>{@code IN_FLIGHT}</td>
 * <td>a relay's claim, due heads only</td>
 * </tr>
 * <tr>
 * <td>{@code IN_FLIGHT}</td>
 * <td>{@code DELIVERED}, {@code PENDING} or {@code DEAD}</td>
 * <td>the attempt's outcome</td>
 * </tr>
 * <tr>
 * <td>{@code IN_FLIGHT}</td>
 * <td>{@code PENDING}</td>
 * <td>an expired lease, or a relay stopping</td>
 * </tr>
 * <tr>
 * <td>{@code DEAD}</td>
 * <td>{@code PENDING}</td>
 * <td>an operator's replay</td>
 * </tr>
 * <tr>
 * <td>{@code DEAD}, {@code DELIVERED}</td>
 * <td>(deleted)</td>
 * <td>discard, retention</td>
 * </tr>
 * </table>
 */
public enum MessageStatus {

	/** Waiting for an attempt, due at its next attempt time if it heads its key. */
	PENDING,

	/** Leased by a relay that is sending it. */
	IN_FLIGHT,

	/** Delivered; kept until retention deletes it. */
	DELIVERED,

	/** Given up on; kept until replayed, discarded or deleted by retention. */
	DEAD;

	/**
	 * The status a message takes after an attempt the policy decided on.
	 * @param decision the decision
	 * @return the new status
	 */
	public static MessageStatus after(RetryDecision decision) {
		if (decision instanceof RetryDecision.Delivered) {
			return DELIVERED;
		}
		return (decision instanceof RetryDecision.Retry) ? PENDING : DEAD;
	}

}
