/**
 * The periodic deletion of old finished messages.
 */
@NullMarked
package io.retryoutbox.retention;

import org.jspecify.annotations.NullMarked;
