package io.retryoutbox.springretry;

import java.time.Duration;

import io.retryoutbox.direct.DirectCall;

import org.springframework.retry.RetryContext;
import org.springframework.retry.backoff.BackOffContext;
import org.springframework.retry.backoff.BackOffInterruptedException;
import org.springframework.retry.backoff.BackOffPolicy;

/**
 * Waits before the next attempt as the destination's policy decided after the last one:
 * the backoff ramp with jitter added, and never less than the last response's
 * {@code Retry-After} (up to {@code retry-after-max}). The wait ends at once when the
 * application stops, with a {@link BackOffInterruptedException} whose cause is the last
 * attempt's exception. It works with the {@link RetryContext} of an
 * {@link OutboxRetryPolicy} only, which holds that decision.
 */
public final class OutboxBackOffPolicy implements BackOffPolicy {

	@Override
	public BackOffContext start(RetryContext context) {
		if (!(context instanceof OutboxRetryContext outboxContext)) {
			throw new IllegalStateException("OutboxBackOffPolicy needs the RetryContext of an OutboxRetryPolicy, was "
					+ context.getClass().getName() + ": give the RetryTemplate an OutboxRetryPolicy too");
		}
		return new Context(outboxContext);
	}

	@Override
	public void backOff(BackOffContext backOffContext) throws BackOffInterruptedException {
		OutboxRetryContext context = ((Context) backOffContext).retryContext();
		DirectCall.Verdict verdict = context.verdict();
		Duration delay = (verdict != null) ? verdict.delay() : Duration.ZERO;
		try {
			if (!context.retry().await(delay)) {
				throw new BackOffInterruptedException(
						"Direct call to '" + context.retry().destination() + "' stopped after "
								+ context.getRetryCount() + " attempts: the application is stopping",
						context.getLastThrowable());
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new BackOffInterruptedException("Interrupted while waiting for the next attempt", ex);
		}
	}

	private record Context(OutboxRetryContext retryContext) implements BackOffContext {

	}

}
