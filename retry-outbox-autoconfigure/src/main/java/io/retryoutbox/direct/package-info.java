/**
 * The relay's retry policy applied to calls that a service makes directly, outside the
 * outbox: a WebClient filter, a Spring Framework 7 {@code RetryPolicy}, and the parts the
 * spring-retry adapter builds on.
 */
@NullMarked
package io.retryoutbox.direct;

import org.jspecify.annotations.NullMarked;
