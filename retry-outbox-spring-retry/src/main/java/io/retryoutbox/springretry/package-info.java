/**
 * A destination's retry-outbox policy as spring-retry's {@code RetryPolicy} and
 * {@code BackOffPolicy}, for {@code RetryTemplate} and {@code @Retryable}.
 */
@NullMarked
package io.retryoutbox.springretry;

import org.jspecify.annotations.NullMarked;
