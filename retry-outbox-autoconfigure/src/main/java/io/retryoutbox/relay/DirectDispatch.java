package io.retryoutbox.relay;

import java.time.Duration;

import io.retryoutbox.message.ClaimedMessage;
import org.jspecify.annotations.Nullable;

/**
 * Lets the relay of the instance that enqueues a message send it as soon as its
 * transaction commits, without claiming it first: the message is inserted already leased
 * to that relay, with its first attempt counted, and handed over after the commit.
 * <p>
 * It saves the claim (a statement and a row version per message) and the wait for the
 * next poll. What it changes in the guarantees is nothing: a message inserted leased but
 * never handed over (the transaction took too long, the instance stopped or died) is
 * taken over by any relay once its lease expires, as a claimed one is.
 */
public interface DirectDispatch {

	/**
	 * Takes a sending slot for a message of {@code destination} about to be inserted, if
	 * the relay runs and the destination takes requests now.
	 * @param destination the destination name
	 * @return the lease owner to insert the message with, or {@code null} to insert it
	 * pending, to be claimed
	 */
	@Nullable String reserve(String destination);

	/**
	 * How long the lease of a message inserted leased lasts.
	 * @return the lease timeout
	 */
	Duration leaseTimeout();

	/**
	 * Hands a message inserted leased over to the relay once its transaction committed;
	 * uses up the slot {@link #reserve} took.
	 * @param message the message, as a claim would have read it
	 */
	void handOver(ClaimedMessage message);

	/**
	 * Gives back the slot {@link #reserve} took for a message that is not handed over:
	 * its transaction rolled back, or it was inserted pending after all.
	 * @param destination the destination name it was reserved for
	 */
	void cancel(String destination);

}
