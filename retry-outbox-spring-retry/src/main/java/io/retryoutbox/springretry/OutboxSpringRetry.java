package io.retryoutbox.springretry;

import io.retryoutbox.direct.DirectRetries;

import org.springframework.retry.interceptor.RetryInterceptorBuilder;
import org.springframework.retry.interceptor.RetryOperationsInterceptor;
import org.springframework.retry.support.RetryTemplate;
import org.springframework.util.Assert;

/**
 * Builds spring-retry's retry parts from a destination's retry-outbox policy: a
 * {@link RetryTemplate} for direct calls, or an interceptor for
 * {@code @Retryable(interceptor = "...")}. Both retry as the relay retries the
 * destination's messages, from the same {@code retry-outbox.destinations.<name>}
 * configuration.
 */
public final class OutboxSpringRetry {

	private final DirectRetries retries;

	/**
	 * Creates the adapter.
	 * @param retries the direct retries, from the relay's policy
	 */
	public OutboxSpringRetry(DirectRetries retries) {
		Assert.notNull(retries, "'retries' must not be null");
		this.retries = retries;
	}

	/**
	 * The destination's policy.
	 * @param destination a destination configured under {@code retry-outbox.destinations}
	 * @return the policy
	 * @throws IllegalArgumentException if the destination is not configured
	 */
	public OutboxRetryPolicy retryPolicy(String destination) {
		return new OutboxRetryPolicy(this.retries.forDestination(destination));
	}

	/**
	 * The back-off that goes with {@link #retryPolicy(String)}.
	 * @return the back-off policy
	 */
	public OutboxBackOffPolicy backOffPolicy() {
		return new OutboxBackOffPolicy();
	}

	/**
	 * A template with the destination's policy and back-off; it rethrows the last
	 * attempt's exception once the policy stops retrying.
	 * @param destination a destination configured under {@code retry-outbox.destinations}
	 * @return the template
	 * @throws IllegalArgumentException if the destination is not configured
	 */
	public RetryTemplate retryTemplate(String destination) {
		RetryTemplate template = new RetryTemplate();
		template.setRetryPolicy(retryPolicy(destination));
		template.setBackOffPolicy(backOffPolicy());
		return template;
	}

	/**
	 * An interceptor for {@code @Retryable(interceptor = "beanName")}: declare it as a
	 * bean and name that bean.
	 * @param destination a destination configured under {@code retry-outbox.destinations}
	 * @return the interceptor
	 * @throws IllegalArgumentException if the destination is not configured
	 */
	public RetryOperationsInterceptor interceptor(String destination) {
		return RetryInterceptorBuilder.stateless().retryOperations(retryTemplate(destination)).build();
	}

}
