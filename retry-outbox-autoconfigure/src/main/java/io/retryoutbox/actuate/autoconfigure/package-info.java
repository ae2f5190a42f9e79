/**
 * Auto-configuration of the actuator endpoint and health indicator of retry-outbox.
 */
@NullMarked
package io.retryoutbox.actuate.autoconfigure;

import org.jspecify.annotations.NullMarked;
