package io.retryoutbox.direct;

import io.retryoutbox.DeliveryOutcome;

import org.springframework.core.retry.RetryPolicy;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

/**
 * A destination's policy as Spring Framework 7's {@link RetryPolicy}.
 * <p>
 * Framework 7 asks {@link #shouldRetry(Throwable)} with the exception but the
 * {@link BackOffExecution} for the next wait without it, so the wait cannot depend on a
 * response: the back-off asks the destination's policy about a failure without a response
 * at the current attempt, which follows its ramp, jitter, attempt budget and deadline but
 * no {@code Retry-After}.
 */
final class CoreRetryPolicy implements RetryPolicy {

	private static final DeliveryOutcome NO_RESPONSE = new DeliveryOutcome.Failure(
			new IllegalStateException("A Spring Framework 7 BackOff is not told the attempt's outcome"));

	private final DestinationRetry retry;

	CoreRetryPolicy(DestinationRetry retry) {
		this.retry = retry;
	}

	/**
	 * Whether the destination's policy retries what the exception reports, judged as
	 * after a first attempt: the budget is the back-off's to end.
	 */
	@Override
	public boolean shouldRetry(Throwable throwable) {
		DeliveryOutcome outcome = this.retry.outcomeOf(throwable);
		return outcome != null && this.retry.begin().after(outcome).retries();
	}

	@Override
	public BackOff getBackOff() {
		return () -> {
			DirectCall call = this.retry.begin();
			return () -> {
				DirectCall.Verdict verdict = call.after(NO_RESPONSE);
				return verdict.retries() ? verdict.delay().toMillis() : BackOffExecution.STOP;
			};
		};
	}

	@Override
	public String toString() {
		return "retry-outbox policy of destination '" + this.retry.destination() + "'";
	}

}
