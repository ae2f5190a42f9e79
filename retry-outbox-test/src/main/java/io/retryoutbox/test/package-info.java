/**
 * Test support for services that use retry-outbox: {@link AutoConfigureRetryOutbox},
 * which keeps the relay from running in the background, a {@link TestOutboxClock} the
 * test moves forward, the {@link OutboxDrainer} that relays until nothing is due, and
 * {@link OutboxAssertions}.
 */
@NullMarked
package io.retryoutbox.test;

import org.jspecify.annotations.NullMarked;
