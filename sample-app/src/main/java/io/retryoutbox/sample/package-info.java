/**
 * The retry-outbox sample application.
 */
@NullMarked
package io.retryoutbox.sample;

import org.jspecify.annotations.NullMarked;
