/**
 * The relay that claims due messages and delivers them over HTTP.
 */
@NullMarked
package io.retryoutbox.relay;

import org.jspecify.annotations.NullMarked;
