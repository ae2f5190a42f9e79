package io.retryoutbox.springretry;

import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.direct.DestinationRetry;
import io.retryoutbox.direct.DirectCall;
import org.jspecify.annotations.Nullable;

import org.springframework.retry.RetryContext;
import org.springframework.retry.context.RetryContextSupport;

/**
 * The state of one call under an {@link OutboxRetryPolicy}: the logical call and the
 * policy's verdict on its last attempt, which {@link OutboxBackOffPolicy} waits by.
 */
final class OutboxRetryContext extends RetryContextSupport {

	private final transient DestinationRetry retry;

	private final transient DirectCall call;

	private transient DirectCall.@Nullable Verdict verdict;

	OutboxRetryContext(@Nullable RetryContext parent, DestinationRetry retry) {
		super(parent);
		this.retry = retry;
		this.call = retry.begin();
	}

	@Override
	public void registerThrowable(@Nullable Throwable throwable) {
		super.registerThrowable(throwable);
		if (throwable == null) {
			return;
		}
		DeliveryOutcome outcome = this.retry.outcomeOf(throwable);
		this.verdict = (outcome != null) ? this.call.after(outcome) : null;
	}

	DestinationRetry retry() {
		return this.retry;
	}

	DirectCall.@Nullable Verdict verdict() {
		return this.verdict;
	}

	boolean canRetry() {
		return getLastThrowable() == null || (this.verdict != null && this.verdict.retries());
	}

}
