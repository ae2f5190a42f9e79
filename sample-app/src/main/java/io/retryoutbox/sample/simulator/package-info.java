/**
 * A simulated payments API that deduplicates by idempotency key and injects faults.
 */
@NullMarked
package io.retryoutbox.sample.simulator;

import org.jspecify.annotations.NullMarked;
