/**
 * The outbox message model that the relay, the operator read model, repair and retention
 * share: a message's statuses, what a relay claims and the outcome it records, and what
 * operators read.
 */
@NullMarked
package io.retryoutbox.message;

import org.jspecify.annotations.NullMarked;
