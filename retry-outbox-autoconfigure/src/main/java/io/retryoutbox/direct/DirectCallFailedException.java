package io.retryoutbox.direct;

import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.RetryDecision;
import org.jspecify.annotations.Nullable;

/**
 * A direct call that ended without a response to hand to the caller: its retry budget
 * (attempts or deadline) is spent, the policy gave up on a failure to get a response, or
 * the application stopped while the call waited for its next attempt. It carries the last
 * attempt's outcome: the status, headers and body of the last response, or the exception.
 */
public class DirectCallFailedException extends RuntimeException {

	private final DirectCall.Verdict last;

	private final boolean stopped;

	DirectCallFailedException(DirectCall.Verdict last, boolean stopped) {
		super(message(last, stopped),
				(last.outcome() instanceof DeliveryOutcome.Failure failure) ? failure.cause() : null);
		this.last = last;
		this.stopped = stopped;
	}

	private static String message(DirectCall.Verdict last, boolean stopped) {
		String attempts = last.attempt() + ((last.attempt() == 1) ? " attempt" : " attempts");
		String why = (last.decision() instanceof RetryDecision.Dead dead) ? dead.reason() + ": " + dead.detail()
				: "the application is stopping; last: " + describe(last.outcome());
		return "Direct call to '" + last.destination() + "' " + (stopped ? "stopped" : "gave up") + " after " + attempts
				+ " (" + why + ")";
	}

	private static String describe(DeliveryOutcome outcome) {
		return (outcome instanceof DeliveryOutcome.Response response) ? "HTTP " + response.statusCode()
				: String.valueOf(((DeliveryOutcome.Failure) outcome).cause());
	}

	/**
	 * The destination that was called.
	 * @return the configured destination name
	 */
	public String getDestination() {
		return this.last.destination();
	}

	/**
	 * How many attempts were made.
	 * @return the number of attempts, at least 1
	 */
	public int getAttempts() {
		return this.last.attempt();
	}

	/**
	 * What the last attempt produced.
	 * @return the last response (status, headers, the start of its body) or failure
	 */
	public DeliveryOutcome getLastOutcome() {
		return this.last.outcome();
	}

	/**
	 * The policy's decision after the last attempt: a {@link RetryDecision.Dead}, or the
	 * {@link RetryDecision.Retry} that the stop cut short.
	 * @return the decision
	 */
	public RetryDecision getLastDecision() {
		return this.last.decision();
	}

	/**
	 * The status of the last response.
	 * @return the status code, or {@code null} if the last attempt got no response
	 */
	public @Nullable Integer getStatusCode() {
		return (this.last.outcome() instanceof DeliveryOutcome.Response response) ? response.statusCode() : null;
	}

	/**
	 * Whether the call ended because the application stopped, not by the policy.
	 * @return whether the application stopped the call
	 */
	public boolean isStopped() {
		return this.stopped;
	}

}
