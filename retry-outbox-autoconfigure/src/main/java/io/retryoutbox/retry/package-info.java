/**
 * The default retry policy and its settings.
 */
@NullMarked
package io.retryoutbox.retry;

import org.jspecify.annotations.NullMarked;
