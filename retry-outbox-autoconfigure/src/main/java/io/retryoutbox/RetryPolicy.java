package io.retryoutbox;

/**
 * Decides what happens to an outbox message after one delivery attempt: delivered,
 * retried at a given time, or dead.
 * <p>
 * This is not Spring Framework's {@code org.springframework.core.retry.RetryPolicy},
 * which drives in-thread retries of a method call. retry-outbox never retries in a
 * thread: a retry leaves the row in the outbox table with a new due time, so waiting
 * survives restarts and never blocks shutdown. A policy must be a pure function of its
 * arguments, the clock and the random source it was built with.
 * <p>
 * Declare a bean of this type to replace the default policy.
 *
 * @see io.retryoutbox.retry.DefaultRetryPolicy
 * @see io.retryoutbox.direct.DirectRetries the same policy for calls made outside the
 * outbox
 */
@FunctionalInterface
public interface RetryPolicy {

	/**
	 * Decides the fate of a message after an attempt.
	 * @param attempt the message and the attempt that was just made
	 * @param outcome what the attempt produced
	 * @return the decision, never {@code null}
	 */
	RetryDecision decide(DeliveryAttempt attempt, DeliveryOutcome outcome);

}
