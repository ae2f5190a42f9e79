package io.retryoutbox.springretry;

import io.retryoutbox.direct.DestinationRetry;
import org.jspecify.annotations.Nullable;

import org.springframework.retry.RetryContext;
import org.springframework.retry.RetryPolicy;
import org.springframework.util.Assert;

/**
 * A destination's retry-outbox policy as spring-retry's {@link RetryPolicy}: a call is
 * retried while the destination's policy retries what the last attempt threw, a
 * {@code RestClientResponseException} or {@code WebClientResponseException} classified by
 * its status and error code, an I/O failure or a timeout as a failure to get a response;
 * any other exception is not retried. The attempt budget and the deadline are the
 * destination's. Pair it with {@link OutboxBackOffPolicy}, which waits as the policy
 * decided, {@code Retry-After} included.
 */
public final class OutboxRetryPolicy implements RetryPolicy {

	private final transient DestinationRetry retry;

	/**
	 * Creates the policy of a destination.
	 * @param retry the destination's retries
	 */
	public OutboxRetryPolicy(DestinationRetry retry) {
		Assert.notNull(retry, "'retry' must not be null");
		this.retry = retry;
	}

	@Override
	public boolean canRetry(RetryContext context) {
		return ((OutboxRetryContext) context).canRetry();
	}

	@Override
	public RetryContext open(@Nullable RetryContext parent) {
		return new OutboxRetryContext(parent, this.retry);
	}

	@Override
	public void close(RetryContext context) {
	}

	@Override
	public void registerThrowable(RetryContext context, @Nullable Throwable throwable) {
		((OutboxRetryContext) context).registerThrowable(throwable);
	}

	@Override
	public String toString() {
		return "OutboxRetryPolicy for destination '" + this.retry.destination() + "'";
	}

}
