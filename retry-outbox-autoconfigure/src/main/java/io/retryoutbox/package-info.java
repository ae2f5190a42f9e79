/**
 * Public API of retry-outbox: the {@code Outbox}, its requests and the
 * {@code RetryPolicy}.
 */
@NullMarked
package io.retryoutbox;

import org.jspecify.annotations.NullMarked;
