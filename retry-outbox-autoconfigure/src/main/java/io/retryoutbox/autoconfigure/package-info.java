/**
 * Auto-configuration for retry-outbox.
 */
@NullMarked
package io.retryoutbox.autoconfigure;

import org.jspecify.annotations.NullMarked;
