/**
 * Wake-ups across instances through PostgreSQL's LISTEN/NOTIFY: an enqueue's commit
 * notifies, and every relay listening wakes up instead of waiting for its next poll.
 */
@NullMarked
package io.retryoutbox.notify;

import org.jspecify.annotations.NullMarked;
