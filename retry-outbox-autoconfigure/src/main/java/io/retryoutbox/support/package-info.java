/**
 * Small building blocks shared by the outbox's background work.
 */
@NullMarked
package io.retryoutbox.support;

import org.jspecify.annotations.NullMarked;
