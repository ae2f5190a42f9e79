/**
 * Actuator support: the {@code outbox} endpoint and the {@code retryOutbox} health
 * indicator.
 */
@NullMarked
package io.retryoutbox.actuate;

import org.jspecify.annotations.NullMarked;
