/**
 * Auto-configuration of the Micrometer metrics and observations of retry-outbox.
 */
@NullMarked
package io.retryoutbox.metrics.autoconfigure;

import org.jspecify.annotations.NullMarked;
