/**
 * Orders, whose payments are requested through the outbox.
 */
@NullMarked
package io.retryoutbox.sample.order;

import org.jspecify.annotations.NullMarked;
