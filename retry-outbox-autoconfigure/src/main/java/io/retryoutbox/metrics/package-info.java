/**
 * Micrometer metrics and observations of retry-outbox.
 */
@NullMarked
package io.retryoutbox.metrics;

import org.jspecify.annotations.NullMarked;
